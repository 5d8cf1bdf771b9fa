"""Structured logging (structlog) with personal data masked.

Every log line, from our code or a library, passes through `mask_personal_data`,
so full phone numbers and e-mail addresses never reach the logs.
"""

import logging
import re
from typing import Any

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


def mask_text(text: str) -> str:
    """Mask every e-mail address and phone-like number in free text."""
    text = _EMAIL.sub(lambda m: f"{m.group(1)}***@{m.group(2)}", text)
    return _PHONE.sub(lambda m: mask_phone(m.group(1)) if len(re.sub(r"\D", "", m.group(1))) >= 7 else m.group(1), text)


def mask_personal_data(_logger: Any, _name: str, event_dict: dict) -> dict:
    for key, value in list(event_dict.items()):
        if isinstance(value, str):
            event_dict[key] = mask_text(value)
    return event_dict


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
