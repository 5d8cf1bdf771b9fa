"""The statements every turn runs, in hand-written SQL: no ORM compiling per call.

Built by the ORM, each of a turn's dozen statements costs 0.5 to 3 ms of Python (building and compiling the
query, then the instances); written here, about 0.2 ms (`python manage.py bench --only turn_overhead`). The
SQL is portable (PostgreSQL, and SQLite 3.35+ for RETURNING), its table and column names come from the models
(`_meta`), and rows come back as model instances through the backend's own converters, so the models stay the
schema and callers keep working with instances. On PostgreSQL they run through `plumbing.rows.hot_cursor`: each is
prepared once per pooled connection and planned once (see `plumbing.postgresql`). Only the hot path lives here
(`chatbot.services`, `chatbot.agent.loop`); everything else uses the ORM.
"""

import datetime as dt
import json
import operator
from collections.abc import Sequence
from decimal import Decimal
from functools import cache, reduce

from django.db import connection, transaction
from django.db.models import Q

from bookings.models import School, TourBooking, TourSlot, WaitlistEntry
from chatbot.models import Conversation, Message, ReasoningStep
from crm.models import Child, Contact
from plumbing.rows import (
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

FACT_HINTS = ("has_upcoming_tours", "has_children", "has_waitlist_entries")


# --- the turn's statements ----------------------------------------------------------------------
@cache
def _latest_open(by_external_id: bool) -> str:
    """SELECT of the contact's latest active or handed-off conversation on the channel (its columns, alias-free);
    `_latest_open_params` are its parameters."""
    return (f"SELECT * FROM {table(Conversation)} WHERE school_id = %s AND contact_id = %s AND channel = %s "
            "AND status IN (%s, %s)" + (" AND external_id = %s" if by_external_id else "")
            + " ORDER BY started_at DESC LIMIT 1")


def _latest_open_params(school_id: int, contact_id: int, channel: str, external_id: str) -> list:
    return [school_id, contact_id, channel, Conversation.Status.ACTIVE, Conversation.Status.HANDED_OFF,
            *([external_id] if external_id else [])]


def _with_school_and_contact(rows: list) -> tuple[Conversation | None, list]:
    """The conversation of the first row of `_conversation_columns()` (None if none), and its extra values."""
    if not rows:
        return None, []
    conversation, school, contact, *extra = instances(rows, Conversation, School, Contact)[0]
    conversation.school, conversation.contact = school, contact
    return conversation, extra


@cache
def _conversation_columns() -> str:
    """The columns of the CTE `c` (a conversation), with its school's and contact's, joined as FROM `_joined()`."""
    return f"{columns(Conversation, 'c')}, {columns(School, 's')}, {columns(Contact, 'p')}"


@cache
def _joined() -> str:
    return f"c JOIN {table(School)} s ON s.id = c.school_id JOIN {table(Contact)} p ON p.id = c.contact_id"


def open_conversation(school_id: int, contact_id: int, channel: str, external_id: str = "") -> Conversation | None:
    """The contact's latest active or handed-off conversation on the channel, with its school and contact."""
    with hot_cursor() as cursor:
        cursor.execute(f"WITH c AS ({_latest_open(bool(external_id))}) SELECT {_conversation_columns()} "
                       f"FROM {_joined()}", _latest_open_params(school_id, contact_id, channel, external_id))
        return _with_school_and_contact(cursor.fetchall())[0]


@cache
def _store_in_open_sql(by_external_id: bool) -> str:
    fields = insert_fields(Message)
    inserted = ", ".join("c.id" if f.name == "conversation" else "%s" for f in fields)
    conversations = table(Conversation)
    return (f"WITH c AS ({_latest_open(by_external_id)}), "
            f"stored AS (INSERT INTO {table(Message)} ({', '.join(quote(f.column) for f in fields)}) "
            f"SELECT {inserted} FROM c WHERE c.last_message_at IS NULL OR c.last_message_at >= %s OR c.status = %s "
            "RETURNING id, created_at), "
            f"touched AS (UPDATE {conversations} SET last_message_at = stored.created_at FROM stored, c "
            f"WHERE {conversations}.id = c.id) "
            f"SELECT {_conversation_columns()}, (SELECT id FROM stored) FROM {_joined()}")


def store_in_open_conversation(message: Message, school_id: int, contact_id: int, external_id: str,
                               idle_since: dt.datetime) -> Conversation | None:
    """PostgreSQL: a new parent's message (its conversation not set) stored in the contact's open conversation on
    its channel (`open_conversation`) if that one is still current: active since `idle_since`, or handed off
    (as `chatbot.services.current_conversation` decides); that conversation made the latest activity; one
    statement. Returns the open conversation (with its school and contact) or None; `message` is stored (its
    primary key set) only if the conversation was current."""
    fields = insert_fields(Message)
    values = [v for f, v in zip(fields, db_values(message, fields, True), strict=True) if f.name != "conversation"]
    with hot_cursor() as cursor:
        cursor.execute(_store_in_open_sql(bool(external_id)),
                       _latest_open_params(school_id, contact_id, message.channel, external_id) + values
                       + [when(idle_since), Conversation.Status.HANDED_OFF])
        found, extra = _with_school_and_contact(cursor.fetchall())
    if found is not None and extra[0] is not None:
        message.conversation = found
        stored(message, extra[0])
    return found


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


@cache
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


@cache
def _claim_sql() -> str:
    message = table(Message)
    hints = (
        f"EXISTS (SELECT 1 FROM {table(TourBooking)} WHERE contact_id = %s AND status = %s AND starts_at >= %s), "
        f"EXISTS (SELECT 1 FROM {table(Child)} WHERE contact_id = %s), "
        f"EXISTS (SELECT 1 FROM {table(WaitlistEntry)} w WHERE w.contact_id = %s AND w.status IN (%s, %s) "
        f"AND w.slot_id IN (SELECT id FROM {table(TourSlot)} WHERE starts_at > %s))"
    )
    return (f"UPDATE {message} SET processed_at = %s WHERE processed_at IS NULL AND role = %s "
            f"AND conversation_id = (SELECT m.conversation_id FROM {message} m WHERE {_unanswered('m')} "
            f"ORDER BY m.created_at, m.id LIMIT 1) "
            f"RETURNING {', '.join(quote(f.column) for f in Message._meta.concrete_fields)}, {hints}")


def _claim_params(contact_id: int, now: dt.datetime) -> list:
    at = when(now)
    return [at, Message.Role.USER, *_unanswered_params(contact_id), contact_id, TourBooking.Status.SCHEDULED, at,
            contact_id, contact_id, WaitlistEntry.Status.WAITING, WaitlistEntry.Status.OFFERED, at]


def _batch(rows: list) -> list[Message]:
    batch = []
    for message_row, *flags in instances(rows, Message):
        message_row.fact_hints = dict(zip(FACT_HINTS, map(bool, flags), strict=True))
        batch.append(message_row)
    return sorted(batch, key=lambda m: (m.created_at, m.pk))


def claim_batch(contact_id: int, now: dt.datetime) -> list[Message]:
    """Take the contact's unanswered messages of the conversation with the oldest one, oldest first: one
    statement that marks them processed at `now` and returns them. A message another turn took first is not
    returned (it no longer matches `processed_at IS NULL`). Each carries `fact_hints`: whether the contact has
    upcoming tours, children, live waitlist entries (read in the same statement; see chatbot.agent.prompt)."""
    with hot_cursor() as cursor:
        cursor.execute(_claim_sql(), _claim_params(contact_id, now))
        return _batch(cursor.fetchall())


# A CTE that makes the statement's own commit asynchronous (referenced by the statement, so that it runs).
_COMMIT_WITHOUT_WAITING = "commit_without_waiting AS (SELECT set_config('synchronous_commit', 'off', true))"


@cache
def _claim_with_history_sql(commit_without_waiting: bool) -> str:
    """`claim_batch`, and the `earlier_messages` of the batch's conversation (read before the claim: the batch is
    not among them), as rows of one shape: (is of the batch, every Message column, the hints); a history row
    has only HISTORY_FIELDS."""
    fields = Message._meta.concrete_fields
    history = ", ".join(f"m.{quote(f.column)}" if f.attname in HISTORY_FIELDS else "NULL" for f in fields)
    return (f"WITH claimed AS ({_claim_sql()}){f', {_COMMIT_WITHOUT_WAITING}' if commit_without_waiting else ''} "
            f"SELECT true, claimed.* FROM claimed{', commit_without_waiting' if commit_without_waiting else ''} "
            "UNION ALL "
            f"SELECT false, {history}, NULL, NULL, NULL FROM {table(Message)} m "
            f"JOIN {table(Conversation)} c ON c.id = m.conversation_id "
            f"WHERE m.conversation_id = (SELECT conversation_id FROM claimed LIMIT 1) AND {_answered('m')} "
            "AND (c.summary_until IS NULL OR m.created_at > c.summary_until)")


def claim_batch_with_history(contact_id: int, now: dt.datetime) -> tuple[list[Message], list[Message] | None]:
    """`claim_batch`, and on PostgreSQL in the same statement the `earlier_messages` of the batch's conversation
    (oldest first; None elsewhere: not read).

    On PostgreSQL, outside a transaction, the claim commits without waiting for its flush to disk
    (`synchronous_commit` off for this statement alone): it needs no durability of its own. Should PostgreSQL
    crash before the flush, the messages are unanswered again and answered again; every later write of the
    turn (its steps, its reply) commits durably, which flushes the claim with it (the log is written in
    order)."""
    if connection.vendor != "postgresql":
        return claim_batch(contact_id, now), None
    with hot_cursor() as cursor:
        # Inside a transaction the setting would last until its end: there, the claim commits with it.
        cursor.execute(_claim_with_history_sql(not connection.in_atomic_block),
                       _claim_params(contact_id, now) + _answered_params())
        rows = cursor.fetchall()
    positions = [i for i, f in enumerate(Message._meta.concrete_fields) if f.attname in HISTORY_FIELDS]
    earlier = [row[0] for row in instances([[row[1 + i] for i in positions] for row in rows if not row[0]],
                                           Message, only=HISTORY_FIELDS)]
    return _batch([row[1:] for row in rows if row[0]]), sorted(earlier, key=lambda m: (m.created_at, m.pk))


def has_unanswered(contact_id: int) -> bool:
    with hot_cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {table(Message)} m WHERE {_unanswered('m')} LIMIT 1",
                       _unanswered_params(contact_id))
        return cursor.fetchone() is not None


