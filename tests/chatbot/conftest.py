"""Fixtures shared by the chatbot tests."""

import io

import pytest

from adminpanel import demo_content
from adminpanel.management.commands.seed_demo import Command
from bookings.models import School


@pytest.fixture
def demo_schools(db) -> dict[str, School]:
    """The two demo schools with their FAQ (and the shared entries), as seed_demo writes them."""
    command = Command(stdout=io.StringIO())
    schools = {spec["fields"]["slug"]: command.seed_school(spec) for spec in demo_content.SCHOOLS}
    command.seed_global_faqs()
    return schools


def faq_question(slug: str, key: str) -> str:
    """The demo school's FAQ question with that key."""
    spec = next(s for s in demo_content.SCHOOLS if s["fields"]["slug"] == slug)
    return next(entry["question"] for entry in spec["faqs"] if entry["key"] == key)
