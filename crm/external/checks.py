"""System checks for the integration settings: catch a setup that would silently never answer."""

from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def integration_settings(app_configs, **kwargs) -> list:
    problems = []
    layer = settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", "")
    if settings.AGENT_WORKER and layer.endswith("InMemoryChannelLayer"):
        problems.append(Warning(
            "AGENT_WORKER is on but the channel layer is in-memory: webhook turns sent to `runworker agent` "
            "would never arrive.", hint="Set REDIS_URL, or AGENT_WORKER=False to run turns in the web process.",
            id="crm.W001"))
    if settings.CHATWOOT_WEBHOOK_SECRET and not (settings.CHATWOOT_URL and settings.CHATWOOT_API_TOKEN):
        problems.append(Warning(
            "The Chatwoot webhook is on but CHATWOOT_URL or CHATWOOT_API_TOKEN is empty: replies cannot be sent.",
            id="crm.W002"))
    if settings.WHATSAPP_TOKEN and not settings.WHATSAPP_APP_SECRET:
        problems.append(Warning(
            "WHATSAPP_TOKEN is set without WHATSAPP_APP_SECRET: every WhatsApp webhook will be refused (403).",
            id="crm.W003"))
    return problems


# Backends that deliver nothing: they print, file, keep or drop the message (or, ours, refuse it).
_UNDELIVERED_EMAIL = {
    "django.core.mail.backends.console.EmailBackend": "prints every e-mail (addresses, manage links) into the log",
    "django.core.mail.backends.filebased.EmailBackend": "writes every e-mail to a file",
    "django.core.mail.backends.locmem.EmailBackend": "keeps every e-mail in memory",
    "django.core.mail.backends.dummy.EmailBackend": "drops every e-mail",
    "config.mail.NotConfiguredBackend": "is not configured (EMAIL_URL is empty): no tour reminder can go out",
}


@register("email", deploy=True)
def email_delivery(app_configs, **kwargs) -> list:
    """`check --deploy`: production must send its e-mails, not print them into the worker's log."""
    problem = _UNDELIVERED_EMAIL.get(settings.EMAIL_BACKEND)
    if settings.DEBUG or problem is None:
        return []
    return [Error(f"E-mail {problem} ({settings.EMAIL_BACKEND}).",
                  hint="Set EMAIL_URL, e.g. smtp+tls://user:password@mail.example:587.", id="crm.E001")]
