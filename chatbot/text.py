"""Cleaning text that comes from outside (parents, models) before it is stored or acted on."""

from typing import Any


def without_nul(value: Any) -> Any:
    """Drop NUL characters from strings, also inside lists and dicts.

    PostgreSQL text and JSONB cannot hold U+0000; a parent or a model can still send it.
    """
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [without_nul(item) for item in value]
    if isinstance(value, dict):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    return value
