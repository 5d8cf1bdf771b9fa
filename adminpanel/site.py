"""The admin site the staff console runs on: Django's admin plus the dashboard and the desk."""

import datetime as dt

from django.contrib import admin
from django.urls import path
from django.utils import timezone


class ConsoleAdminSite(admin.AdminSite):
    site_header = "School tour concierge"
    site_title = "Concierge console"
    index_title = "Admissions console"
    index_template = "adminpanel/index.html"

    def get_urls(self):
        from adminpanel import dashboard, desk

        wrap = self.admin_view
        site = {"site": self}
        return [
            path("dashboard/", wrap(dashboard.dashboard_view), site, name="dashboard"),
            path("desk/", wrap(desk.desk_view), site, name="desk"),
            path("desk/tours/<int:pk>/outcome/", wrap(desk.tour_outcome_view), site, name="desk_tour_outcome"),
            path("desk/tours/<int:pk>/cancel/", wrap(desk.tour_cancel_view), site, name="desk_tour_cancel"),
            path("desk/tours/<int:pk>/reschedule/", wrap(desk.tour_reschedule_view), site,
                 name="desk_tour_reschedule"),
            path("desk/callbacks/<int:pk>/assign/", wrap(desk.callback_assign_view), site,
                 name="desk_callback_assign"),
            path("desk/callbacks/<int:pk>/done/", wrap(desk.callback_done_view), site, name="desk_callback_done"),
            *super().get_urls(),
        ]

    @staticmethod
    def console_links(request) -> dict[str, bool]:
        """Which of the console's pages the user may open."""
        user = getattr(request, "user", None)
        active = bool(user and user.is_active)
        conversations = active and user.has_perm("chatbot.view_conversation")
        return {
            "dashboard": conversations,
            "review": conversations,
            "desk": active and user.has_perm("bookings.view_tourbooking"),
        }

    def each_context(self, request):
        context = super().each_context(request)
        context["console_links"] = self.console_links(request)
        return context

    def index(self, request, extra_context=None):
        """The admin index, with the console's three entry points and what is waiting in each."""
        from adminpanel import selectors
        from bookings.models import TourBooking
        from chatbot.models import Conversation

        links = self.console_links(request)  # not each_context: super().index() builds that (and the app list)
        waiting = {}
        if links["review"]:
            waiting["unrated"] = Conversation.objects.filter(rating="").count()
            waiting["handed_off"] = Conversation.objects.filter(status=Conversation.Status.HANDED_OFF).count()
            waiting["my_queue"] = Conversation.objects.filter(rating="", reviewer=request.user).count()
        if links["desk"]:
            now = timezone.now()
            waiting["tours_next_day"] = TourBooking.objects.filter(
                status=TourBooking.Status.SCHEDULED, starts_at__gte=now, starts_at__lt=now + dt.timedelta(days=1)
            ).count()
            waiting["callbacks_due"] = selectors.callbacks_due_count(now)
        return super().index(request, {"waiting": waiting, **(extra_context or {})})
