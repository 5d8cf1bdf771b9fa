"""A turn's reads and writes: one PostgreSQL statement each where that measurably pays, the ORM everywhere else.

Four hand-written statements carry a turn on PostgreSQL: the store (a parent's message into the open
conversation, read in the same statement), the claim (the batch taken, the contact's fact hints and the
conversation's history in one UPDATE ... RETURNING), a tool round's steps, and the answer (reply, steps and
totals, fenced by the claim). Each stands for three to six ORM round trips and 0.5 to 3 ms of Python building
them (`python manage.py bench --only turn_overhead`, docs/benchmarks.md). They run through
`plumbing.rows.hot_cursor`, prepared once per pooled connection.

Their table and column names are the models' (`plumbing.rows.Names`, resolved when this module is imported), and
their rows come back as model instances. On SQLite, and for everything else a turn reads or writes, the ORM
does the same work: it is the reference, and tests/chatbot/test_hotpath.py holds both to the same results;
tests/test_hot_statements.py plans every statement here against the migrated schema.
"""

import datetime as dt
import json
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, reduce

from django.db import connection, transaction
from django.db.models import F, Q, QuerySet

from bookings import selectors as booking_selectors
from bookings import waitlist
from bookings.models import School, TourBooking, TourSlot, WaitlistEntry
from chatbot.models import Conversation, Message, ReasoningStep
from crm import services as crm
from crm.models import Child, Contact
from plumbing.rows import (
    Names,
    columns,
    database,
    db_values,
    hot_cursor,
    insert_fields,
    insert_sql,
    instances,
    new_values,
    quote,
    stored,
    update_sql_text,
    update_values,
)

MESSAGE, CONVERSATION, STEP = Names(Message), Names(Conversation), Names(ReasoningStep)
SCHOOL, CONTACT = Names(School), Names(Contact)
BOOKING, CHILD, ENTRY, SLOT = Names(TourBooking), Names(Child), Names(WaitlistEntry), Names(TourSlot)


def _in_one_statement() -> bool:
    return database().vendor == "postgresql"


@dataclass(frozen=True)
class FactHints:
    """Which of the contact's look-ups found something when the turn took its messages (read with the claim):
    the prompt skips the empty ones' queries (`chatbot.agent.prompt.contact_facts`). Unknown: look."""

    has_upcoming_tours: bool = True
    has_children: bool = True
    has_waitlist_entries: bool = True


@dataclass
class Claim:
    """The messages a turn took (oldest first), what it knows of the contact from the same read, and the
    conversation's earlier messages when they were read with it (None: not read)."""

    messages: list[Message]
    hints: FactHints
    earlier: list[Message] | None = None


# --- the open conversation and the store ---------------------------------------------------------
def _open_conversations(school_id: int, contact_id: int, channel: str, external_id: str) -> QuerySet:
    found = Conversation.objects.filter(school_id=school_id, contact_id=contact_id, channel=channel,
                                        status__in=[Conversation.Status.ACTIVE, Conversation.Status.HANDED_OFF])
    return found.filter(external_id=external_id) if external_id else found


def open_conversation(school_id: int, contact_id: int, channel: str, external_id: str = "") -> Conversation | None:
    """The contact's latest active or handed-off conversation on the channel, with its school and contact."""
    return (_open_conversations(school_id, contact_id, channel, external_id).select_related("school", "contact")
            .order_by("-started_at").first())


def _latest_open_sql(by_external_id: bool) -> str:
    c = CONVERSATION
    return (f"SELECT * FROM {c.table} WHERE {c.school} = %s AND {c.contact} = %s AND {c.channel} = %s "
            f"AND {c.status} IN (%s, %s)" + (f" AND {c.external_id} = %s" if by_external_id else "")
            + f" ORDER BY {c.started_at} DESC LIMIT 1")


