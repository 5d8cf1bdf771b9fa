"""The hand-written statements (chatbot.hotpath) fit the schema the migrations build.

PostgreSQL plans each one (PREPARE: parsed, every name and type resolved, nothing run). A model change that
leaves one behind fails here, by the statement's name and in the server's words, instead of as a binding error
deep inside a turn. Their names come from the models (`plumbing.rows.Names`), so a renamed column is followed;
a field a statement names that no longer exists stops `chatbot.hotpath` from importing, naming the field.
"""

import datetime as dt
import itertools
import re

import pytest
from django.core.exceptions import FieldDoesNotExist
from django.db import connection
from psycopg import pq

from bookings import selectors
from chatbot import hotpath
from chatbot.models import Message, ReasoningStep
from plumbing.rows import Names, insert_fields
from tests.factories import SchoolClosureFactory, TourSlotFactory


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
    "seats gone and closures": selectors.SEATS_GONE_AND_CLOSURES,
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


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_slot_read_gives_what_the_orm_gives(school):
    full = TourSlotFactory(school=school, capacity=3, seats_taken=2, seats_held=1)
    TourSlotFactory(school=school, starts_at=full.starts_at + dt.timedelta(hours=2), capacity=4, seats_taken=1)
    closed = SchoolClosureFactory(school=school, date=full.starts_at.date() + dt.timedelta(days=1)).date
    start, end = full.starts_at.date() - dt.timedelta(days=1), closed + dt.timedelta(days=1)
    since = dt.datetime.combine(start, dt.time.min, school.tz)
    until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, school.tz)

    slots, closures = selectors.seats_gone_and_closures(school, start, end)

    by_orm = list(selectors.seats_gone_and_closures_query(school, since, until, start, end))
    assert slots == {at: (capacity, gone) for at, capacity, gone, day in by_orm if day is None}
    assert slots[full.starts_at] == (3, 3) and len(slots) == 2
    assert closures == {day for *_, day in by_orm if day is not None} == {closed}


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
