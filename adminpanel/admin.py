"""Every admin page is registered from here: the console's own, and each app's (adminpanel/admins/), so the
apps never import the console; Django's admin autodiscovery imports this module."""

from django.contrib import admin

from adminpanel.admins import bookings, chatbot, crm, reminders, scheduling  # noqa: F401 (register the apps' admin pages)
from adminpanel.scenarios import ReviewScenarioAdmin, ReviewScenarioResultAdmin
from chatbot.models import ReviewScenario, ReviewScenarioResult

admin.site.register(ReviewScenario, ReviewScenarioAdmin)
admin.site.register(ReviewScenarioResult, ReviewScenarioResultAdmin)