def _latest_open_params(school_id: int, contact_id: int, channel: str, external_id: str) -> list:
    return [school_id, contact_id, channel, Conversation.Status.ACTIVE, Conversation.Status.HANDED_OFF,
            *([external_id] if external_id else [])]


def _store_in_open_sql(by_external_id: bool) -> str:
    m, c = MESSAGE, CONVERSATION
    fields = insert_fields(Message)
    inserted = ", ".join(f"c.{c.id}" if f.name == "conversation" else "%s" for f in fields)
    return (f"WITH c AS ({_latest_open_sql(by_external_id)}), "
            f"stored AS (INSERT INTO {m.table} ({', '.join(quote(f.column) for f in fields)}) "
            f"SELECT {inserted} FROM c WHERE c.{c.last_message_at} IS NULL OR c.{c.last_message_at} >= %s "
            f"OR c.{c.status} = %s RETURNING {m.id}, {m.created_at}), "
            f"touched AS (UPDATE {c.table} SET {c.last_message_at} = stored.{m.created_at} FROM stored, c "
            f"WHERE {c.table}.{c.id} = c.{c.id}) "
            f"SELECT {columns(Conversation, 'c')}, {columns(School, 's')}, {columns(Contact, 'p')}, "
            f"(SELECT {m.id} FROM stored) "
            f"FROM c JOIN {SCHOOL.table} s ON s.{SCHOOL.id} = c.{c.school} "
            f"JOIN {CONTACT.table} p ON p.{CONTACT.id} = c.{c.contact}")


_STORE_IN_OPEN = {by_external_id: _store_in_open_sql(by_external_id) for by_external_id in (False, True)}


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
        cursor.execute(_STORE_IN_OPEN[bool(external_id)],
                       _latest_open_params(school_id, contact_id, message.channel, external_id) + values
                       + [idle_since, Conversation.Status.HANDED_OFF])
        rows = cursor.fetchall()
    if not rows:
        return None
    found, school, contact, message_id = instances(rows, Conversation, School, Contact)[0]
    found.school, found.contact = school, contact
    if message_id is not None:
        message.conversation = found
        stored(message, message_id)
    return found


_STORE_MESSAGE = (f"WITH stored AS ({insert_sql(Message)} RETURNING {MESSAGE.id}, {MESSAGE.created_at}) "
                  f"UPDATE {CONVERSATION.table} SET {CONVERSATION.last_message_at} = stored.{MESSAGE.created_at} "
                  f"FROM stored WHERE {CONVERSATION.table}.{CONVERSATION.id} = %s RETURNING stored.{MESSAGE.id}")


def store_message(message: Message) -> Message:
    """INSERT a new message and make it its conversation's latest activity (what the idle timeout measures):
    one statement on PostgreSQL, a transaction elsewhere."""
    if not _in_one_statement():
        with transaction.atomic():
            message.save()
            Conversation.objects.filter(pk=message.conversation_id).update(last_message_at=message.created_at)
        return message
    with hot_cursor() as cursor:
        cursor.execute(_STORE_MESSAGE, [*new_values(message), message.conversation_id])
        return stored(message, cursor.fetchone()[0])


# --- the claim ---------------------------------------------------------------------------------
def unanswered(contact_id: int) -> QuerySet[Message]:
    """The contact's parent messages no turn has taken, in the conversations the bot runs."""
    return Message.objects.filter(
        role=Message.Role.USER, processed_at__isnull=True,
        conversation__in=Conversation.objects.filter(contact_id=contact_id, status=Conversation.Status.ACTIVE)
        .values("pk"))


def has_unanswered(contact_id: int) -> bool:
    return unanswered(contact_id).exists()


