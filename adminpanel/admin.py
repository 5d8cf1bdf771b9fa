"""The console's own admin registrations (conversations are registered in chatbot/admin.py)."""

from django.contrib import admin

from adminpanel.scenarios import ReviewScenarioAdmin, ReviewScenarioResultAdmin
from chatbot.models import ReviewScenario, ReviewScenarioResult

admin.site.register(ReviewScenario, ReviewScenarioAdmin)
admin.site.register(ReviewScenarioResult, ReviewScenarioResultAdmin)

from adminpanel.scheduling import admin as scheduling_admin  # noqa: E402, F401  (registers JobRun's admin)
