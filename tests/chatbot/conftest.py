"""Fixtures shared by the chatbot tests."""

import io

import pytest

from adminpanel import demo_data
from adminpanel.management.commands.seed_demo import Command
from bookings.models import School
from chatbot.agent.tools import ToolContext
from tests.chatbot.tool_calls import tool_context


@pytest.fixture
def demo_schools(db) -> dict[str, School]:
    """The two demo schools with their FAQ (and the shared entries), as seed_demo writes them."""
    command = Command(stdout=io.StringIO())
    schools = {spec["school"]["slug"]: command.seed_school(spec) for spec in demo_data.schools()}
    command.seed_global_faqs()
    return schools


@pytest.fixture
def ctx(school, contact) -> ToolContext:
    """The tools' context for the contact's web conversation, as the loop sets it."""
    return tool_context(school, contact)


def faq_question(slug: str, key: str) -> str:
    """The demo school's FAQ question with that key."""
    return next(entry["question"] for entry in demo_data.school(slug)["faqs"] if entry["key"] == key)
