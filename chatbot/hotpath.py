"""The statements every turn runs, in hand-written SQL: no ORM compiling per call.

Built by the ORM, each of a turn's dozen statements costs 0.5 to 3 ms of Python (building and compiling the
query, then the instances); written here, about 0.2 ms (`python manage.py bench --only turn_overhead`). The
SQL is portable (PostgreSQL, and SQLite 3.35+ for RETURNING), its table and column names come from the models
(`_meta`), and rows come back as model instances through the backend's own converters, so the models stay the
schema and callers keep working with instances. On PostgreSQL they run through `config.rows.hot_cursor`: each is
prepared once per pooled connection and planned once (see `config.postgresql`). Only the hot path lives here
(`chatbot.services`, `chatbot.agent.loop`); everything else uses the ORM.
"""

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from functools import cache

from django.db import connection, transaction

from bookings.models import School, TourBooking, TourSlot, WaitlistEntry
from chatbot.models import Conversation, Message, ReasoningStep
from config.rows import (
    columns,
    db_values,
    hot_cursor,
    insert,
    insert_fields,
    insert_many,
    insert_sql,
    instances,
    quote,
    stored,
    table,
    update_sql,
    when,
)
from crm.models import Child, Contact

FACT_HINTS = ("has_upcoming_tours", "has_children", "has_waitlist_entries")


# --- the turn's statements ----------------------------------------------------------------------
def open_conversation(school_id: int, contact_id: int, channel: str, external_id: str = "") -> Conversation | None:
    """The contact's latest active or handed-off conversation on the channel, with its school and contact."""
    sql = (f"SELECT {columns(Conversation, 'c')}, {columns(School, 's')}, {columns(Contact, 'p')} "
           f"FROM {table(Conversation)} c JOIN {table(School)} s ON s.id = c.school_id "
           f"JOIN {table(Contact)} p ON p.id = c.contact_id "
           "WHERE c.school_id = %s AND c.contact_id = %s AND c.channel = %s AND c.status IN (%s, %s)"
           + (" AND c.external_id = %s" if external_id else "") + " ORDER BY c.started_at DESC LIMIT 1")
    params = [school_id, contact_id, channel, Conversation.Status.ACTIVE, Conversation.Status.HANDED_OFF]
    with hot_cursor() as cursor:
        cursor.execute(sql, params + ([external_id] if external_id else []))
        rows = instances(cursor.fetchall(), Conversation, School, Contact)
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
        with hot_cursor() as cursor:
            cursor.execute(f"UPDATE {table(Conversation)} SET last_message_at = %s WHERE id = %s",
                           [when(message.created_at), message.conversation_id])
        return message
    sql = (f"WITH stored AS ({insert_sql(Message, 1, False)} RETURNING id, created_at) "
           f"UPDATE {table(Conversation)} SET last_message_at = stored.created_at FROM stored "
           f"WHERE {table(Conversation)}.id = %s RETURNING stored.id")
    with hot_cursor() as cursor:
        cursor.execute(sql, [*db_values(message, insert_fields(Message), True), message.conversation_id])
        return stored(message, cursor.fetchone()[0])


def _unanswered(alias: str) -> str:
    """WHERE conditions of a contact's unanswered messages in bot-run conversations (param: the contact).

    On PostgreSQL the contact's conversations are read first (`= ANY(ARRAY(...))`, one InitPlan through the
    contact + status index), then the partial index `message_unanswered` per conversation, whatever the
    statistics say. Written as `IN (SELECT ...)` it is planned as a join, and with the statistics of a
    table that was nearly empty when last analysed (a new school, a fresh database) the planner scanned
    every unanswered message of every contact for each one: a burst of 500 new parents became quadratic.
    """
    conversations = f"SELECT id FROM {table(Conversation)} WHERE contact_id = %s AND status = %s"
    among = f"= ANY(ARRAY({conversations}))" if connection.vendor == "postgresql" else f"IN ({conversations})"
    return f"{alias}.role = %s AND {alias}.processed_at IS NULL AND {alias}.conversation_id {among}"


def _unanswered_params(contact_id: int) -> list:
    return [Message.Role.USER, contact_id, Conversation.Status.ACTIVE]


