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

from django.db import connection, transaction
from django.db.models import Model

from bookings.models import School, TourBooking, TourSlot, WaitlistEntry
from chatbot.models import Conversation, Message, ReasoningStep
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


def _update_sql(obj: Model, field_names: Sequence[str]) -> tuple[str, list]:
    """UPDATE of the named fields of a stored instance (like `save(update_fields=...)`, without signals)."""
    fields = [obj._meta.get_field(name) for name in field_names]
    assignments = ", ".join(f"{_q(f.column)} = %s" for f in fields)
    return (f"UPDATE {_table(type(obj))} SET {assignments} WHERE {_q(obj._meta.pk.column)} = %s",
            [*_db_values(obj, fields, False), obj.pk])


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


# --- a turn's writes: its reply, reasoning steps and the conversation's totals ------------------
# The reply's row is written with the first steps that need it (a tool cycle's, or the answer's): a turn stores
# each phase in one statement on PostgreSQL, where the reply's INSERT (or UPDATE) is a data-modifying CTE whose
# id the steps' INSERT reads. Each such statement commits on its own: no BEGIN / COMMIT round trips.
REPLY_ANSWER_FIELDS = ("text", "language", "payload", "model", "latency_ms", "prompt_tokens", "completion_tokens",
                       "cost", "created_at")


@cache
def _steps_insert_sql(rows: int) -> str:
    """INSERT of `rows` reasoning steps whose message is the row of the CTE `reply`."""
    fields = _insert_fields(ReasoningStep)
    row = "(" + ", ".join("(SELECT id FROM reply)" if f.name == "message" else "%s" for f in fields) + ")"
    return (f"INSERT INTO {_table(ReasoningStep)} ({', '.join(_q(f.column) for f in fields)}) "
            f"VALUES {', '.join([row] * rows)}")


def _steps_values(steps: Sequence[ReasoningStep]) -> list:
    fields = [f for f in _insert_fields(ReasoningStep) if f.name != "message"]
    return [value for step in steps for value in _db_values(step, fields, True)]


def _reply_sql(reply: Message) -> tuple[str, list]:
    """The reply's INSERT (a new one, whole) or the UPDATE of its answer (stored by a tool cycle), RETURNING id."""
    if reply.pk is None:
        return _insert_sql(Message, 1, True), _db_values(reply, _insert_fields(Message), True)
    sql, params = _update_sql(reply, REPLY_ANSWER_FIELDS)
    return f"{sql} RETURNING {_q(Message._meta.pk.column)}", params


def _totals_sql(conversation_id: int, tokens: int, cost: Decimal, at: dt.datetime,
                outcome: str | None) -> tuple[str, list]:
    sql = (f"UPDATE {_table(Conversation)} SET total_tokens = total_tokens + %s, "
           "total_cost = total_cost + %s, last_message_at = %s" + (", outcome = %s" if outcome is not None else "")
           + " WHERE id = %s")
    params = [tokens, connection.ops.adapt_decimalfield_value(cost, 12, 6), _when(at)]
    return sql, params + ([outcome] if outcome is not None else []) + [conversation_id]


def _write_reply_and_steps(reply: Message, steps: Sequence[ReasoningStep], also: tuple[str, list] | None) -> None:
    """The reply's row, then the steps (and the `also` UPDATE): one statement on PostgreSQL, else in order."""
    reply_sql, params = _reply_sql(reply)
    if connection.vendor == "postgresql":
        ctes = f"reply AS ({reply_sql})" + (f", also AS ({also[0]})" if also else "")
        with connection.cursor() as cursor:
            cursor.execute(f"WITH {ctes} {_steps_insert_sql(len(steps))} "
                           f"RETURNING {_q(ReasoningStep._meta.get_field('message').column)}",
                           params + (also[1] if also else []) + _steps_values(steps))
            reply_id = cursor.fetchone()[0]
    else:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(reply_sql, params)
            reply_id = cursor.fetchone()[0]
            for step in steps:
                step.message_id = reply_id
            insert_many(steps)
            if also:
                cursor.execute(*also)
    if reply.pk is None:
        _stored(reply, reply_id)
    for step in steps:
        step.message = reply


def store_steps(reply: Message, steps: Sequence[ReasoningStep]) -> None:
    """A tool cycle's reasoning steps, and the reply's row first if no earlier cycle stored it (the steps are
    its steps). The reply is then stored, still without its answer."""
    if reply.pk is not None:
        for step in steps:
            step.message_id = reply.pk
        insert_many(steps)
        return
    _write_reply_and_steps(reply, steps, None)


def finish_turn(reply: Message, steps: Sequence[ReasoningStep], conversation_id: int, at: dt.datetime,
                outcome: str | None = None) -> None:
    """A turn's last writes: the reply with its answer (inserted whole, or its answer set on the row a tool cycle
    stored), its last steps (at least the answer's), and the conversation's totals (the reply's tokens and cost),
    activity and `outcome`. One statement on PostgreSQL; one transaction on SQLite."""
    totals = _totals_sql(conversation_id, reply.prompt_tokens + reply.completion_tokens, reply.cost, at, outcome)
    _write_reply_and_steps(reply, steps, totals)
