"""The terminal channel: `manage.py chat` (its observer prints the turn, `observer.py`) and the evaluation runs,
which deliver nothing anywhere: by default its observer shows nothing."""

from chatbot.channels.registry import ChannelSpec
from chatbot.models import Channel

CHANNEL = ChannelSpec(name=Channel.CLI)
