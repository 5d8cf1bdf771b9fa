"""Structured logging (structlog) with personal data masked.

Every log line, from our code or a library, passes through `mask_personal_data`,
so full phone numbers and e-mail addresses never reach the logs.
"""

import logging
import re
from typing import Any

import phonenumbers
import structlog

_EMAIL = re.compile(r"([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_PHONE = re.compile(r"(?<![\w/])(\+?\d[\d\s().-]{5,}\d)(?![\w/])")


def mask_phone(phone: str) -> str:
    """Keep the last three digits of a phone number: "+65 9123 4567" -> "+*******567"."""
    digits = re.sub(r"\D", "", phone or "")
    if len(digits) < 4:
        return "***" if digits else ""
    prefix = "+" if (phone or "").strip().startswith("+") else ""
    return f"{prefix}{'*' * (len(digits) - 3)}{digits[-3:]}"


# Secrets that travel in URLs: the Chatwoot webhook's URL secret, the signed manage and calendar links, the web
# chat's visitor token. Access logs and Django's request logs print paths; these parts never reach a log.
_URL_SECRETS = [
    (re.compile(r"(/webhooks/chatwoot/)[^/\s\"'?]+"), r"\1[secret]"),
    (re.compile(r"(/manage/)[^/\s\"'?]+"), r"\1[token]"),
    (re.compile(r"(/calendar/)[^/\s\"'?]+?(\.ics)"), r"\1[token]\2"),
    (re.compile(r"([?&]visitor=)[^&\s\"']+"), r"\1[token]"),
]


def redact_secrets(text: str) -> str:
    """Replace the secrets carried in URLs (see _URL_SECRETS) by a placeholder."""
    for pattern, replacement in _URL_SECRETS:
        text = pattern.sub(replacement, text)
    return text


def mask_email(email: str) -> str:
    """"ana.lee@example.com" -> "a***@example.com"."""
    return _EMAIL.sub(lambda m: f"{m.group(1)}***@{m.group(2)}", email or "")


_DIGITS = re.compile(r"(?:\d\D{0,3}){7}")  # seven digits close together: worth looking for a phone number
_CONTACT_KEYS = re.compile(r"phone|e_?mail", re.IGNORECASE)


def _mask_numbers(text: str, region: str) -> str:
    if not _DIGITS.search(text):
        return text
    for match in reversed(list(phonenumbers.PhoneNumberMatcher(text, region or None))):
        text = text[:match.start] + mask_phone(match.raw_string) + text[match.end:]
    return text


def mask_contact_details(value: Any, region: str = "SG") -> Any:
    """Phones and e-mails masked wherever they are in a structure (exports): fields named like a phone or an
    e-mail, and real phone numbers (read as `region` when local) and addresses in any text. Dates, times and
    references are left alone: only what the phonenumbers library recognises as a number is masked."""
    if isinstance(value, dict):
        return {key: (_mask_field(item, region) if isinstance(item, str) and _CONTACT_KEYS.search(str(key))
                      else mask_contact_details(item, region)) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [mask_contact_details(item, region) for item in value]
    if isinstance(value, str):
        return _mask_numbers(mask_email(value), region)
    return value


def _mask_field(value: str, region: str) -> str:
    if "*" in value:  # masked already
        return value
    return mask_email(value) if "@" in value else mask_phone(value)


def mask_text(text: str) -> str:
    """Mask every e-mail address and phone-like number in free text, and the secrets in URLs."""
    text = redact_secrets(text)
    text = _EMAIL.sub(lambda m: f"{m.group(1)}***@{m.group(2)}", text)
    return _PHONE.sub(lambda m: mask_phone(m.group(1)) if len(re.sub(r"\D", "", m.group(1))) >= 7 else m.group(1), text)


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, int | float | bool | type(None)):
        return value
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_masked(item) for item in value]
    # Objects passed as `extra` (django.request adds the request) would be rendered with their repr, which
    # carries the path: render them here, masked.
    return mask_text(str(value))


def mask_personal_data(_logger: Any, _name: str, event_dict: dict) -> dict:
    for key, value in list(event_dict.items()):
        if not key.startswith("_"):
            event_dict[key] = _masked(value)
    return event_dict


def _redact_daphne_access_log() -> None:
    """daphne writes its access log straight to a stream, past `logging`: redact the request line it writes.

    daphne has no hook for this, so its AccessLogGenerator.write_entry is wrapped (once, at import).
    """
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:  # pragma: no cover (daphne is a dependency)
        return
    original = AccessLogGenerator.write_entry
    if getattr(original, "redacts_secrets", False):
        return

    def write_entry(self, host, date, request, *args, **kwargs):
        return original(self, host, date, redact_secrets(request), *args, **kwargs)

    write_entry.redacts_secrets = True
    AccessLogGenerator.write_entry = write_entry


_redact_daphne_access_log()


_SHARED = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.stdlib.ExtraAdder(),
]


def formatter(json: bool = False) -> structlog.stdlib.ProcessorFormatter:
    """The logging formatter named in settings.LOGGING."""
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            mask_personal_data,
            renderer,
        ],
    )


structlog.configure(
    processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
    logger_factory=structlog.stdlib.LoggerFactory(),
    wrapper_class=structlog.stdlib.BoundLogger,
    cache_logger_on_first_use=True,
)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)


logging.captureWarnings(True)
