"""Conversations, messages, the agent's reasoning steps, and the FAQ knowledge."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q


class Channel(models.TextChoices):
    WEB = "web", "Web chat"
    CHATWOOT = "chatwoot", "Chatwoot"
    WHATSAPP = "whatsapp", "WhatsApp"
    CLI = "cli", "Terminal"


class Conversation(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        HANDED_OFF = "handed_off", "Handed off to staff"
        ENDED = "ended", "Ended"

    class Outcome(models.TextChoices):
        """What the conversation left true at its end (chatbot.outcomes decides it)."""

        NONE = "", "In progress"
        BOOKED = "booked", "Booked"
        RESCHEDULED = "rescheduled", "Moved"
        CANCELLED = "cancelled", "Cancelled"
        CALLBACK = "callback", "Callback"
        FAQ_ONLY = "faq_only", "Answered"
        HANDED_OFF = "handed_off", "Handed off"
        ABANDONED = "abandoned", "Abandoned"

    class Rating(models.TextChoices):
        GOOD = "good", "Good"
        BAD = "bad", "Bad"

    school = models.ForeignKey("bookings.School", on_delete=models.PROTECT, related_name="conversations")
    contact = models.ForeignKey("crm.Contact", on_delete=models.PROTECT, related_name="conversations")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    external_id = models.CharField(max_length=64, blank=True, help_text="Chatwoot conversation id, etc.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.NONE, blank=True,
                               help_text="From the conversation's final state (chatbot.outcomes).")
    summary = models.TextField(blank=True, help_text="Compressed history of older turns.")
    summary_until = models.DateTimeField(null=True, blank=True, help_text="Messages up to here are in the summary.")
    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    total_tokens = models.PositiveIntegerField(default=0)
    total_cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    rating = models.CharField(max_length=8, choices=Rating.choices, blank=True)
    rating_note = models.TextField(blank=True)
    rated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    rated_at = models.DateTimeField(null=True, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="review_queue",
        help_text="The staff member asked to review (rate) this conversation.",
    )
    reviewer_assigned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["school", "contact", "channel", "status"]),
            # A contact's active conversations (the turn's claim, chatbot.hotpath): without it an empty
            # table's statistics led PostgreSQL to scan every active conversation through `status`.
            models.Index(fields=["contact", "status"], name="conversation_contact_status"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_channel_display()} {self.contact}"


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "Parent"
        ASSISTANT = "assistant", "Concierge"
        STAFF = "staff", "Staff"
        SYSTEM = "system", "System"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField(blank=True)
    language = models.CharField(
        max_length=8, blank=True, db_index=True, choices=settings.LANGUAGES,
        help_text="A parent's message: the language it was taken as; an answer: the language it was written in.",
    )
    payload = models.JSONField(default=dict, blank=True, help_text="Structured blocks (buttons, cards).")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    channel_message_id = models.CharField(
        max_length=128, blank=True, help_text="The platform's id for this message; de-duplicates redeliveries."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    processed_at = models.DateTimeField(
        null=True, blank=True, help_text="For a parent's message: when a turn took it in."
    )
    handled_by_staff = models.BooleanField(
        default=False,
        help_text="For a parent's message: it came while staff had the conversation, so it is theirs to answer; "
                  "the concierge never answers it, nor shows it to the model, after a handback.",
    )
    reply_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies",
        help_text="For an answer: the last parent message it answers.",
    )
    model = models.CharField(max_length=100, blank=True, help_text="Which model produced this answer.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["channel", "channel_message_id"],
                condition=~Q(channel_message_id=""),
                name="message_unique_per_channel",
            )
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"]),
            # The parents' messages no turn has taken yet: what every turn's claim and the sweeper look for,
            # found without reading a long conversation's answered messages.
            models.Index(fields=["conversation", "created_at"], name="message_unanswered",
                         condition=Q(role="user", processed_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"{self.role} message #{self.pk}"  # no text: it may hold a phone or e-mail (admin titles, history)


class ReasoningStep(models.Model):
    class Kind(models.TextChoices):
        THINK = "think", "Think"
        ACT = "act", "Act"
        OBSERVE = "observe", "Observe"
        ANSWER = "answer", "Answer"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="steps")
    cycle = models.PositiveSmallIntegerField()
    position = models.PositiveSmallIntegerField(help_text="Order of the step within its turn.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    content = models.TextField(blank=True)
    tool_name = models.CharField(max_length=64, blank=True)
    tool_call_id = models.CharField(max_length=128, blank=True)
    tool_arguments = models.JSONField(null=True, blank=True)
    tool_result = models.JSONField(null=True, blank=True)
    model = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField()
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["message", "position"]
        constraints = [models.UniqueConstraint(fields=["message", "position"], name="step_position_unique")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.position} {self.tool_name}"


class FaqEntry(models.Model):
    """One question and its answer, in one language; a translation points at the entry it translates.

    The FAQ search (chatbot/faq.py) reads every language in English words, so a question in any language finds
    the entry, and answers with its translation in the parent's language when there is one."""

    school = models.ForeignKey(
        "bookings.School", null=True, blank=True, on_delete=models.CASCADE, related_name="faq_entries",
        help_text="Empty: applies to every school.",
    )
    language = models.CharField(max_length=8, choices=settings.LANGUAGES, default="en",
                                help_text="The language the question and answer are written in.")
    translation_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="translations",
        help_text="The entry this one translates (empty for an entry in its own right).",
    )
    question = models.CharField(max_length=300)
    answer = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    related_topics = models.JSONField(default=list, blank=True)
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["school", "question"]
        verbose_name = "FAQ entry"
        verbose_name_plural = "FAQ entries"
        constraints = [
            models.UniqueConstraint(fields=["school", "question"], name="faq_question_unique"),
            models.UniqueConstraint(fields=["translation_of", "language"], name="faq_one_translation_per_language"),
        ]

    def __str__(self) -> str:
        return self.question

    def clean(self) -> None:
        original = self.translation_of
        if original is None:
            return
        if original.pk == self.pk or original.translation_of_id is not None:
            raise ValidationError({"translation_of": "Choose an entry in its own right, not a translation."})
        if original.school_id != self.school_id:
            raise ValidationError({"translation_of": "A translation belongs to the same school as its entry."})
        if original.language == self.language:
            raise ValidationError({"language": "A translation is in another language than its entry."})


