"""The demo school page and the full-page chat."""

from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import translation

from bookings.models import School, TourBooking
from chatbot.agent.blocks import ICS_SALT
from chatbot.calendar import calendar_file


def demo_page(request: HttpRequest) -> HttpResponse:
    """A school's home page with the chat widget, as a school would embed it."""
    school = School.objects.filter(is_active=True).first()
    return render(request, "chatbot/demo.html", {"school": school, "schools": School.objects.filter(is_active=True)})


def chat_page(request: HttpRequest, school_slug: str) -> HttpResponse:
    """The full-page chat, in the browser's preferred language when the school offers it (the widget then
    follows the language the parent writes in)."""
    school = get_object_or_404(School, slug=school_slug, is_active=True)
    with translation.override(school.language_for(translation.get_language_from_request(request))):
        return render(request, "chatbot/chat.html", {"school": school})


def booking_ics(request: HttpRequest, token: str) -> HttpResponse:
    """The tour as a calendar file; the link is signed, so only whoever got the confirmation can open it."""
    try:
        reference = signing.loads(token, salt=ICS_SALT)
    except signing.BadSignature:
        raise Http404("Unknown calendar link.") from None
    booking = get_object_or_404(TourBooking.objects.select_related("school"), reference=reference)
    response = HttpResponse(calendar_file(booking), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="tour-{booking.reference}.ics"'
    return response
