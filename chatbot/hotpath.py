"""The statements every turn runs, in hand-written SQL: no ORM compiling per call.

Built by the ORM, each of a turn's dozen statements costs 0.5 to 3 ms of Python (building and compiling the
query, then the instances); written here, about 0.2 ms (`python manage.py bench --only turn_overhead`). The
SQL is portable (PostgreSQL, and SQLite 3.35+ for RETURNING), its table and column names come from the models
(`_meta`), and rows come back as model instances through the backend's own converters, so the models stay the
schema and callers keep working with instances. Only the hot path lives here (`chatbot.services`,
`chatbot.agent.loop`); everything else uses the ORM.
"""

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from functools import cache

from django.db import connection
from django.db.models import Model

from bookings.models import School, TourBooking, TourSlot, WaitlistEntry
from chatbot.models import Conversation, Message
from crm.models import Child, Contact

FACT_HINTS = ("has_upcoming_tours", "has_children", "has_waitlist_entries")


# --- generic: columns, rows -> instances, INSERT and UPDATE of instances ------------------------
def _q(name: str) -> str:
    return connection.ops.quote_name(name)


@cache
def _table(model: type[Model]) -> str:
    return _q(model._meta.db_table)


@cache
def _columns(model: type[Model], alias: str) -> str:
    """The model's concrete columns, qualified by `alias`, in `_meta.concrete_fields` order (what `_instances`
    reads back)."""
    return ", ".join(f"{alias}.{_q(field.column)}" for field in model._meta.concrete_fields)


@cache
def _reader(model: type[Model]) -> tuple[list[str], list[tuple[int, list, object]]]:
    """The attribute names `from_db` takes, and (position, converters, column) of the columns needing conversion."""
    converters = []
    for position, field in enumerate(model._meta.concrete_fields):
        col = field.get_col(model._meta.db_table)
        convs = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
        if convs:
            converters.append((position, convs, col))
    return [field.attname for field in model._meta.concrete_fields], converters


def _instances(rows: Iterable[Sequence], *models: type[Model]) -> list[list[Model]]:
    """Each row, whose columns are `_columns(model)` of each model in turn (and then any extra values), as
    instances, then the extra values: [[instance, ..., extra, ...], ...]."""
    out = []
    for row in rows:
        values, start, built = list(row), 0, []
        for model in models:
            attnames, converters = _reader(model)
            chunk = values[start:start + len(attnames)]
            for position, convs, col in converters:
                for converter in convs:
                    chunk[position] = converter(chunk[position], col, connection)
            built.append(model.from_db(connection.alias, attnames, chunk))
            start += len(attnames)
        out.append(built + values[start:])
    return out


@cache
def _insert_fields(model: type[Model]) -> list:
    return [field for field in model._meta.concrete_fields if not field.primary_key]


def _db_values(obj: Model, fields: Iterable, add: bool) -> list:
    return [field.get_db_prep_save(field.pre_save(obj, add), connection) for field in fields]


@cache
def _insert_sql(model: type[Model], rows: int, returning: bool) -> str:
    fields = _insert_fields(model)
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (f"INSERT INTO {_table(model)} ({', '.join(_q(f.column) for f in fields)}) "
           f"VALUES {', '.join([row] * rows)}")
    return sql + f" RETURNING {_q(model._meta.pk.column)}" if returning else sql


def _stored(obj: Model, pk: int) -> Model:
    """`obj` as `save()` leaves a new instance: with its primary key, no longer adding, on this database."""
    obj.pk = pk
    obj._state.adding, obj._state.db = False, connection.alias
    return obj


def insert(obj: Model) -> Model:
    """INSERT one new instance (auto_now_add and defaults applied as `save()` would); sets its primary key."""
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(type(obj), 1, True), _db_values(obj, _insert_fields(type(obj)), True))
        return _stored(obj, cursor.fetchone()[0])