def claim_batch(contact_id: int, now: dt.datetime) -> list[Message]:
    """Take the contact's unanswered messages of the conversation with the oldest one, oldest first: one
    statement that marks them processed at `now` and returns them. A message another turn took first is not
    returned (it no longer matches `processed_at IS NULL`). Each carries `fact_hints`: whether the contact has
    upcoming tours, children, live waitlist entries (read in the same statement; see chatbot.agent.prompt)."""
    message = table(Message)
    hints = (
        f"EXISTS (SELECT 1 FROM {table(TourBooking)} WHERE contact_id = %s AND status = %s AND starts_at >= %s), "
        f"EXISTS (SELECT 1 FROM {table(Child)} WHERE contact_id = %s), "
        f"EXISTS (SELECT 1 FROM {table(WaitlistEntry)} w WHERE w.contact_id = %s AND w.status IN (%s, %s) "
        f"AND w.slot_id IN (SELECT id FROM {table(TourSlot)} WHERE starts_at > %s))"
    )
    sql = (f"UPDATE {message} SET processed_at = %s WHERE processed_at IS NULL AND role = %s "
           f"AND conversation_id = (SELECT m.conversation_id FROM {message} m WHERE {_unanswered('m')} "
           f"ORDER BY m.created_at, m.id LIMIT 1) "
           f"RETURNING {', '.join(quote(f.column) for f in Message._meta.concrete_fields)}, {hints}")
    at = when(now)
    params = [at, Message.Role.USER, *_unanswered_params(contact_id),
              contact_id, TourBooking.Status.SCHEDULED, at, contact_id,
              contact_id, WaitlistEntry.Status.WAITING, WaitlistEntry.Status.OFFERED, at]
    with hot_cursor() as cursor:
        cursor.execute(sql, params)
        rows = instances(cursor.fetchall(), Message)
    batch = []
    for message_row, *flags in rows:
        message_row.fact_hints = dict(zip(FACT_HINTS, map(bool, flags), strict=True))
        batch.append(message_row)
    return sorted(batch, key=lambda m: (m.created_at, m.pk))


def has_unanswered(contact_id: int) -> bool:
    with hot_cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {table(Message)} m WHERE {_unanswered('m')} LIMIT 1",
                       _unanswered_params(contact_id))
        return cursor.fetchone() is not None


# What a prompt's history reads of a message (chatbot.agent.prompt.history): a turn late in a long conversation
# reads dozens, so the other fields are left deferred rather than built into every instance.
HISTORY_FIELDS = ("id", "role", "text", "created_at")


def earlier_messages(conversation: Conversation, before_ids: set[int]) -> list[Message]:
    """The conversation's answered messages not folded into its summary, oldest first, except `before_ids`;
    only their HISTORY_FIELDS are read.

    A parent's message staff handled during a handoff is theirs: the model never sees it, or it would answer it.
    """
    sql = (f"SELECT {columns(Message, 'm', HISTORY_FIELDS)} FROM {table(Message)} m WHERE m.conversation_id = %s "
           "AND m.text <> '' AND (m.role = %s OR (m.role = %s AND m.processed_at IS NOT NULL "
           "AND m.handled_by_staff = %s))")
    params = [conversation.pk, Message.Role.ASSISTANT, Message.Role.USER, False]
    if before_ids:
        sql += f" AND m.id NOT IN ({', '.join(['%s'] * len(before_ids))})"
        params += sorted(before_ids)
    if conversation.summary_until:
        sql += " AND m.created_at > %s"
        params.append(when(conversation.summary_until))
    with hot_cursor() as cursor:
        cursor.execute(sql + " ORDER BY m.created_at, m.id", params)
        return [row[0] for row in instances(cursor.fetchall(), Message, only=HISTORY_FIELDS)]


# --- a turn's writes: its reply, reasoning steps and the conversation's totals ------------------
# The reply's row is written with the first steps that need it (a tool cycle's, or the answer's): a turn stores
# each phase in one statement on PostgreSQL, where the reply's INSERT (or UPDATE) is a data-modifying CTE whose
# id the steps' INSERT reads. Each such statement commits on its own: no BEGIN / COMMIT round trips.
REPLY_ANSWER_FIELDS = ("text", "language", "payload", "model", "latency_ms", "prompt_tokens", "completion_tokens",
                       "cost", "created_at")