def _unanswered_sql(alias: str) -> str:
    """`unanswered` as WHERE conditions (params: `_unanswered_params`). The contact's conversations are read first
    (`= ANY(ARRAY(...))`, one InitPlan through the contact + status index), then the partial index
    `message_unanswered` per conversation, whatever the statistics say. Written as `IN (SELECT ...)` it is
    planned as a join, and with the statistics of a table that was nearly empty when last analysed (a new
    school, a fresh database) the planner scanned every unanswered message of every contact for each one: a
    burst of 500 new parents became quadratic."""
    m, c = MESSAGE, CONVERSATION
    return (f"{alias}.{m.role} = %s AND {alias}.{m.processed_at} IS NULL AND {alias}.{m.conversation} = ANY(ARRAY("
            f"SELECT {c.id} FROM {c.table} WHERE {c.contact} = %s AND {c.status} = %s))")


def _unanswered_params(contact_id: int) -> list:
    return [Message.Role.USER, contact_id, Conversation.Status.ACTIVE]


def fact_hints(contact_id: int, now: dt.datetime) -> FactHints:
    """What the claim reads of the contact, by the selectors the prompt's facts use (the ORM's claim)."""
    return FactHints(booking_selectors.upcoming_bookings(contact_id, now).exists(),
                     crm.children_of(contact_id).exists(), waitlist.waiting_or_offered(contact_id, now).exists())


def claim_batch(contact_id: int, now: dt.datetime) -> Claim:
    """Take the contact's unanswered messages of the conversation with the oldest one, oldest first: they are
    marked processed at `now`, in a transaction that locks them first. A message another turn took first is not
    taken (it no longer matches `processed_at IS NULL`). The hints say whether the contact has upcoming tours,
    children, live waitlist entries."""
    with transaction.atomic():
        oldest = unanswered(contact_id).order_by("created_at", "id").values_list("conversation_id", flat=True)[:1]
        ids = list(unanswered(contact_id).filter(conversation_id__in=oldest).select_for_update()
                   .values_list("pk", flat=True))
        Message.objects.filter(pk__in=ids).update(processed_at=now)
        batch = list(Message.objects.filter(pk__in=ids).order_by("created_at", "id"))
    return Claim(batch, fact_hints(contact_id, now))


_HINTS = (f"EXISTS (SELECT 1 FROM {BOOKING.table} WHERE {BOOKING.contact} = %s AND {BOOKING.status} = %s "
          f"AND {BOOKING.starts_at} >= %s), "
          f"EXISTS (SELECT 1 FROM {CHILD.table} WHERE {CHILD.contact} = %s), "
          f"EXISTS (SELECT 1 FROM {ENTRY.table} w WHERE w.{ENTRY.contact} = %s AND w.{ENTRY.status} IN (%s, %s) "
          f"AND w.{ENTRY.slot} IN (SELECT {SLOT.id} FROM {SLOT.table} WHERE {SLOT.starts_at} > %s))")
_CLAIM = (f"UPDATE {MESSAGE.table} SET {MESSAGE.processed_at} = %s WHERE {MESSAGE.processed_at} IS NULL "
          f"AND {MESSAGE.role} = %s AND {MESSAGE.conversation} = "
          f"(SELECT m.{MESSAGE.conversation} FROM {MESSAGE.table} m "
          f"WHERE {_unanswered_sql('m')} ORDER BY m.{MESSAGE.created_at}, m.{MESSAGE.id} LIMIT 1) "
          f"RETURNING {', '.join(quote(f.column) for f in Message._meta.concrete_fields)}, {_HINTS}")


def _claim_params(contact_id: int, now: dt.datetime) -> list:
    return [now, Message.Role.USER, *_unanswered_params(contact_id), contact_id, TourBooking.Status.SCHEDULED, now,
            contact_id, contact_id, WaitlistEntry.Status.WAITING, WaitlistEntry.Status.OFFERED, now]


# What a prompt's history reads of a message (chatbot.agent.prompt.history): a turn late in a long conversation
# reads dozens, so the other fields are left deferred rather than built into every instance.
HISTORY_FIELDS = ("id", "role", "text", "created_at")