# What a prompt's history reads of a message (chatbot.agent.prompt.history): a turn late in a long conversation
# reads dozens, so the other fields are left deferred rather than built into every instance.
HISTORY_FIELDS = ("id", "role", "text", "created_at")


def _answered(alias: str) -> str:
    """WHERE conditions of the messages a prompt's history shows (params: `_answered_params`): the assistant's, and
    the parent's that were answered (taken by a turn)."""
    return (f"{alias}.text <> '' AND ({alias}.role = %s OR ({alias}.role = %s AND {alias}.processed_at IS NOT NULL "
            f"AND {alias}.handled_by_staff = %s))")


def _answered_params() -> list:
    return [Message.Role.ASSISTANT, Message.Role.USER, False]


def earlier_messages(conversation: Conversation, before_ids: set[int]) -> list[Message]:
    """The conversation's answered messages not folded into its summary, oldest first, except `before_ids`;
    only their HISTORY_FIELDS are read.

    A parent's message staff handled during a handoff is theirs: the model never sees it, or it would answer it.
    """
    sql = (f"SELECT {columns(Message, 'm', HISTORY_FIELDS)} FROM {table(Message)} m WHERE m.conversation_id = %s "
           f"AND {_answered('m')}")
    params = [conversation.pk, *_answered_params()]
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


