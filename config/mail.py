"""The e-mail backend of a production without EMAIL_URL: it refuses to send.

Django's console backend would print every reminder (the parent's address, names and a working manage link)
into the worker's log. Refusing is an OSError like an SMTP server that is down, so a reminder is tried again and
then falls back to a staff note (chatbot/reminders); `check --deploy` reports the missing EMAIL_URL
(crm/external/checks.py).
"""

from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.message import EmailMessage


class EmailNotConfigured(ConnectionRefusedError):
    """No EMAIL_URL: there is no mail server to send to."""


class NotConfiguredBackend(BaseEmailBackend):
    def send_messages(self, email_messages: list[EmailMessage]) -> int:
        if email_messages and not self.fail_silently:
            raise EmailNotConfigured("EMAIL_URL is not set: e-mail is not configured, nothing was sent")
        return 0