class ReviewScenario(models.Model):
    """A reviewed conversation kept as a regression scenario for `manage.py evaluate --saved`.

    It holds what the replay needs, copied when it was saved, so it runs the same whatever happens to the
    school later: the parent's messages with their timing, the school's rules and FAQ, the parent's tours and
    the full slots and closures at the start, and the end state the reviewer expects
    (quality/evaluation/reviewed.py turns it into a Scenario and reads its expectations).
    """

    conversation = models.ForeignKey(Conversation, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="review_scenarios", help_text="The conversation it was saved from.")
    school = models.ForeignKey("bookings.School", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="review_scenarios")
    title = models.CharField(max_length=200)
    note = models.TextField(blank=True, help_text="Why it was saved: what went right, or what must not happen again.")
    starts_at = models.DateTimeField(help_text="The conversation's first message: the replay runs at this moment.")
    fixture = models.JSONField(default=dict, help_text="The school's rules and FAQ entries when it was saved.")
    parent = models.JSONField(default=dict, blank=True, help_text="The parent's details and whether they were known.")
    setup = models.JSONField(default=list, blank=True,
                             help_text="The parent's tours, full slots and closures at the start.")
    script = models.JSONField(default=list, help_text="The parent's messages: text, seconds from the start, burst.")
    expect = models.JSONField(default=list, blank=True, help_text="The expected end state (see docs/evaluation.md).")
    follow_up = models.BooleanField(
        default=True, help_text="After the parent's own messages, a simulated parent answers further questions "
                                "from the conversation's facts (for models that ask in another order).")
    is_active = models.BooleanField(default=True, help_text="Run by `evaluate --saved`.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "regression scenario"
        verbose_name_plural = "regression scenarios"

    def __str__(self) -> str:
        return f"{self.scenario_id}: {self.title}"

    @property
    def scenario_id(self) -> str:
        return f"reviewed-{self.pk}"


class ReviewScenarioResult(models.Model):
    """One `evaluate` of a regression scenario: k runs with one model, graded on the final database state."""

    scenario = models.ForeignKey(ReviewScenario, on_delete=models.CASCADE, related_name="results")
    run_at = models.DateTimeField(db_index=True)
    model = models.CharField(max_length=100)
    k = models.PositiveSmallIntegerField()
    runs = models.PositiveSmallIntegerField()
    passed_runs = models.PositiveSmallIntegerField()
    pass_k = models.FloatField(help_text="tau-bench pass^k: the chance that k runs all pass.")
    failures = models.TextField(blank=True, help_text="What failed, per failed run.")
    transcript = models.JSONField(default=list, blank=True, help_text="The first failed run (else the first run).")
    seconds = models.FloatField(default=0)

    class Meta:
        ordering = ["-run_at", "-id"]
        verbose_name = "result"
        indexes = [models.Index(fields=["scenario", "-run_at"])]

    def __str__(self) -> str:
        return f"{self.scenario_id_text}: {self.passed_runs}/{self.runs} with {self.model}"

    @property
    def scenario_id_text(self) -> str:
        return f"reviewed-{self.scenario_id}"

    @property
    def passed(self) -> bool:
        return self.runs > 0 and self.passed_runs == self.runs


class RejectedInbound(models.Model):
    """A dead letter: one message (or event) of a signed webhook delivery that could not be read (a field of
    another type than the platform documents, an id longer than its column). The delivery's other messages were
    stored and answered; the platform got its 200 (a 400 for a Chatwoot event, which carries one message), so it
    does not deliver the same bad message forever (chatbot/channels/inbound.py)."""

    channel = models.CharField(max_length=16, choices=Channel.choices)
    reason = models.CharField(max_length=300, help_text="What could not be read.")
    item = models.JSONField(help_text="The message as received (NUL and lone surrogates cleaned).")
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the item: a redelivery is kept once.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "rejected inbound message"
        constraints = [models.UniqueConstraint(fields=["channel", "fingerprint"], name="one_dead_letter_per_item")]

    def __str__(self) -> str:
        return f"{self.get_channel_display()}: {self.reason}"


# Tour reminders live in their own module (chatbot/reminders/), registered with this app.
from chatbot.reminders.models import ReminderSettings, SentReminder  # noqa: E402, F401