def _answered_sql(alias: str) -> str:
    """`answered` as WHERE conditions (params: `_answered_params`)."""
    m = MESSAGE
    return (f"{alias}.{m.text} <> '' AND ({alias}.{m.role} = %s OR ({alias}.{m.role} = %s "
            f"AND {alias}.{m.processed_at} IS NOT NULL AND {alias}.{m.handled_by_staff} = %s))")


def _answered_params() -> list:
    return [Message.Role.ASSISTANT, Message.Role.USER, False]


# A CTE that makes the statement's own commit asynchronous (referenced by the statement, so that it runs).
_COMMIT_WITHOUT_WAITING = "commit_without_waiting AS (SELECT set_config('synchronous_commit', 'off', true))"


def _claim_with_history_sql(commit_without_waiting: bool) -> str:
    """The claim, and the `earlier_messages` of the batch's conversation (read before the claim: the batch is not
    among them), as rows of one shape: (is of the batch, every Message column, the hints); a history row has only
    HISTORY_FIELDS."""
    m, c = MESSAGE, CONVERSATION
    history = ", ".join(f"m.{quote(f.column)}" if f.attname in HISTORY_FIELDS else "NULL"
                        for f in Message._meta.concrete_fields)
    return (f"WITH claimed AS ({_CLAIM}){f', {_COMMIT_WITHOUT_WAITING}' if commit_without_waiting else ''} "
            f"SELECT true, claimed.* FROM claimed{', commit_without_waiting' if commit_without_waiting else ''} "
            "UNION ALL "
            f"SELECT false, {history}, NULL, NULL, NULL FROM {m.table} m "
            f"JOIN {c.table} c ON c.{c.id} = m.{m.conversation} "
            f"WHERE m.{m.conversation} = (SELECT {m.conversation} FROM claimed LIMIT 1) AND {_answered_sql('m')} "
            f"AND (c.{c.summary_until} IS NULL OR m.{m.created_at} > c.{c.summary_until})")


_CLAIM_WITH_HISTORY = {without: _claim_with_history_sql(without) for without in (False, True)}
_HISTORY_POSITIONS = [i for i, f in enumerate(Message._meta.concrete_fields) if f.attname in HISTORY_FIELDS]


def claim_batch_with_history(contact_id: int, now: dt.datetime) -> Claim:
    """`claim_batch`, and on PostgreSQL in the same statement (with the hints) the `earlier_messages` of the
    batch's conversation (oldest first; None elsewhere: not read).

    On PostgreSQL, outside a transaction, the claim commits without waiting for its flush to disk
    (`synchronous_commit` off for this statement alone): it needs no durability of its own. Should PostgreSQL
    crash before the flush, the messages are unanswered again and answered again; every later write of the
    turn (its steps, its reply) commits durably, which flushes the claim with it (the log is written in
    order)."""
    if not _in_one_statement():
        return claim_batch(contact_id, now)
    with hot_cursor() as cursor:
        # Inside a transaction the setting would last until its end: there, the claim commits with it.
        cursor.execute(_CLAIM_WITH_HISTORY[not connection.in_atomic_block],
                       _claim_params(contact_id, now) + _answered_params())
        rows = cursor.fetchall()
    earlier = [row[0] for row in instances([[row[1 + i] for i in _HISTORY_POSITIONS] for row in rows if not row[0]],
                                           Message, only=HISTORY_FIELDS)]
    batch = instances([row[1:] for row in rows if row[0]], Message)
    hints = FactHints(*map(bool, batch[0][1:])) if batch else FactHints()
    return Claim(sorted((message for message, *_ in batch), key=lambda m: (m.created_at, m.pk)), hints,
                 sorted(earlier, key=lambda m: (m.created_at, m.pk)))