def insert_many(objs: Sequence[Model]) -> None:
    """INSERT new instances of one model in one statement (their primary keys are not read back)."""
    if not objs:
        return
    fields = _insert_fields(type(objs[0]))
    values = [value for obj in objs for value in _db_values(obj, fields, True)]
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(type(objs[0]), len(objs), False), values)


def update(obj: Model, field_names: Sequence[str]) -> None:
    """UPDATE the named fields of a stored instance (like `save(update_fields=...)`, without signals)."""
    fields = [obj._meta.get_field(name) for name in field_names]
    assignments = ", ".join(f"{_q(f.column)} = %s" for f in fields)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {_table(type(obj))} SET {assignments} "
                       f"WHERE {_q(obj._meta.pk.column)} = %s", [*_db_values(obj, fields, False), obj.pk])


def _when(value: dt.datetime) -> object:
    return connection.ops.adapt_datetimefield_value(value)


# --- the turn's statements ----------------------------------------------------------------------
def open_conversation(school_id: int, contact_id: int, channel: str, external_id: str = "") -> Conversation | None:
    """The contact's latest active or handed-off conversation on the channel, with its school and contact."""
    sql = (f"SELECT {_columns(Conversation, 'c')}, {_columns(School, 's')}, {_columns(Contact, 'p')} "
           f"FROM {_table(Conversation)} c JOIN {_table(School)} s ON s.id = c.school_id "
           f"JOIN {_table(Contact)} p ON p.id = c.contact_id "
           "WHERE c.school_id = %s AND c.contact_id = %s AND c.channel = %s AND c.status IN (%s, %s)"
           + (" AND c.external_id = %s" if external_id else "") + " ORDER BY c.started_at DESC LIMIT 1")
    params = [school_id, contact_id, channel, Conversation.Status.ACTIVE, Conversation.Status.HANDED_OFF]
    with connection.cursor() as cursor:
        cursor.execute(sql, params + ([external_id] if external_id else []))
        rows = _instances(cursor.fetchall(), Conversation, School, Contact)
    if not rows:
        return None
    conversation, school, contact = rows[0]
    conversation.school, conversation.contact = school, contact
    return conversation


def store_message(message: Message) -> Message:
    """INSERT a new message and make it its conversation's latest activity (what the idle timeout measures):
    one statement, one commit on PostgreSQL; two on SQLite, which has no INSERT inside WITH."""
    if connection.vendor != "postgresql":
        insert(message)
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {_table(Conversation)} SET last_message_at = %s WHERE id = %s",
                           [_when(message.created_at), message.conversation_id])
        return message
    sql = (f"WITH stored AS ({_insert_sql(Message, 1, False)} RETURNING id, created_at) "
           f"UPDATE {_table(Conversation)} SET last_message_at = stored.created_at FROM stored "
           f"WHERE {_table(Conversation)}.id = %s RETURNING stored.id")
    with connection.cursor() as cursor:
        cursor.execute(sql, [*_db_values(message, _insert_fields(Message), True), message.conversation_id])
        return _stored(message, cursor.fetchone()[0])


def _unanswered(alias: str) -> str:
    """WHERE conditions of a contact's unanswered messages in bot-run conversations (param: the contact).

    On PostgreSQL the contact's conversations are read first (`= ANY(ARRAY(...))`, one InitPlan through the
    contact + status index), then the partial index `message_unanswered` per conversation, whatever the
    statistics say. Written as `IN (SELECT ...)` it is planned as a join, and with the statistics of a
    table that was nearly empty when last analysed (a new school, a fresh database) the planner scanned
    every unanswered message of every contact for each one: a burst of 500 new parents became quadratic.
    """
    conversations = f"SELECT id FROM {_table(Conversation)} WHERE contact_id = %s AND status = %s"
    among = f"= ANY(ARRAY({conversations}))" if connection.vendor == "postgresql" else f"IN ({conversations})"
    return f"{alias}.role = %s AND {alias}.processed_at IS NULL AND {alias}.conversation_id {among}"


def _unanswered_params(contact_id: int) -> list:
    return [Message.Role.USER, contact_id, Conversation.Status.ACTIVE]


