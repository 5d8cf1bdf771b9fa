"""The offline policy model `offline/policy`: a deterministic dialogue policy served through litellm.

`register()` makes `litellm.acompletion(model="offline/policy", messages=..., tools=...)`
answer from the policy; call it once at import of the model layer (calling it
again changes nothing).
"""

import litellm

PROVIDER = "offline"


def register() -> None:
    """Add the offline provider to litellm's custom providers (idempotent) and warm the date parser."""
    from chatbot.agent.offline.provider import OfflinePolicy
    from chatbot.agent.offline.when import warm_up

    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": OfflinePolicy()})
    warm_up()
