from django.apps import AppConfig


class CrmConfig(AppConfig):
    name = "crm"
    verbose_name = "CRM"

    def ready(self) -> None:
        from crm import tasks  # noqa: F401 (connects the Pipedrive mirror to crm.signals.crm_rows_changed)
        from crm.external import checks  # noqa: F401 (registers the integration settings checks)
