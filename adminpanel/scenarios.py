"""Regression scenarios in the console: "Turn into a regression scenario" on a conversation's review page, and the
scenarios' list and page with each one's latest result and history of `evaluate --saved` runs.

The capture, the expectations and the replay are quality/evaluation/reviewed.py; these views only show and ask.
Saving needs `chatbot.add_reviewscenario` (the Reviewer group has it) and reading the conversation.
"""

import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from adminpanel import schooltime
from adminpanel.records import ReadOnlyMixin
from chatbot.models import ReviewScenario, ReviewScenarioResult
from quality.evaluation import reviewed

EXPECT_HELP = (
    "A list of entries. Anything it does not name must not happen: no other booking, move, cancellation or "
    "callback. Entries: booked {date, time, child_name, child_age, parent_name, parent_phone, status "
    "(scheduled|cancelled), moved_from [date, time]}; moved {booking, date, time}; cancelled {booking, reason}; "
    "corrected {booking, child_name, ...}; callback {parent_name, parent_phone, best_time, specific_time, topic}; "
    "said {phrases}; not_said {text or pattern}. Dates YYYY-MM-DD, times HH:MM, as in the conversation; a text "
    "value \"~word\" means contains it, \"!~word\" doesn't. A booking key (t1...) is one of the parent's tours at "
    "the start."
)


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


class ExpectField(forms.CharField):
    """The expected end state as JSON text, read into a list (checked against the setup by the form)."""

    widget = forms.Textarea(attrs={"rows": 12, "cols": 90, "class": "vLargeTextField rs-json", "spellcheck": "false"})

    def to_python(self, value):
        text = super().to_python(value) or "[]"
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"This is not valid JSON: {exc.msg} (line {exc.lineno}).") from None

    def prepare_value(self, value):
        return value if isinstance(value, str) else _pretty(value if value is not None else [])


