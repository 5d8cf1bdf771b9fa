"""The channels are packages behind one registry (chatbot/channels/registry.py, docs/integrations.md)."""

import ast
from importlib import import_module
from pathlib import Path

from django.conf import settings

from chatbot.channels import registry

CHANNELS_DIR = Path(registry.__file__).parent
# What only `chatbot.services.receive()` may call to store a parent's message: a channel that called them would
# skip what receive() does after (the session lock, the turn or the queue).
STORE_STEPS = {"store_received", "store_inbound", "_store_and_take"}


def test_every_listed_channel_package_is_registered_under_its_name():
    for path in settings.CHAT_CHANNELS:
        spec = import_module(path).CHANNEL
        assert registry.CHANNELS[spec.name] is spec
    assert set(registry.CHANNELS) == {"web", "chatwoot", "whatsapp", "cli"}


def test_a_channel_stores_a_parents_message_only_through_receive():
    offenders = []
    for module in sorted(CHANNELS_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            names = {alias.name for alias in node.names} if isinstance(node, ast.ImportFrom) else set()
            called = {node.attr} if isinstance(node, ast.Attribute) else set()
            offenders += [f"{module.relative_to(CHANNELS_DIR)}: {name}" for name in (names | called) & STORE_STEPS]
    assert offenders == []


def test_an_unknown_channel_can_do_nothing():
    spec = registry.spec_for("carrier-pigeon")
    assert (spec.staffed, spec.swept, spec.messaging_window, spec.delivery) == (False, False, False, None)
    assert "carrier-pigeon" not in registry.CHANNELS