def _step_fields() -> list:
    return [f for f in insert_fields(ReasoningStep) if f.name != "message"]


@cache
def _steps_insert_sql() -> str:
    """INSERT of reasoning steps whose message is the row of the CTE `reply` (none if it has none), the steps
    given as one JSON array (PostgreSQL): one parameter and one statement text whatever their number, so it is
    prepared once, and no per-field parameter to adapt. Each column is read as its field's database type."""
    fields = _step_fields()
    names = [quote(f.column) for f in fields]
    record = ", ".join(f"{name} {field.db_type(connection)}" for name, field in zip(names, fields, strict=True))
    message = quote(ReasoningStep._meta.get_field("message").column)
    return (f"INSERT INTO {table(ReasoningStep)} ({message}, {', '.join(names)}) "
            f"SELECT reply.id, {', '.join(f's.{name}' for name in names)} "
            f"FROM reply, jsonb_to_recordset(%s::jsonb) AS s({record}) RETURNING {message}")


def _steps_json(steps: Sequence[ReasoningStep]) -> str:
    """The steps as `_steps_insert_sql` reads them: an object per step, keyed by column (JSON null: SQL NULL)."""
    fields = _step_fields()
    return json.dumps([{f.column: _json_value(getattr(step, f.attname)) for f in fields} for step in steps])


