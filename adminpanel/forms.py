"""Forms of the staff console's desk."""

from django import forms
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.utils.html import format_html

from bookings.models import TourBooking
from chatbot.models import FaqEntry

NOTIFY_LABEL = "Tell the parent in their chat (web chat, WhatsApp or Chatwoot)"


class CancelTourForm(forms.Form):
    reason = forms.CharField(
        max_length=300, widget=forms.Textarea(attrs={"rows": 3, "cols": 60, "autofocus": True}),
        help_text="Stored on the booking and the CRM activity, and sent to the parent.",
    )
    notify = forms.BooleanField(required=False, initial=True, label=NOTIFY_LABEL)


class RescheduleTourForm(forms.Form):
    new_date = forms.DateField(label="New date", widget=forms.DateInput(attrs={"type": "date", "autofocus": True}))
    new_time = forms.ChoiceField(label="New time")
    notify = forms.BooleanField(required=False, initial=True, label=NOTIFY_LABEL)

    # BookingError.field (written for the agent's tools) -> this form's field
    ERROR_FIELDS = {"preferred_date": "new_date", "new_date": "new_date", "preferred_time": "new_time",
                    "new_time": "new_time"}

    def __init__(self, *args, booking: TourBooking, **kwargs):
        super().__init__(*args, **kwargs)
        times = sorted(booking.school.tour_start_times)
        self.fields["new_time"].choices = [(t, t) for t in times]
        self.fields["new_time"].help_text = f"Tours at {booking.school.name} start at {', '.join(times)}."
        self.fields["new_date"].help_text = f"In the school's time zone ({booking.school.time_zone})."


# --- the FAQ ------------------------------------------------------------------------------------------


class TagsField(forms.CharField):
    """A list of short words typed as "fees, tuition, scholarships": one text box, not a JSON list."""

    widget = forms.TextInput(attrs={"class": "vLargeTextField console-tags", "placeholder": "fees, tuition, bursary"})

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(str(tag) for tag in value)
        return value

    def to_python(self, value) -> list[str]:
        if isinstance(value, list | tuple):
            words = [str(tag) for tag in value]
        else:
            words = str(value or "").replace("\n", ",").split(",")
        tags: dict[str, str] = {}
        for word in words:
            tag = " ".join(word.split())
            if tag:
                tags.setdefault(tag.casefold(), tag)  # "Fees" and "fees" are one tag
        return list(tags.values())

    def validate(self, value) -> None:
        if self.required and not value:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        too_long = [tag for tag in value if len(tag) > 60]
        if too_long:
            raise forms.ValidationError(f"A tag is a word or a short phrase; “{too_long[0][:60]}…” is too long.")


class TopicSelector(FilteredSelectMultiple):
    """The admin's two-list selector, in a wrapper of its own: its script moves the widget to the front of its
    parent, which for a plain (not related) field would be the row with the label."""

    def render(self, name, value, attrs=None, renderer=None):
        return format_html('<div class="console-selector">{}</div>', super().render(name, value, attrs, renderer))


class FaqEntryForm(forms.ModelForm):
    """Tags as a comma-separated line; related topics picked from the other entries' questions (those of the same
    school and those for every school), in the admin's two-list selector."""

    tags = TagsField(required=False, help_text="Words parents might use for this question, separated by commas.")
    related_topics = forms.MultipleChoiceField(
        required=False, label="Related topics",
        help_text="Offered to the parent as follow-up questions after this answer (same school or every school).",
    )

    class Meta:
        model = FaqEntry
        fields = ("school", "language", "translation_of", "question", "answer", "tags", "related_topics", "is_active")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        originals = FaqEntry.objects.filter(translation_of__isnull=True).exclude(pk=self.instance.pk)
        self.fields["translation_of"].queryset = originals.select_related("school").order_by("question")
        self.fields["language"].required = False  # a form that does not say (the dashboard's one step) is English
        self._entries = list(FaqEntry.objects.select_related("school").exclude(pk=self.instance.pk)
                             .order_by("school__name", "question").only("question", "school__name", "school_id"))
        school_id = self.instance.school_id or str(self.initial.get("school") or "")
        school_id = int(school_id) if str(school_id).isdigit() else None
        choices: dict[str, str] = {}
        for entry in self._entries:
            if school_id and entry.school_id not in (None, school_id):
                continue
            if entry.school_id and entry.school_id == school_id:
                choices.setdefault(entry.question, entry.question)  # the entry's own school: no need to say
            else:
                where = entry.school.name if entry.school else "every school"
                choices.setdefault(entry.question, f"{entry.question} ({where})")
        for topic in self.instance.related_topics or []:  # a topic whose entry was renamed or removed stays visible
            choices.setdefault(str(topic), f"{topic} (no such entry)")
        field = self.fields["related_topics"]
        field.choices = sorted(choices.items(), key=lambda item: item[1].casefold())
        field.widget = TopicSelector("related topics", is_stacked=False, choices=field.choices)

    def clean_language(self) -> str:
        return self.cleaned_data.get("language") or "en"

    def clean(self):
        cleaned = super().clean()
        school = cleaned.get("school")
        topics = cleaned.get("related_topics") or []
        allowed = {entry.question for entry in self._entries
                   if entry.school_id is None or (school is not None and entry.school_id == school.pk)}
        kept = set(self.instance.related_topics or [])
        wrong = [topic for topic in topics if topic not in allowed and topic not in kept]
        if wrong:
            where = school.name if school else "every school"
            self.add_error("related_topics", f"“{wrong[0]}” is not a question for {where}.")
        if cleaned.get("question") and cleaned["question"] in topics:
            self.add_error("related_topics", "An entry cannot be its own related topic.")
        return cleaned