def answered(conversation: Conversation) -> QuerySet[Message]:
    """The messages a prompt's history shows: the assistant's, and the parent's that were answered (taken by a
    turn), not folded into the conversation's summary. A parent's message staff handled during a handoff is
    theirs: the model never sees it, or it would answer it."""
    found = Message.objects.filter(conversation=conversation).exclude(text="").filter(
        Q(role=Message.Role.ASSISTANT)
        | Q(role=Message.Role.USER, processed_at__isnull=False, handled_by_staff=False))
    return found.filter(created_at__gt=conversation.summary_until) if conversation.summary_until else found


def earlier_messages(conversation: Conversation, before_ids: set[int]) -> list[Message]:
    """The conversation's `answered` messages, oldest first, except `before_ids`; only their HISTORY_FIELDS are
    read."""
    return list(answered(conversation).exclude(pk__in=before_ids).order_by("created_at", "id").only(*HISTORY_FIELDS))


# --- a turn's writes: its reply, reasoning steps and the conversation's totals ------------------
# The reply's row is written with the first steps that need it (a tool cycle's, or the answer's): a turn stores
# each phase in one statement on PostgreSQL, where the reply's INSERT (or UPDATE) is a data-modifying CTE whose
# id the steps' INSERT reads. Each such statement commits on its own: no BEGIN / COMMIT round trips.
REPLY_ANSWER_FIELDS = ("text", "language", "payload", "model", "latency_ms", "prompt_tokens", "completion_tokens",
                       "cost", "created_at")
_STEP_FIELDS = [f for f in insert_fields(ReasoningStep) if f.name != "message"]


def _steps_insert_sql() -> str:
    """INSERT of reasoning steps whose message is the row of the CTE `reply`, the steps given as one JSON array:
    one parameter and one statement text whatever their number, so it is prepared once, and no per-field
    parameter to adapt. Each column is read as its field's database type."""
    names = [quote(f.column) for f in _STEP_FIELDS]
    record = ", ".join(f"{name} {field.db_type(connection)}" for name, field in zip(names, _STEP_FIELDS, strict=True))
    return (f"INSERT INTO {STEP.table} ({STEP.message}, {', '.join(names)}) "
            f"SELECT reply.{MESSAGE.id}, {', '.join(f's.{name}' for name in names)} "
            f"FROM reply, jsonb_to_recordset(%s::jsonb) AS s({record}) RETURNING {STEP.message}")


_STEPS_INSERT = _steps_insert_sql()


def _steps_json(steps: Sequence[ReasoningStep]) -> str:
    """The steps as `_STEPS_INSERT` reads them: an object per step, keyed by column (JSON null: SQL NULL)."""
    return json.dumps([{f.column: _json_value(getattr(step, f.attname)) for f in _STEP_FIELDS} for step in steps])


def _json_value(value: object) -> object:
    return value.isoformat() if isinstance(value, dt.datetime) else value


class LostClaim(Exception):  # noqa: N818 (a state, not a failure of the turn's own)
    """The turn's claim no longer holds: its messages were given back (its lease lapsed while it stalled, and
    another worker took its turn over, or the sweeper gave them back). Nothing of the turn's answer was stored;
    `claims` are the turn's, for `give_back_claims`."""

    def __init__(self, claims: dict[int, dt.datetime]) -> None:
        super().__init__(f"the claim on messages {sorted(claims)} was lost")
        self.claims = claims


def _claim_filter(claims: dict[int, dt.datetime]) -> Q:
    return reduce(operator.or_, (Q(pk=pk, processed_at=at) for pk, at in claims.items()))


def claim_holds(claims: dict[int, dt.datetime]) -> bool:
    """Every claimed message still has the `processed_at` the turn set."""
    return Message.objects.filter(_claim_filter(claims)).count() == len(claims)


def give_back_claims(claims: dict[int, dt.datetime]) -> int:
    """A turn whose claim was lost: the messages it still holds (taken in late, after the others were given back)
    are unanswered again, for the turn that took over; returns how many."""
    return Message.objects.filter(_claim_filter(claims)).update(processed_at=None) if claims else 0


