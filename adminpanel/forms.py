"""Forms of the staff console's desk."""

from django import forms

from bookings.models import TourBooking

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
