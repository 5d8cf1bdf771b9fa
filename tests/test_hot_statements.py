"""The hand-written statements (chatbot.hotpath) fit the schema the migrations build.

PostgreSQL plans each one (PREPARE: parsed, every name and type resolved, nothing run). A model change that
leaves one behind fails here, by the statement's name and in the server's words, instead of as a binding error
deep inside a turn. Their names come from the models (`plumbing.rows.Names`), so a renamed column is followed;
a field a statement names that no longer exists stops `chatbot.hotpath` from importing, naming the field.
"""

import itertools
import re

import pytest
from django.core.exceptions import FieldDoesNotExist
from django.db import connection
from psycopg import pq

from chatbot import hotpath
from chatbot.models import Message, ReasoningStep
from plumbing.rows import Names, insert_fields


def _shapes() -> list[hotpath.WriteShape]:
    """Every shape a turn's write takes: a tool round's steps (answer=False), the answer (with or without an
    outcome), each with or without the checks and the fence."""
    shapes = []
    for new_reply, answer, outcome, check, only_if_none, fenced in itertools.product([True, False], repeat=6):
        if (outcome and not answer) or (only_if_none and not check):
            continue
        shapes.append(hotpath.WriteShape(new_reply, answer, outcome, check, only_if_none, fenced))
    return shapes


STATEMENTS = {
    "store in the open conversation": hotpath._STORE_IN_OPEN[False],
    "store in the open conversation, by external id": hotpath._STORE_IN_OPEN[True],
    "store a message": hotpath._STORE_MESSAGE,
    "claim with history": hotpath._CLAIM_WITH_HISTORY[True],
    "claim with history, in a transaction": hotpath._CLAIM_WITH_HISTORY[False],
    **{f"write {shape}": hotpath.write_sql(shape) for shape in _shapes()},
}


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("name", list(STATEMENTS))
def test_the_statement_is_planned_against_the_migrated_schema(name):
    numbers = itertools.count(1)
    text = re.sub("%s", lambda _: f"${next(numbers)}", STATEMENTS[name])
    connection.ensure_connection()

    planned = connection.connection.pgconn.prepare(b"", text.encode())

    assert planned.status == pq.ExecStatus.COMMAND_OK, (
        f"the hand-written statement {name!r} no longer fits the schema: "
        f"{planned.error_message.decode()}\n{STATEMENTS[name]}")


def test_a_name_a_statement_uses_comes_from_the_model():
    names = Names(Message)

    assert (names.table, names.processed_at, names.conversation) == (
        f'"{Message._meta.db_table}"', f'"{Message._meta.get_field("processed_at").column}"', '"conversation_id"')
    with pytest.raises(FieldDoesNotExist, match="Message has no field named 'taken_at'"):
        _ = names.taken_at


def test_the_inserts_write_every_column_the_database_does_not_fill():
    """A field with `db_default` is the database's to fill (as `save()` leaves it); every other column is written,
    with its field's own default when the instance has none."""
    for model in (Message, ReasoningStep):
        written = {field.column for field in insert_fields(model)}
        assert written == {field.column for field in model._meta.concrete_fields
                           if not field.primary_key and field.has_db_default() is False}
