"""Transactions where a statement may be refused (a unique key) and the caller may or may not be in one."""

import contextlib
from contextlib import AbstractContextManager

from django.db import transaction


def savepoint_if_nested() -> AbstractContextManager:
    """Inside a caller's transaction, a savepoint, so a refused INSERT leaves that transaction usable; in
    autocommit, nothing: the statement commits on its own, with no BEGIN / COMMIT round trips around it."""
    return transaction.atomic() if transaction.get_connection().in_atomic_block else contextlib.nullcontext()
