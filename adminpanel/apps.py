from django.contrib.admin.apps import AdminConfig


class AdminpanelConfig(AdminConfig):
    """The staff console: Django's admin site with our own index and review pages."""

    default_site = "adminpanel.site.ConsoleAdminSite"