def _json_value(value: object) -> object:
    return value.isoformat() if isinstance(value, dt.datetime) else value


# Where a statement looks for the contact's unanswered messages, this CTE holds whether there is one; with
# `only_if_none`, each of its writes is conditional on there being none.
_NONE_UNANSWERED = "NOT (SELECT found FROM unanswered)"
# Where a statement is fenced by the turn's claim, this CTE holds whether the claim still holds; each of its writes
# is then conditional on it.
_CLAIM_HELD = "(SELECT held FROM claim)"


class LostClaim(Exception):  # noqa: N818 (a state, not a failure of the turn's own)
    """The turn's claim no longer holds: its messages were given back (its lease lapsed while it stalled, and
    another worker took its turn over, or the sweeper gave them back). Nothing of the turn's answer was stored;
    `claims` are the turn's, for `give_back_claims`."""

    def __init__(self, claims: dict[int, dt.datetime]) -> None:
        super().__init__(f"the claim on messages {sorted(claims)} was lost")
        self.claims = claims


def _claims_json(claims: dict[int, dt.datetime]) -> str:
    return json.dumps([{"id": pk, "at": at.isoformat()} for pk, at in claims.items()])


# The claim's rows locked (the statement that gives them back waits for this one, and sees its answer: see
# `chatbot.services.give_back_unanswered`), and whether each still has the `processed_at` the turn set.
_CLAIM_CTE = ("claim AS (SELECT count(*) = %s AS held FROM (SELECT m.id FROM {message} m, "
              "jsonb_to_recordset(%s::jsonb) AS t(id bigint, at timestamptz) "
              "WHERE m.id = t.id AND m.processed_at = t.at ORDER BY m.id FOR UPDATE OF m) AS mine)")


def _claim_filter(claims: dict[int, dt.datetime]) -> Q:
    """The claimed messages that still hold the turn's claim (ORM: the rare paths and SQLite)."""
    return reduce(operator.or_, (Q(pk=pk, processed_at=at) for pk, at in claims.items()))


def claim_holds(claims: dict[int, dt.datetime]) -> bool:
    return Message.objects.filter(_claim_filter(claims)).count() == len(claims)


def give_back_claims(claims: dict[int, dt.datetime]) -> int:
    """A turn whose claim was lost: the messages it still holds (taken in late, after the others were given back)
    are unanswered again, for the turn that took over; returns how many."""
    return Message.objects.filter(_claim_filter(claims)).update(processed_at=None) if claims else 0


def _reply_sql(reply: Message, answer: bool, condition: str) -> tuple[str, list]:
    """The reply's row, as the CTE `reply` the steps read its id from: a new one INSERTed whole, or, stored by an
    earlier cycle, its `answer` UPDATEd in (else only its id); written only if `condition` (SQL, if any)."""
    pk = quote(Message._meta.pk.column)
    if reply.pk is None:
        sql = insert_sql(Message, 1, False)
        if condition:  # VALUES (...) -> SELECT ... WHERE
            head, _, values = sql.partition(" VALUES ")
            sql = f"{head} SELECT {values[1:-1]} WHERE {condition}"
        return f"{sql} RETURNING {pk}", db_values(reply, insert_fields(Message), True)
    if not answer:
        return "SELECT %s AS id", [reply.pk]
    sql, params = update_sql(reply, REPLY_ANSWER_FIELDS)
    return f"{sql}{f' AND {condition}' if condition else ''} RETURNING {pk}", params


def _totals_sql(conversation_id: int, tokens: int, cost: Decimal, at: dt.datetime,
                outcome: str | None, condition: str) -> tuple[str, list]:
    sql = (f"UPDATE {table(Conversation)} SET total_tokens = total_tokens + %s, "
           "total_cost = total_cost + %s, last_message_at = %s" + (", outcome = %s" if outcome is not None else "")
           + " WHERE id = %s" + (f" AND {condition}" if condition else ""))
    params = [tokens, Conversation._meta.get_field("total_cost").get_db_prep_save(cost, connection), when(at)]
    return sql, params + ([outcome] if outcome is not None else []) + [conversation_id]


