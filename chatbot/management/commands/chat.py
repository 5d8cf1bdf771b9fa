"""`python manage.py chat --school tampines`: talk to the concierge in a terminal.

Reads one message per line from stdin, so it can be scripted:
    printf 'hi\\nI want a tour\\n' | python manage.py chat --school tampines
"""

import asyncio
import dataclasses
import sys
import uuid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from rich.console import Console

from bookings.models import School
from chatbot.channels import registry, terminal
from chatbot.channels.terminal.observer import TerminalObserver
from chatbot.models import Channel
from chatbot.services import receive
from crm.identity import InvalidContactDetail, normalise_phone
from crm.services import find_or_create_contact


class Command(BaseCommand):
    help = "Chat with the concierge in the terminal, showing its reasoning steps as they happen."

    def add_arguments(self, parser):
        parser.add_argument("--school", required=True, help="School slug, e.g. tampines.")
        parser.add_argument("--phone", help="Chat as the contact with this phone number.")
        parser.add_argument("--name", default="", help="The contact's name (with --phone or for a new contact).")
        parser.add_argument("--quiet", action="store_true", help="Show only the replies, not the reasoning.")

    def handle(self, *args, school: str, phone: str | None, name: str, quiet: bool, **options):
        try:
            school_obj = School.objects.get(slug=school)
        except School.DoesNotExist:
            slugs = ", ".join(School.objects.values_list("slug", flat=True)) or "none (run seed_demo)"
            raise CommandError(f"No school '{school}'. Schools: {slugs}.") from None
        try:
            e164 = normalise_phone(phone, school_obj.default_phone_region) if phone else ""
        except InvalidContactDetail as exc:
            raise CommandError(exc.message) from None
        # The operator's own terminal: --phone picks the contact WhatsApp knows by that number.
        contact = find_or_create_contact(school=school_obj, verified_phone=e164, name=name,
                                         web_visitor_id="" if e164 else f"cli-{uuid.uuid4().hex[:12]}")
        console = Console(highlight=False, soft_wrap=True)
        registry.register(dataclasses.replace(terminal.CHANNEL, observer=TerminalObserver(console, not quiet)))
        settings.CHAT_BURST_WINDOW_SECONDS = 0  # one line, one turn
        interactive = sys.stdin.isatty()
        console.print(f"Chatting with {school_obj.name} as {contact.display_name} (model {settings.LLM_MODEL}). "
                      + ("Ctrl-D to quit." if interactive else ""), style="dim")
        asyncio.run(self._chat(school_obj, contact, console, interactive))

    async def _chat(self, school, contact, console: Console, interactive: bool) -> None:
        while True:
            try:
                line = await asyncio.to_thread(console.input, "You: ") if interactive else sys.stdin.readline()
            except EOFError:
                break
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if not interactive:
                console.print(f"You: {text}", markup=False, highlight=False)
            await receive(school=school, contact=contact, channel=Channel.CLI, text=text)
