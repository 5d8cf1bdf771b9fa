"""The offline policy model `offline/policy`: a deterministic dialogue policy behind the model interface.

The agent loop calls it directly (`chatbot.agent.model` -> `provider.complete`), without litellm.
`register()` also makes `litellm.acompletion(model="offline/policy", messages=..., tools=...)`
answer from the policy, for code that calls litellm itself (calling it again changes nothing).
"""

PROVIDER = "offline"


def register() -> None:
    """Add the offline provider to litellm's custom providers (idempotent)."""
    import litellm

    from chatbot.agent.offline.via_litellm import OfflinePolicy

    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": OfflinePolicy()})