class FromConversationForm(forms.Form):
    title = forms.CharField(max_length=200)
    expect = ExpectField(label="Expected end state", required=False, help_text=EXPECT_HELP)
    must_not_say = forms.CharField(
        label="Must never be said", required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 90}),
        help_text="One phrase per line that no reply may contain (another family's name, a wrong promise...).")
    note = forms.CharField(label="Why", required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 90}),
                           help_text="What this conversation shows: what went right, or what must not happen again.")
    follow_up = forms.BooleanField(
        label="Let a simulated parent answer further questions", required=False, initial=True,
        help_text="After the parent's own messages, it answers from the conversation's facts, so a model that asks "
                  "in another order can still be graded.")

    def __init__(self, *args, setup: list[dict], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.setup = setup
        lines = _pretty(self.initial.get("expect") or []).count("\n") + 2
        self.fields["expect"].widget.attrs["rows"] = min(28, max(8, lines))

    def clean(self):
        cleaned = super().clean()
        if "expect" in cleaned:
            lines = (cleaned.get("must_not_say") or "").splitlines()
            try:
                cleaned["expectations"] = reviewed.clean_expectations(
                    [*cleaned["expect"], *reviewed.must_not_say(lines)], self.setup)
            except reviewed.ExpectationError as exc:
                self.add_error("expect", str(exc))
        return cleaned


def scenario_view(model_admin, request, object_id):
    """GET: the short form, prefilled from what the conversation ended with. POST: save the scenario."""
    conversation = model_admin.get_object(request, unquote(object_id))
    if conversation is None:
        return model_admin._get_obj_does_not_exist_redirect(request, model_admin.opts, object_id)
    if not (model_admin.has_view_or_change_permission(request, conversation)
            and request.user.has_perm("chatbot.add_reviewscenario")):
        raise PermissionDenied
    try:
        captured = reviewed.capture(conversation)
    except reviewed.ExpectationError as exc:
        model_admin.message_user(request, str(exc), messages.ERROR)
        return HttpResponseRedirect(reverse("admin:chatbot_conversation_change", args=[conversation.pk]))
    if request.method == "POST":
        form = FromConversationForm(request.POST, setup=captured.setup)
        if form.is_valid():
            data = form.cleaned_data
            saved = reviewed.create_from_conversation(
                conversation, title=data["title"], expect=data["expectations"], note=data["note"],
                follow_up=data["follow_up"], user=request.user)
            model_admin.log_change(request, conversation, f"Saved as regression scenario {saved.scenario_id}.")
            model_admin.message_user(
                request, f"Saved as regression scenario {saved.scenario_id}: `manage.py evaluate --saved` runs it.",
                messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:chatbot_reviewscenario_change", args=[saved.pk]))
    else:
        form = FromConversationForm(setup=captured.setup, initial={
            "title": reviewed.default_title(conversation, captured.expect), "expect": captured.expect,
            "follow_up": True})
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Turn conversation #{conversation.pk} into a regression scenario",
        "opts": model_admin.opts,
        "conversation": conversation,
        "form": form,
        "captured": captured,
        "script": script_lines(captured.script),
        "setup": [reviewed.describe_setup(item) for item in captured.setup],
        "prefilled": [reviewed.describe(entry) for entry in captured.expect] or ["nothing changes"],
        "back_url": reverse("admin:chatbot_conversation_change", args=[conversation.pk]),
        "zone_label": schooltime.zone_label(conversation.school, captured.starts_at),
    }
    request.current_app = model_admin.admin_site.name
    return schooltime.render_in(TemplateResponse(request, "adminpanel/review_scenario_form.html", context),
                                conversation.school)


def script_lines(script: list[dict]) -> list[dict]:
    """The parent's messages for display: "+0:42", the text, and whether it opens a new turn."""
    lines, previous = [], None
    for item in script:
        seconds = int(item.get("at") or 0)
        lines.append({"at": f"+{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}", "text": item["text"],
                      "new_turn": item.get("burst") != previous})
        previous = item.get("burst")
    return lines


# --- the scenarios' list and page -----------------------------------------------------------------------------------


def result_badge(passed_runs: int | None, runs: int | None) -> str:
    if not runs:
        return mark_safe("<span class='cr-badge cr-unrated'>not run yet</span>")  # noqa: S308 - a constant
    css, word = ("cr-good", "passed") if passed_runs == runs else ("cr-bad", "failed")
    return format_html("<span class='cr-badge {}'>{} {}/{}</span>", css, word, passed_runs, runs)


class ReviewScenarioForm(forms.ModelForm):
    expect = ExpectField(label="Expected end state", required=False, help_text=EXPECT_HELP)

    class Meta:
        model = ReviewScenario
        fields = ("title", "note", "is_active", "follow_up", "expect")
        widgets = {"note": forms.Textarea(attrs={"rows": 3, "cols": 90})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        lines = _pretty(self.instance.expect or []).count("\n") + 2
        self.fields["expect"].widget.attrs["rows"] = min(28, max(8, lines))

    def clean_expect(self):
        try:
            return reviewed.clean_expectations(self.cleaned_data["expect"], self.instance.setup or [])
        except reviewed.ExpectationError as exc:
            raise forms.ValidationError(str(exc)) from None


class ResultInline(admin.TabularInline):
    """The scenario's history: every `evaluate --saved` run of it, newest first."""

    model = ReviewScenarioResult
    extra = 0
    can_delete = False
    ordering = ("-run_at", "-id")
    fields = ("run_local", "outcome", "model", "k", "pass_k", "seconds", "failures_text")
    readonly_fields = fields
    verbose_name_plural = "history (evaluate --saved)"

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Run at")
    def run_local(self, obj: ReviewScenarioResult) -> str:
        return schooltime.show(obj.run_at, obj.scenario.school, schooltime.SHORT)

    @admin.display(description="Result")
    def outcome(self, obj: ReviewScenarioResult) -> str:
        return result_badge(obj.passed_runs, obj.runs)

    @admin.display(description="What failed")
    def failures_text(self, obj: ReviewScenarioResult) -> str:
        lines = obj.failures.splitlines()
        if not lines:
            return "-"
        shown = format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines[:6]))  # noqa: S308
        more = format_html("<br><span class='cr-muted'>and {} more</span>", len(lines) - 6) if len(lines) > 6 else ""
        return format_html("<div class='rs-failures'>{}{}</div>", shown, more)


