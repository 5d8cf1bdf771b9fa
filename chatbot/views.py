"""The demo school page and the full-page chat."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from bookings.models import School


def demo_page(request: HttpRequest) -> HttpResponse:
    """A school's home page with the chat widget, as a school would embed it."""
    school = School.objects.filter(is_active=True).first()
    return render(request, "chatbot/demo.html", {"school": school, "schools": School.objects.filter(is_active=True)})


def chat_page(request: HttpRequest, school_slug: str) -> HttpResponse:
    school = get_object_or_404(School, slug=school_slug, is_active=True)
    return render(request, "chatbot/chat.html", {"school": school})