@cache
def _steps_insert_sql(rows: int) -> str:
    """INSERT of `rows` reasoning steps whose message is the row of the CTE `reply`."""
    fields = insert_fields(ReasoningStep)
    row = "(" + ", ".join("(SELECT id FROM reply)" if f.name == "message" else "%s" for f in fields) + ")"
    return (f"INSERT INTO {table(ReasoningStep)} ({', '.join(quote(f.column) for f in fields)}) "
            f"VALUES {', '.join([row] * rows)}")


def _steps_values(steps: Sequence[ReasoningStep]) -> list:
    fields = [f for f in insert_fields(ReasoningStep) if f.name != "message"]
    return [value for step in steps for value in db_values(step, fields, True)]


def _reply_sql(reply: Message) -> tuple[str, list]:
    """The reply's INSERT (a new one, whole) or the UPDATE of its answer (stored by a tool cycle), RETURNING id."""
    if reply.pk is None:
        return insert_sql(Message, 1, True), db_values(reply, insert_fields(Message), True)
    sql, params = update_sql(reply, REPLY_ANSWER_FIELDS)
    return f"{sql} RETURNING {quote(Message._meta.pk.column)}", params


def _totals_sql(conversation_id: int, tokens: int, cost: Decimal, at: dt.datetime,
                outcome: str | None) -> tuple[str, list]:
    sql = (f"UPDATE {table(Conversation)} SET total_tokens = total_tokens + %s, "
           "total_cost = total_cost + %s, last_message_at = %s" + (", outcome = %s" if outcome is not None else "")
           + " WHERE id = %s")
    params = [tokens, Conversation._meta.get_field("total_cost").get_db_prep_save(cost, connection), when(at)]
    return sql, params + ([outcome] if outcome is not None else []) + [conversation_id]


def _write_reply_and_steps(reply: Message, steps: Sequence[ReasoningStep], also: tuple[str, list] | None) -> None:
    """The reply's row, then the steps (and the `also` UPDATE): one statement on PostgreSQL, else in order."""
    reply_sql, params = _reply_sql(reply)
    if connection.vendor == "postgresql":
        ctes = f"reply AS ({reply_sql})" + (f", also AS ({also[0]})" if also else "")
        with hot_cursor() as cursor:
            cursor.execute(f"WITH {ctes} {_steps_insert_sql(len(steps))} "
                           f"RETURNING {quote(ReasoningStep._meta.get_field('message').column)}",
                           params + (also[1] if also else []) + _steps_values(steps))
            reply_id = cursor.fetchone()[0]
        if reply.pk is None:
            stored(reply, reply_id)
        return
    with transaction.atomic(), hot_cursor() as cursor:
        cursor.execute(reply_sql, params)
        if reply.pk is None:
            stored(reply, cursor.fetchone()[0])
        insert_many(steps)  # their message is the reply, stored now
        if also:
            cursor.execute(*also)


def store_steps(reply: Message, steps: Sequence[ReasoningStep]) -> None:
    """A tool cycle's reasoning steps, and the reply's row first if no earlier cycle stored it (the steps are
    its steps). The reply is then stored, still without its answer."""
    if reply.pk is None:
        _write_reply_and_steps(reply, steps, None)
    else:
        insert_many(steps)


def finish_turn(reply: Message, steps: Sequence[ReasoningStep], conversation_id: int, at: dt.datetime,
                outcome: str | None = None) -> None:
    """A turn's last writes: the reply with its answer (inserted whole, or its answer set on the row a tool cycle
    stored), its last steps (at least the answer's), and the conversation's totals (the reply's tokens and cost),
    activity and `outcome`. One statement on PostgreSQL; one transaction on SQLite."""
    totals = _totals_sql(conversation_id, reply.prompt_tokens + reply.completion_tokens, reply.cost, at, outcome)
    _write_reply_and_steps(reply, steps, totals)
