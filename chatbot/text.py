"""Cleaning text that comes from outside (parents, models) before it is stored or acted on."""

import json
from typing import Any


def without_nul(value: Any) -> Any:
    """Drop NUL characters from strings, also inside lists and dicts (a list or dict without any is returned
    as it is: JSON writes NUL as \\u0000, so one C-speed dump tells).

    PostgreSQL text and JSONB cannot hold U+0000; a parent or a model can still send it.
    """
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, (list, dict)) and _nul_free(value):
        return value
    if isinstance(value, list):
        return [without_nul(item) for item in value]
    if isinstance(value, dict):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    return value


def _nul_free(value: list | dict) -> bool:
    try:
        return "\\u0000" not in json.dumps(value, default=str)
    except (TypeError, ValueError):  # keys JSON cannot write, a cycle: look inside
        return False