# The fence, where a statement is fenced by the turn's claim: the claim's rows locked (the statement that gives
# them back waits for this one, and sees its answer: see `chatbot.services.give_back_unanswered`), and whether
# each still has the `processed_at` the turn set; each of the statement's writes is conditional on it.
_CLAIM_CTE = (f"claim AS (SELECT count(*) = %s AS held FROM (SELECT m.{MESSAGE.id} FROM {MESSAGE.table} m, "
              "jsonb_to_recordset(%s::jsonb) AS t(id bigint, at timestamptz) "
              f"WHERE m.{MESSAGE.id} = t.id AND m.{MESSAGE.processed_at} = t.at ORDER BY m.{MESSAGE.id} "
              "FOR UPDATE OF m) AS mine)")
_CLAIM_HELD = "(SELECT held FROM claim)"
# Where a statement looks for the contact's unanswered messages, this CTE holds whether there is one; with
# `only_if_none`, each of its writes is conditional on there being none.
_UNANSWERED_CTE = (f"unanswered AS (SELECT EXISTS (SELECT 1 FROM {MESSAGE.table} m WHERE {_unanswered_sql('m')}) "
                   "AS found)")
_NONE_UNANSWERED = "NOT (SELECT found FROM unanswered)"
_REPLY_INSERT = insert_sql(Message)
_TOTALS = (f"UPDATE {CONVERSATION.table} SET {CONVERSATION.total_tokens} = {CONVERSATION.total_tokens} + %s, "
           f"{CONVERSATION.total_cost} = {CONVERSATION.total_cost} + %s, {CONVERSATION.last_message_at} = %s")


def _claims_json(claims: dict[int, dt.datetime]) -> str:
    return json.dumps([{"id": pk, "at": at.isoformat()} for pk, at in claims.items()])


@dataclass(frozen=True)
class Totals:
    """What a turn's answer adds to its conversation."""

    conversation_id: int
    tokens: int
    cost: Decimal
    at: dt.datetime
    outcome: str | None


@dataclass(frozen=True)
class WriteShape:
    """What decides the text of a turn's write (`write_sql`): the reply's row is new (INSERTed whole) or stored
    by an earlier cycle; the answer and the conversation's totals are written (`answer`, which settles an
    `outcome`); the contact's unanswered messages are looked for (`check`), and nothing is written if there is
    one (`only_if_none`); the turn's claim fences the writes (`fenced`)."""

    new_reply: bool
    answer: bool = False
    outcome: bool = False
    check: bool = False
    only_if_none: bool = False
    fenced: bool = False


@cache
def write_sql(shape: WriteShape) -> str:
    """A turn's write as one PostgreSQL statement: the checks are CTEs, and every write is conditional on them.
    Parameters: `_write_params`."""
    condition = " AND ".join(([_NONE_UNANSWERED] if shape.only_if_none and shape.check else [])
                             + ([_CLAIM_HELD] if shape.fenced else []))
    if shape.new_reply:
        reply = _REPLY_INSERT
        if condition:  # VALUES (...) -> SELECT ... WHERE
            head, _, values = reply.partition(" VALUES ")
            reply = f"{head} SELECT {values[1:-1]} WHERE {condition}"
        reply += f" RETURNING {MESSAGE.id}"
    elif shape.answer:
        reply = (update_sql_text(Message, REPLY_ANSWER_FIELDS) + (f" AND {condition}" if condition else "")
                 + f" RETURNING {MESSAGE.id}")
    else:
        reply = f"SELECT %s::bigint AS {MESSAGE.id}"
    ctes = ([_UNANSWERED_CTE] if shape.check else []) + ([_CLAIM_CTE] if shape.fenced else []) + [
        f"reply AS ({reply})"]
    if shape.answer:
        ctes.append(f"also AS ({_TOTALS}" + (f", {CONVERSATION.outcome} = %s" if shape.outcome else "")
                    + f" WHERE {CONVERSATION.id} = %s" + (f" AND {condition}" if condition else "") + ")")
    ctes.append(f"saved AS ({_STEPS_INSERT})")
    found = "(SELECT found FROM unanswered)" if shape.check else "false"
    return (f"WITH {', '.join(ctes)} SELECT (SELECT max({STEP.message}) FROM saved), {found}, "
            f"{_CLAIM_HELD if shape.fenced else 'true'}")


