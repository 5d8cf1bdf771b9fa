"""The admin site the staff console runs on."""

from django.contrib import admin


class ConsoleAdminSite(admin.AdminSite):
    site_header = "School tour concierge"
    site_title = "Concierge console"
    index_title = "Admissions console"