def _write(reply: Message, steps: Sequence[ReasoningStep], totals: dict | None = None,
           unanswered_of: int | None = None, only_if_none: bool = False,
           claims: dict[int, dt.datetime] | None = None) -> tuple[bool, bool]:
    """The reply's row (with its answer, given `totals`), then the steps and, with `totals`, the conversation's
    UPDATE: one statement on PostgreSQL, else one transaction. With `unanswered_of` (a contact), whether it has
    an unanswered message is read in the same statement, and with `only_if_none` nothing is written if so.
    With `claims` (the turn's, see `tools.ToolContext.claims`), nothing is written unless every one still holds:
    then LostClaim is raised. Returns (written, an unanswered message found)."""
    check, in_one = unanswered_of is not None, connection.vendor == "postgresql"
    conditions = ([_NONE_UNANSWERED] if only_if_none and check and in_one else []) + (
        [_CLAIM_HELD] if claims and in_one else [])  # elsewhere the checks come first, in the transaction
    condition = " AND ".join(conditions)
    reply_sql, params = _reply_sql(reply, totals is not None, condition)
    also = _totals_sql(**totals, condition=condition) if totals else None
    if in_one:
        ctes = [f"reply AS ({reply_sql})"] + ([f"also AS ({also[0]})"] if also else [])
        ctes.append(f"saved AS ({_steps_insert_sql()})")
        if claims:
            ctes.insert(0, _CLAIM_CTE.format(message=table(Message)))
            params = [len(claims), _claims_json(claims), *params]
        if check:
            ctes.insert(0, f"unanswered AS (SELECT EXISTS (SELECT 1 FROM {table(Message)} m "
                           f"WHERE {_unanswered('m')}) AS found)")
            params = _unanswered_params(unanswered_of) + params
        found = "(SELECT found FROM unanswered)" if check else "false"
        with hot_cursor() as cursor:
            cursor.execute(f"WITH {', '.join(ctes)} SELECT (SELECT max(message_id) FROM saved), {found}, "
                           f"{_CLAIM_HELD if claims else 'true'}",
                           params + (also[1] if also else []) + [_steps_json(steps)])
            reply_id, unanswered, held = cursor.fetchone()
        if not held:
            raise LostClaim(claims)
        if reply_id is None:  # only_if_none, and an unanswered message: nothing written
            return False, True
        if reply.pk is None:
            stored(reply, reply_id)
        return True, unanswered
    with transaction.atomic(), hot_cursor() as cursor:
        if claims and not claim_holds(claims):
            raise LostClaim(claims)
        unanswered = check and has_unanswered(unanswered_of)
        if unanswered and only_if_none:
            return False, True
        if reply.pk is None or totals is not None:
            cursor.execute(reply_sql, params)
        if reply.pk is None:
            stored(reply, cursor.fetchone()[0])
        insert_many(steps)  # their message is the reply, stored now
        if also:
            cursor.execute(*also)
    return True, unanswered


def store_steps(reply: Message, steps: Sequence[ReasoningStep], unanswered_of: int | None = None) -> bool:
    """A tool cycle's reasoning steps, and the reply's row first if no earlier cycle stored it (the steps are
    its steps; the reply is then stored, still without its answer). With `unanswered_of` (the contact): returns
    whether a message of theirs waits to be answered (one that arrived during the cycle), read in the same
    statement."""
    return _write(reply, steps, unanswered_of=unanswered_of)[1]


def finish_turn(reply: Message, steps: Sequence[ReasoningStep], conversation_id: int, at: dt.datetime,
                outcome: str | None = None, unless_unanswered: int | None = None,
                claims: dict[int, dt.datetime] | None = None) -> bool:
    """A turn's last writes: the reply with its answer (inserted whole, or its answer set on the row a tool cycle
    stored), its last steps (at least the answer's), and the conversation's totals (the reply's tokens and cost),
    activity and `outcome`. One statement on PostgreSQL; one transaction on SQLite.

    `unless_unanswered` (the contact): none of it is written if a message of the contact is waiting to be
    answered (one that arrived while the model answered): returns False, and the turn takes it in instead.

    `claims` (the turn's: `tools.ToolContext.claims`) fence it: none of it is written unless each claimed message
    still has the `processed_at` the turn set, checked (and the rows locked) in the same statement; otherwise
    LostClaim is raised (another worker took the turn over while this one stalled)."""
    totals = {"conversation_id": conversation_id, "tokens": reply.prompt_tokens + reply.completion_tokens,
              "cost": reply.cost, "at": at, "outcome": outcome}
    return _write(reply, steps, totals, unless_unanswered, only_if_none=True, claims=claims)[0]
