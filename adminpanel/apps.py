from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AdminpanelConfig(AppConfig):
    """The staff console app: review pages, dashboard, seed_demo."""

    default = True
    name = "adminpanel"
    verbose_name = "Staff console"


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """Django's admin, running on our own admin site (named explicitly in INSTALLED_APPS)."""

    default = False
    default_site = "adminpanel.site.ConsoleAdminSite"
