"""Issue 12, "Trust": each attack from the report is a test here (docs/identity.md, docs/trust.md)."""

from tests.integrations.conftest import (  # noqa: F401 (fixtures reused by the attack tests)
    chatwoot,
    echo_model,
    http,
    local_http,
    turns,
    whatsapp,
)