def claim_batch(contact_id: int, now: dt.datetime) -> list[Message]:
    """Take the contact's unanswered messages of the conversation with the oldest one, oldest first: one
    statement that marks them processed at `now` and returns them. A message another turn took first is not
    returned (it no longer matches `processed_at IS NULL`). Each carries `fact_hints`: whether the contact has
    upcoming tours, children, live waitlist entries (read in the same statement; see chatbot.agent.prompt)."""
    message = _table(Message)
    hints = (
        f"EXISTS (SELECT 1 FROM {_table(TourBooking)} WHERE contact_id = %s AND status = %s AND starts_at >= %s), "
        f"EXISTS (SELECT 1 FROM {_table(Child)} WHERE contact_id = %s), "
        f"EXISTS (SELECT 1 FROM {_table(WaitlistEntry)} w WHERE w.contact_id = %s AND w.status IN (%s, %s) "
        f"AND w.slot_id IN (SELECT id FROM {_table(TourSlot)} WHERE starts_at > %s))"
    )
    sql = (f"UPDATE {message} SET processed_at = %s WHERE processed_at IS NULL AND role = %s "
           f"AND conversation_id = (SELECT m.conversation_id FROM {message} m WHERE {_unanswered('m')} "
           f"ORDER BY m.created_at, m.id LIMIT 1) "
           f"RETURNING {', '.join(_q(f.column) for f in Message._meta.concrete_fields)}, {hints}")
    when = _when(now)
    params = [when, Message.Role.USER, *_unanswered_params(contact_id),
              contact_id, TourBooking.Status.SCHEDULED, when, contact_id,
              contact_id, WaitlistEntry.Status.WAITING, WaitlistEntry.Status.OFFERED, when]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = _instances(cursor.fetchall(), Message)
    batch = []
    for message_row, *flags in rows:
        message_row.fact_hints = dict(zip(FACT_HINTS, map(bool, flags), strict=True))
        batch.append(message_row)
    return sorted(batch, key=lambda m: (m.created_at, m.pk))


def has_unanswered(contact_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {_table(Message)} m WHERE {_unanswered('m')} LIMIT 1",
                       _unanswered_params(contact_id))
        return cursor.fetchone() is not None


def earlier_messages(conversation: Conversation, before_ids: set[int]) -> list[Message]:
    """The conversation's answered messages not folded into its summary, oldest first, except `before_ids`.

    A parent's message staff handled during a handoff is theirs: the model never sees it, or it would answer it.
    """
    sql = (f"SELECT {_columns(Message, 'm')} FROM {_table(Message)} m WHERE m.conversation_id = %s "
           "AND m.text <> '' AND (m.role = %s OR (m.role = %s AND m.processed_at IS NOT NULL "
           "AND m.handled_by_staff = %s))")
    params = [conversation.pk, Message.Role.ASSISTANT, Message.Role.USER, False]
    if before_ids:
        sql += f" AND m.id NOT IN ({', '.join(['%s'] * len(before_ids))})"
        params += sorted(before_ids)
    if conversation.summary_until:
        sql += " AND m.created_at > %s"
        params.append(_when(conversation.summary_until))
    with connection.cursor() as cursor:
        cursor.execute(sql + " ORDER BY m.created_at, m.id", params)
        return [row[0] for row in _instances(cursor.fetchall(), Message)]


def add_turn_totals(conversation_id: int, tokens: int, cost: Decimal, at: dt.datetime,
                    outcome: str | None = None) -> None:
    """A finished turn's tokens and cost added to the conversation's totals, its activity, and its outcome."""
    sql = (f"UPDATE {_table(Conversation)} SET total_tokens = total_tokens + %s, "
           "total_cost = total_cost + %s, last_message_at = %s" + (", outcome = %s" if outcome is not None else "")
           + " WHERE id = %s")
    params = [tokens, connection.ops.adapt_decimalfield_value(cost, 12, 6), _when(at)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params + ([outcome] if outcome is not None else []) + [conversation_id])
