"""The channels: one registry of what each can do, read by everything that treats channels differently.

A channel is a package under `chatbot/channels/<name>/` (its inbound reading, its sender and client, its observer,
its tasks) that ends with one `ChannelSpec`, `CHANNEL`. The packages named in settings.CHAT_CHANNELS are loaded
when Django starts (`load`, from `ChatbotConfig.ready`), so every process (web, agent worker, Celery) knows every
channel, its observer and its Celery tasks. Nothing outside a channel's package names the channel to decide what
it can do: the turn runner asks for its observer, handoff whether staff answer there, the sweeper whether its
turns are swept, reminders and resends for its delivery, outreach whether WhatsApp's 24-hour window applies.

A new channel (say Telegram) is one package and one entry in CHAT_CHANNELS (docs/integrations.md).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module

from django.urls import URLPattern

from chatbot.channels.base import TurnObserver
from chatbot.channels.outbound import Sender
from crm.external.http import ApiClient


@dataclass(frozen=True)
class Delivery:
    """How a channel's stored replies reach the platform: posted through its API, exactly once
    (`chatbot.channels.outbound.deliver`), by its Celery task."""

    configured: Callable[[], bool]  # the platform's credentials are set here
    client: Callable[[], ApiClient]  # a client, used as a context manager
    sender: Callable[[ApiClient], Sender]
    task: object  # the Celery task that delivers one stored reply by id (`task.delay(message_id)`)
    text_via: str = ""  # how a tour reminder went, sent as a chat message (SentReminder.Via)
    template_via: str = ""  # ... or as an approved template outside WhatsApp's 24 hours


@dataclass(frozen=True)
class ChannelSpec:
    """What one channel can do. The defaults are a channel that only shows a turn where it runs."""

    name: str  # its `chatbot.models.Channel` value, stored on conversations and messages
    observer: TurnObserver = field(default_factory=TurnObserver)  # how it hears about a turn
    staffed: bool = False  # staff answer in the platform's own inbox: a parent may be handed to them
    swept: bool = False  # its turns run apart from the parent: the sweeper dispatches unanswered messages again
    messaging_window: bool = False  # WhatsApp's rule: free text only within 24 hours of the parent's last message
    delivery: Delivery | None = None  # replies posted through a platform API (None: the observer shows them)
    session_start: Callable[[int, dict], None] | None = None  # a conversation's first turn (message id, data)
    urls: tuple[URLPattern, ...] = ()  # its HTTP endpoints (webhooks), under the chatbot app
    websocket_urls: tuple[URLPattern, ...] = ()  # its websocket routes


CHANNELS: dict[str, ChannelSpec] = {}


def register(spec: ChannelSpec) -> None:
    """Add (or replace) a channel."""
    CHANNELS[spec.name] = spec


def load(modules: list[str]) -> None:
    """Register the `CHANNEL` of each channel package (settings.CHAT_CHANNELS)."""
    for path in modules:
        register(import_module(path).CHANNEL)


def spec_for(channel: str) -> ChannelSpec:
    """The channel's spec; an unknown channel (a conversation of a channel since removed) can do nothing."""
    return CHANNELS.get(channel) or ChannelSpec(channel)


def observer_for(channel: str) -> TurnObserver:
    return spec_for(channel).observer


def staffed(channel: str) -> bool:
    return spec_for(channel).staffed


def names(capability: Callable[[ChannelSpec], object]) -> list[str]:
    """The channels that have `capability` (e.g. `lambda spec: spec.swept`)."""
    return [name for name, spec in CHANNELS.items() if capability(spec)]


def delivering() -> dict[str, Delivery]:
    """The channels whose replies are posted through a platform API configured here."""
    return {name: spec.delivery for name, spec in CHANNELS.items() if spec.delivery and spec.delivery.configured()}


def urlpatterns() -> list[URLPattern]:
    return [url for spec in CHANNELS.values() for url in spec.urls]


def websocket_urlpatterns() -> list[URLPattern]:
    return [url for spec in CHANNELS.values() for url in spec.websocket_urls]