class ReviewScenarioAdmin(schooltime.SchoolTimeAdmin, admin.ModelAdmin):
    form = ReviewScenarioForm
    list_display = ("scenario_id_column", "title", "latest_column", "result_count", "school", "source", "created_by",
                    "is_active")
    list_display_links = ("scenario_id_column", "title")
    list_filter = ("is_active", "school")
    search_fields = ("title", "note")
    list_select_related = ("school", "created_by", "conversation")
    inlines = (ResultInline,)
    readonly_fields = ("source", "replayed_at", "parent_column", "setup_column", "script_column", "latest_failures",
                       "latest_transcript", "created_by", "created_local")
    fieldsets = (
        (None, {"fields": ("title", "note", "is_active", "source", "created_by", "created_local")}),
        ("Latest result", {"fields": ("latest_failures", "latest_transcript")}),
        ("What the parent said, and the school at the start", {
            "fields": ("replayed_at", "parent_column", "script_column", "setup_column")}),
        ("Expected end state", {"fields": ("expect", "follow_up")}),
    )

    class Media:
        css = {"all": ("adminpanel/console.css",)}

    def has_add_permission(self, request) -> bool:
        return False  # made from a conversation's review page

    def get_queryset(self, request) -> QuerySet[ReviewScenario]:
        return reviewed.with_latest_result(super().get_queryset(request))

    @admin.display(description="Id", ordering="pk")
    def scenario_id_column(self, obj: ReviewScenario) -> str:
        return obj.scenario_id

    @admin.display(description="Latest result", ordering="latest_pass_k")
    def latest_column(self, obj: ReviewScenario) -> str:
        badge = result_badge(obj.latest_passed_runs, obj.latest_runs)
        if not obj.latest_run_at:
            return badge
        return format_html("{} <span class='rs-model'>{}</span><br><span class='cr-muted'>{}</span>", badge,
                           obj.latest_model, schooltime.show(obj.latest_run_at, obj.school, schooltime.SHORT))

    @admin.display(description="Evaluations", ordering="result_count")
    def result_count(self, obj: ReviewScenario) -> int:
        return obj.result_count

    @admin.display(description="From")
    def source(self, obj: ReviewScenario) -> str:
        if obj.conversation_id is None:
            return "-"
        url = reverse("admin:chatbot_conversation_change", args=[obj.conversation_id])
        return format_html("<a href='{}'>conversation #{}</a>", url, obj.conversation_id)

    @admin.display(description="Saved at")
    def created_local(self, obj: ReviewScenario) -> str:
        return schooltime.show(obj.created_at, obj.school or obj.fixture["school"]["time_zone"])

    @admin.display(description="Replayed at")
    def replayed_at(self, obj: ReviewScenario) -> str:
        return format_html("{} <span class='cr-muted'>(the clock of the replay: the conversation's first message)"
                           "</span>", schooltime.show(obj.starts_at, obj.school or obj.fixture["school"]["time_zone"]))

    @admin.display(description="Parent")
    def parent_column(self, obj: ReviewScenario) -> str:
        parent = obj.parent or {}
        known = "known to the concierge at the start" if parent.get("known") else "new to the concierge"
        return format_html("{} {} <span class='cr-muted'>({})</span>", parent.get("name") or "(no name)",
                           parent.get("phone") or "", known)

    @admin.display(description="At the start")
    def setup_column(self, obj: ReviewScenario) -> str:
        lines = [reviewed.describe_setup(item) for item in obj.setup] or ["no tours of the parent's, no full slots, "
                                                                          "no closures"]
        school = (obj.fixture or {}).get("school", {})
        lines.append(f"school rules: tours at {', '.join(school.get('tour_start_times', []))}, "
                     f"{school.get('seats_per_tour')} seats, {school.get('min_notice_hours')} h notice, "
                     f"{school.get('max_advance_days')} days ahead; {len((obj.fixture or {}).get('faqs', []))} FAQ "
                     "entries")
        return format_html("<ul class='rs-list'>{}</ul>", format_html_join("", "<li>{}</li>", ((x,) for x in lines)))

    @admin.display(description="The parent's messages")
    def script_column(self, obj: ReviewScenario) -> str:
        rows = format_html_join("", "<li class='{}'><span class='cr-muted'>{}</span> {}</li>", (
            ("rs-turn" if line["new_turn"] else "rs-burst", line["at"], line["text"])
            for line in script_lines(obj.script)))
        return format_html("<ol class='rs-script'>{}</ol>", rows)

    def _latest(self, obj: ReviewScenario) -> ReviewScenarioResult | None:
        if not hasattr(obj, "_latest_result"):
            obj._latest_result = obj.results.order_by("-run_at", "-id").first()
        return obj._latest_result

    @admin.display(description="Result")
    def latest_failures(self, obj: ReviewScenario) -> str:
        latest = self._latest(obj)
        if latest is None:
            return "Not run yet: python manage.py evaluate --saved"
        when = schooltime.show(latest.run_at, obj.school or obj.fixture["school"]["time_zone"])
        badge = result_badge(latest.passed_runs, latest.runs)
        head = format_html("{} with <code>{}</code>, k={}, pass^k {}, {}", badge, latest.model, latest.k,
                           f"{latest.pass_k:.2f}", when)
        if not latest.failures:
            return head
        return format_html("{}<pre class='rs-failures'>{}</pre>", head, latest.failures)

    @admin.display(description="Transcript")
    def latest_transcript(self, obj: ReviewScenario) -> str:
        latest = self._latest(obj)
        if latest is None or not latest.transcript:
            return "-"
        rows = format_html_join("", "<li class='rs-{}'><strong>{}</strong> {}</li>", (
            (entry.get("role"), "Parent" if entry.get("role") == "parent" else "Concierge", entry.get("text", ""))
            for entry in latest.transcript))
        return format_html("<details><summary>{} run</summary><ol class='rs-transcript'>{}</ol></details>",
                           "The first failed" if latest.failures else "The first", rows)


class ReviewScenarioResultAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Every `evaluate --saved` result, of every scenario: a record, read-only."""

    list_display = ("run_local", "scenario_link", "outcome", "model", "k", "pass_k", "seconds")
    list_filter = ("model", "run_at")
    search_fields = ("scenario__title", "model", "failures")
    list_select_related = ("scenario", "scenario__school")
    ordering = ("-run_at", "-id")
    fields = ("scenario_link", "run_local", "outcome", "model", "k", "runs", "passed_runs", "pass_k", "seconds",
              "failures")
    readonly_fields = fields

    @admin.display(description="Run at", ordering="run_at")
    def run_local(self, obj: ReviewScenarioResult) -> str:
        return schooltime.show(obj.run_at, obj.scenario.school, schooltime.SHORT)

    @admin.display(description="Scenario", ordering="scenario")
    def scenario_link(self, obj: ReviewScenarioResult) -> str:
        url = reverse("admin:chatbot_reviewscenario_change", args=[obj.scenario_id])
        return format_html("<a href='{}'>{}</a> {}", url, obj.scenario.scenario_id, obj.scenario.title)

    @admin.display(description="Result")
    def outcome(self, obj: ReviewScenarioResult) -> str:
        return result_badge(obj.passed_runs, obj.runs)