def _write_params(reply: Message, steps: Sequence[ReasoningStep], totals: Totals | None, unanswered_of: int | None,
                  claims: dict[int, dt.datetime] | None) -> list:
    params = _unanswered_params(unanswered_of) if unanswered_of is not None else []
    if claims:
        params += [len(claims), _claims_json(claims)]
    if reply.pk is None:
        params += new_values(reply)
    elif totals is not None:
        params += update_values(reply, REPLY_ANSWER_FIELDS)
    else:
        params.append(reply.pk)
    if totals is not None:
        cost = Conversation._meta.get_field("total_cost").get_db_prep_save(totals.cost, connection)
        params += [totals.tokens, cost, totals.at, *([totals.outcome] if totals.outcome is not None else []),
                   totals.conversation_id]
    return [*params, _steps_json(steps)]


def _write_in_one(reply: Message, steps: Sequence[ReasoningStep], totals: Totals | None, unanswered_of: int | None,
                  only_if_none: bool, claims: dict[int, dt.datetime] | None) -> tuple[bool, bool]:
    shape = WriteShape(new_reply=reply.pk is None, answer=totals is not None,
                       outcome=totals is not None and totals.outcome is not None, check=unanswered_of is not None,
                       only_if_none=only_if_none, fenced=bool(claims))
    with hot_cursor() as cursor:
        cursor.execute(write_sql(shape), _write_params(reply, steps, totals, unanswered_of, claims))
        reply_id, waiting, held = cursor.fetchone()
    if not held:
        raise LostClaim(claims)
    if reply_id is None:  # only_if_none, and an unanswered message: nothing written
        return False, True
    if reply.pk is None:
        stored(reply, reply_id)
    return True, waiting


def _write(reply: Message, steps: Sequence[ReasoningStep], totals: Totals | None = None,
           unanswered_of: int | None = None, only_if_none: bool = False,
           claims: dict[int, dt.datetime] | None = None) -> tuple[bool, bool]:
    """The reply's row (with its answer, given `totals`), then the steps and, with `totals`, the conversation's
    UPDATE: one statement on PostgreSQL, else one transaction. With `unanswered_of` (a contact), whether it has
    an unanswered message is read with them, and with `only_if_none` nothing is written if so. With `claims`
    (the turn's, see `tools.ToolContext.claims`), nothing is written unless every one still holds: else
    LostClaim is raised. Returns (written, an unanswered message found)."""
    if _in_one_statement():
        return _write_in_one(reply, steps, totals, unanswered_of, only_if_none, claims)
    with transaction.atomic():
        if claims and not claim_holds(claims):
            raise LostClaim(claims)
        waiting = unanswered_of is not None and has_unanswered(unanswered_of)
        if waiting and only_if_none:
            return False, True
        if reply.pk is None:
            reply.save(force_insert=True)
        elif totals is not None:
            reply.save(update_fields=REPLY_ANSWER_FIELDS)
        ReasoningStep.objects.bulk_create(steps)  # their message is the reply, stored now
        if totals is not None:
            Conversation.objects.filter(pk=totals.conversation_id).update(
                total_tokens=F("total_tokens") + totals.tokens, total_cost=F("total_cost") + totals.cost,
                last_message_at=totals.at, **({"outcome": totals.outcome} if totals.outcome is not None else {}))
    return True, waiting


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
    totals = Totals(conversation_id, reply.prompt_tokens + reply.completion_tokens, reply.cost, at, outcome)
    return _write(reply, steps, totals, unless_unanswered, only_if_none=True, claims=claims)[0]
