"""Conversation review: the list (annotated, filtered, searchable), the transcript page with the agent's
reasoning, rating (one click, keyboard shortcuts, bulk), the review queue (conversations assigned to
reviewers, worked through with `n` within the filtered list), and exports that honour the list's filters.
Times are each conversation's school's (adminpanel.schooltime).

Registered for `chatbot.Conversation` in adminpanel/admins/chatbot.py. Conversations are a
record: nothing but the rating changes here. Rating needs `chatbot.change_conversation`
(the Reviewer group has it; every other field is read-only), reading needs `view`.
"""

import copy
import json
import math
import re
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.options import IS_POPUP_VAR
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ERROR_FLAG, PAGE_VAR, IncorrectLookupParameters
from django.core.exceptions import PermissionDenied, SuspiciousOperation, ValidationError
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpResponseBadRequest, HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import Truncator, smart_split, unescape_string_literal

from adminpanel import exports, scenarios, schooltime, selectors, services
from bookings.models import TourBooking
from chatbot.models import Conversation, Message
from plumbing.logging import mask_phone

CHANGELIST_FILTERS = "_changelist_filters"
TRANSCRIPT_PAGE_VAR = "page"


def pretty_json(value) -> str:
    if value is None:
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def rating_badge(conversation: Conversation, *, with_who: bool = True) -> str:
    if not conversation.rating:
        return mark_safe("<span class='cr-badge cr-unrated'>unrated</span>")  # noqa: S308 - a constant
    who = ""
    if with_who and conversation.rated_at:
        by = conversation.rated_by.get_username() if conversation.rated_by else "someone"
        who = format_html("<br><span class='cr-who'>{} · {}</span>", by,
                          schooltime.show(conversation.rated_at, conversation.school, schooltime.SHORT))
    return format_html("<span class='cr-badge cr-{}'>{}</span>{}", conversation.rating,
                       conversation.get_rating_display(), who)


class RatingFilter(admin.SimpleListFilter):
    title = "rating"
    parameter_name = "rated"

    def lookups(self, request, model_admin):
        return [("good", "Good"), ("bad", "Bad"), ("unrated", "Unrated")]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "unrated":
            return queryset.filter(rating="")
        if value in ("good", "bad"):
            return queryset.filter(rating=value)
        return queryset


class HandedOffFilter(admin.SimpleListFilter):
    title = "handed off"
    parameter_name = "handed_off"

    def lookups(self, request, model_admin):
        return [("yes", "Handed off"), ("no", "Not handed off")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(selectors.HANDED_OFF)
        if self.value() == "no":
            return queryset.exclude(selectors.HANDED_OFF)
        return queryset


class LanguageFilter(admin.SimpleListFilter):
    """Conversations in which the parent wrote in a language."""

    title = "parent's language"
    parameter_name = "language"

    def lookups(self, request, model_admin):
        return settings.LANGUAGES

    def queryset(self, request, queryset):
        return selectors.parent_wrote_in(queryset, self.value()) if self.value() else queryset


class ReviewerFilter(admin.SimpleListFilter):
    """The review queue: mine, nobody's, or a given reviewer's."""

    title = "review queue"
    parameter_name = "reviewer"

    def lookups(self, request, model_admin):
        others = [(str(user.pk), user.get_username()) for user in services.reviewers()
                  if user.pk != request.user.pk]
        return [("me", "Assigned to me"), ("none", "Not assigned"), *others]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "me":
            return queryset.filter(reviewer=request.user)
        if value == "none":
            return queryset.filter(reviewer__isnull=True)
        if value and value.isdigit():
            return queryset.filter(reviewer_id=int(value))
        return queryset


class FallbackFilter(admin.SimpleListFilter):
    title = "model fallback"
    parameter_name = "fallback"

    def lookups(self, request, model_admin):
        return [("yes", "Fell back to the offline model"), ("no", "First model answered")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(selectors.FELL_BACK)
        if self.value() == "no":
            return queryset.exclude(selectors.FELL_BACK)
        return queryset


class ReviewerChoiceField(forms.ModelChoiceField):
    """A reviewer, or None when the choice is empty or not a reviewer: the assign action says so, instead of the
    whole action bar failing with "No action selected."."""

    def clean(self, value):
        try:
            return super().clean(value)
        except ValidationError:
            return None

    def label_from_instance(self, obj) -> str:
        return obj.get_username()


class ReviewerActionForm(ActionForm):
    """The list's action bar, with the reviewer that "Assign to the chosen reviewer" gives conversations to."""

    reviewer = ReviewerChoiceField(queryset=services.reviewers(), required=False, empty_label="reviewer…",
                                      label="Reviewer")


# The review queue's own link: my unrated conversations, newest first.
MY_QUEUE = {"reviewer": "me", "rated": "unrated"}


class ConversationAdmin(schooltime.SchoolTimeAdmin, admin.ModelAdmin):
    list_display = ("started", "school_column", "channel", "contact_column", "messages_column", "outcome_column",
                    "tokens_column", "cost_column", "slowest_turn", "rating_column", "reviewer_column")
    list_display_links = ("started",)
    list_filter = (ReviewerFilter, RatingFilter, "outcome", FallbackFilter, HandedOffFilter, LanguageFilter, "school",
                   "channel", "status", "started_at")
    # What the search box looks in; get_search_results does it with EXISTS subqueries (no DISTINCT over joins).
    search_fields = ("contact__name", "contact__preferred_name", "contact__whatsapp_name", "contact__phone",
                     "=contact__tour_bookings__reference", "messages__text")
    search_help_text = "Parent's name or phone, a booking reference (T-...), or words from the conversation."
    list_select_related = ("school", "contact", "rated_by", "reviewer")
    list_per_page = 50
    ordering = ("-started_at", "-id")
    actions = ("assign_to_me", "assign_to_reviewer", "unassign", "rate_good", "rate_bad", "clear_rating",
               "export_jsonl", "export_csv")
    action_form = ReviewerActionForm
    change_list_template = "adminpanel/conversation_change_list.html"

    class Media:
        js = ("adminpanel/console.js",)  # the stylesheet comes with every console page (admin/base_site.html)

    # --- permissions: a record, only the rating changes ----------------------------------

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request) -> QuerySet[Conversation]:
        # select_related here too (not only list_select_related): the transcript page shows all three.
        return selectors.with_review_stats(super().get_queryset(request)).select_related(*self.list_select_related)

    def get_search_results(self, request, queryset, search_term):
        """Every word must match the parent's name or phone, a booking reference, or a message's text.

        Multi-valued matches (bookings, messages) are EXISTS subqueries, so the list needs no DISTINCT.
        """
        for word in smart_split(search_term or ""):
            if word[0] in "\"'" and word[-1] == word[0]:
                word = unescape_string_literal(word)
            if not word:
                continue
            match = (Q(contact__name__icontains=word) | Q(contact__preferred_name__icontains=word)
                     | Q(contact__whatsapp_name__icontains=word)
                     | Q(Exists(TourBooking.objects.filter(contact_id=OuterRef("contact_id"), reference__iexact=word)))
                     | Q(Exists(Message.objects.filter(conversation_id=OuterRef("pk"), text__icontains=word))))
            digits = re.sub(r"\D", "", word)
            if len(digits) >= 3 and len(digits) >= len(word) - 3:  # a phone number, however it is written
                match |= Q(contact__phone__contains=digits)
            queryset = queryset.filter(match)
        return queryset, False

    # --- list columns ------------------------------------------------------------------

    @admin.display(description="Started", ordering="started_at")
    def started(self, obj: Conversation) -> str:
        """In the conversation's school's zone, named under it (a list may mix schools)."""
        return format_html("{}<br><span class='cr-zone'>{}</span>",
                           schooltime.show(obj.started_at, obj.school, "j M y, H:i", zone=False),
                           schooltime.zone_label(obj.school, obj.started_at))

    @admin.display(description="School", ordering="school__name")
    def school_column(self, obj: Conversation) -> str:
        name = obj.school.name
        return format_html("<span title='{}'>{}</span>", name, Truncator(name).chars(24)) if len(name) > 24 else name

    @admin.display(description="Contact", ordering="contact__name")
    def contact_column(self, obj: Conversation) -> str:
        phone = mask_phone(obj.contact.phone)
        if phone:
            return format_html("{}<br><span class='cr-muted'>{}</span>", obj.contact.display_name, phone)
        return obj.contact.display_name

    @admin.display(description="Messages", ordering="message_count")
    def messages_column(self, obj: Conversation) -> int:
        return obj.message_count

    @admin.display(description="Outcome", ordering="outcome")
    def outcome_column(self, obj: Conversation) -> str:
        return format_html("<span class='cr-outcome cr-outcome-{}'>{}</span>", obj.outcome or "none",
                           obj.get_outcome_display())

    @admin.display(description="Tokens", ordering="total_tokens")
    def tokens_column(self, obj: Conversation) -> str:
        return f"{obj.total_tokens:,}"

    @admin.display(description="Cost", ordering="total_cost")
    def cost_column(self, obj: Conversation) -> str:
        return f"${obj.total_cost:.4f}"

    @admin.display(description="Slowest turn", ordering="slowest_turn_ms")
    def slowest_turn(self, obj: Conversation) -> str:
        return f"{obj.slowest_turn_ms:,} ms" if obj.slowest_turn_ms is not None else "-"

    @admin.display(description="Rating", ordering="rating")
    def rating_column(self, obj: Conversation) -> str:
        return rating_badge(obj)

    @admin.display(description="Reviewer", ordering="reviewer__username")
    def reviewer_column(self, obj: Conversation) -> str:
        return obj.reviewer.get_username() if obj.reviewer else "-"

    # --- the review queue -------------------------------------------------------------------

    def _assign(self, request, queryset, reviewer) -> None:
        try:
            count = services.assign_reviewer(queryset, reviewer=reviewer, by=request.user)
        except services.AssignError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        plural = "s" if count != 1 else ""
        where = f"in {reviewer.get_username()}'s review queue" if reviewer else "out of the review queue"
        self.message_user(request, f"{count} conversation{plural} {where}.", messages.SUCCESS)

    @admin.action(description="Assign selected to me for review", permissions=["change"])
    def assign_to_me(self, request, queryset) -> None:
        self._assign(request, queryset, request.user)

    @admin.action(description="Assign selected to the chosen reviewer", permissions=["change"])
    def assign_to_reviewer(self, request, queryset) -> None:
        reviewer = self.action_form.base_fields["reviewer"].clean(request.POST.get("reviewer") or None)
        if reviewer is None:
            self.message_user(request, "Choose a reviewer (someone who may rate conversations) next to the action "
                                       "first.", messages.WARNING)
            return
        self._assign(request, queryset, reviewer)

    @admin.action(description="Take selected out of the review queue", permissions=["change"])
    def unassign(self, request, queryset) -> None:
        self._assign(request, queryset, None)

    # --- bulk actions --------------------------------------------------------------------

    def _bulk_rate(self, request, queryset, rating: str) -> None:
        count = services.rate_conversations(queryset, rating=rating, user=request.user)
        word = f"rated {rating}" if rating else "unrated"
        self.message_user(request, f"{count} conversation{'s' if count != 1 else ''} {word}.", messages.SUCCESS)

    @admin.action(description="Rate selected conversations good", permissions=["change"])
    def rate_good(self, request, queryset) -> None:
        self._bulk_rate(request, queryset, Conversation.Rating.GOOD)

    @admin.action(description="Rate selected conversations bad", permissions=["change"])
    def rate_bad(self, request, queryset) -> None:
        self._bulk_rate(request, queryset, Conversation.Rating.BAD)

    @admin.action(description="Clear the rating of selected conversations", permissions=["change"])
    def clear_rating(self, request, queryset) -> None:
        self._bulk_rate(request, queryset, "")

    @admin.action(description="Export selected conversations with traces (JSONL)", permissions=["view"])
    def export_jsonl(self, request, queryset):
        ids = exports.conversation_ids(queryset.order_by("-started_at", "-id"))
        return exports.streaming_response(request, exports.jsonl_chunks(ids), kind="jsonl")

    @admin.action(description="Export selected conversations (CSV)", permissions=["view"])
    def export_csv(self, request, queryset):
        ids = exports.conversation_ids(queryset.order_by("-started_at", "-id"))
        return exports.streaming_response(request, exports.csv_chunks(ids), kind="csv")

    # --- urls --------------------------------------------------------------------------

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view
        return [
            path("export.jsonl", wrap(self.export_view), {"kind": "jsonl"}, name="{}_{}_export_jsonl".format(*info)),
            path("export.csv", wrap(self.export_view), {"kind": "csv"}, name="{}_{}_export_csv".format(*info)),
            path("next-unrated/", wrap(self.next_unrated_view), name="{}_{}_next_unrated".format(*info)),
            path("<path:object_id>/take/", wrap(self.take_view), name="{}_{}_take".format(*info)),
            path("<path:object_id>/rate/", wrap(self.rate_view), name="{}_{}_rate".format(*info)),
            path("<path:object_id>/scenario/", wrap(self.scenario_view), name="{}_{}_scenario".format(*info)),
            *super().get_urls(),
        ]

    def _url(self, name: str, *args) -> str:
        return reverse(f"{self.admin_site.name}:{self.opts.app_label}_{self.opts.model_name}_{name}", args=args)

    # --- the list with export buttons honouring the filters ----------------------------------

    def changelist_view(self, request, extra_context=None):
        query = request.GET.copy()
        for key in (PAGE_VAR, ERROR_FLAG, IS_POPUP_VAR):
            query.pop(key, None)
        filters = query.urlencode()
        extra_context = {
            **(extra_context or {}),
            "export_query": f"?{filters}" if filters else "",
            "next_unrated_url": self._url("next_unrated") + (f"?{urlencode({CHANGELIST_FILTERS: filters})}"
                                                              if filters else ""),
            "my_queue_url": self._url("changelist") + f"?{urlencode(MY_QUEUE)}",
            "in_my_queue": request.GET.get("reviewer") == "me",
        }
        if extra_context["in_my_queue"]:
            extra_context.setdefault("title", "My review queue")
        return super().changelist_view(request, extra_context)

    def _filtered(self, request, filters: str) -> QuerySet[Conversation]:
        """The list's queryset under the given changelist filters (a query string), as the list shows it."""
        listing = copy.copy(request)
        listing.GET = QueryDict(filters)
        return self.get_changelist_instance(listing).queryset

    def export_view(self, request, kind: str):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        try:
            queryset = self.get_changelist_instance(request).queryset
        except (IncorrectLookupParameters, SuspiciousOperation):
            return HttpResponseBadRequest("Those filters are not valid for the conversation list.")
        ids = exports.conversation_ids(queryset)
        chunks = exports.jsonl_chunks(ids) if kind == "jsonl" else exports.csv_chunks(ids)
        return exports.streaming_response(request, chunks, kind=kind)

    def next_unrated_view(self, request):
        """The newest unrated conversation of the (filtered) list, or back to the list when none is left."""
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        filters = request.GET.get(CHANGELIST_FILTERS, "")
        try:
            queryset = self._filtered(request, filters) if filters else Conversation.objects.all()
        except (IncorrectLookupParameters, SuspiciousOperation):
            queryset = Conversation.objects.all()
        found = selectors.next_unrated(within=queryset)
        suffix = f"?{urlencode({CHANGELIST_FILTERS: filters})}" if filters else ""
        if found is None:
            self.message_user(request, "No unrated conversation left here.", messages.INFO)
            return redirect(self._url("changelist") + (f"?{filters}" if filters else ""))
        return redirect(self._url("change", found) + suffix)

    # --- the transcript page ---------------------------------------------------------------

    def change_view(self, request, object_id, form_url="", extra_context=None):
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_or_change_permission(request, conversation):
            raise PermissionDenied
        if request.method == "POST":
            return self.rate_view(request, object_id)
        filters = request.GET.get(CHANGELIST_FILTERS, "")
        try:
            scope = self._filtered(request, filters) if filters else None
        except (IncorrectLookupParameters, SuspiciousOperation):
            scope = None
        around = selectors.neighbours(conversation, within=scope)
        suffix = f"?{urlencode({CHANGELIST_FILTERS: filters})}" if filters else ""
        pages = max(1, math.ceil(conversation.message_count / selectors.TRANSCRIPT_PAGE))
        try:
            page = min(max(int(request.GET.get(TRANSCRIPT_PAGE_VAR, 1)), 1), pages)
        except ValueError:
            page = 1
        transcript = selectors.transcript_with_steps(conversation, page)
        region = conversation.school.default_phone_region

        def shown(value):  # phones and e-mails masked for those who do not call parents back (a Reviewer)
            return services.contact_details_for(request.user, value, region)

        for message in transcript:
            for step in message.steps.all():
                step.shown_content = shown(step.content)
                step.arguments_json = pretty_json(shown(step.tool_arguments))
                step.result_json = pretty_json(shown(step.tool_result))
                step.tokens = step.prompt_tokens + step.completion_tokens
            message.shown_text = shown(message.text)
            message.tokens = message.prompt_tokens + message.completion_tokens
            message.fell_back = "->" in (message.model or "")
            blocks = (message.payload or {}).get("blocks") if isinstance(message.payload, dict) else None
            message.blocks_json = pretty_json(shown(blocks)) if blocks else ""
        can_see_bookings = request.user.has_perm("bookings.view_tourbooking")
        bookings = list(TourBooking.objects.filter(contact_id=conversation.contact_id).select_related("school")
                        .order_by("-starts_at")[:10])
        preserved = self.get_preserved_filters(request)
        changelist_url = add_preserved_filters({"preserved_filters": preserved, "opts": self.opts},
                                               self._url("changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Conversation #{conversation.pk}",
            "subtitle": str(conversation.contact),
            "opts": self.opts,
            "app_label": self.opts.app_label,
            "original": conversation,
            "conversation": conversation,
            "transcript": transcript,
            "transcript_page": page,
            "transcript_pages": pages,
            "earlier_url": self._page_url(request, page - 1) if page > 1 else "",
            "later_url": self._page_url(request, page + 1) if page < pages else "",
            "phone": mask_phone(conversation.contact.phone),
            "rating_badge": rating_badge(conversation),
            "can_rate": self.has_change_permission(request, conversation),
            "rate_url": self._url("rate", conversation.pk),
            "rate_action": self._url("rate", conversation.pk) + suffix,
            "changelist_url": changelist_url,
            "preserved_filters": preserved,
            "newer_url": self._url("change", around.newer) + suffix if around.newer else "",
            "older_url": self._url("change", around.older) + suffix if around.older else "",
            "next_unrated_url": self._url("change", around.next_unrated) + suffix if around.next_unrated else "",
            "bookings": bookings,
            "can_see_bookings": can_see_bookings,
            "has_view_permission": True,
            "zone_name": schooltime.zone_name(conversation.school),
            "zone_label": schooltime.zone_label(conversation.school, conversation.started_at),
            "scenario_url": self._url("scenario", conversation.pk)
            if request.user.has_perm("chatbot.add_reviewscenario") else "",
            "saved_scenarios": list(conversation.review_scenarios.order_by("pk")),
            "take_url": self._url("take", conversation.pk) + suffix
            if conversation.reviewer_id != request.user.pk and self.has_change_permission(request, conversation)
            else "",
            **(extra_context or {}),
        }
        request.current_app = self.admin_site.name
        return schooltime.render_in(TemplateResponse(request, "adminpanel/conversation_review.html", context),
                                    conversation.school)

    def scenario_view(self, request, object_id):
        """Turn this conversation into a regression scenario (adminpanel/scenarios.py)."""
        return scenarios.scenario_view(self, request, object_id)

    def take_view(self, request, object_id):
        """POST: put this conversation in my review queue, then back to it."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request, conversation):
            raise PermissionDenied
        self._assign(request, Conversation.objects.filter(pk=conversation.pk), request.user)
        query = f"?{request.GET.urlencode()}" if request.GET else ""
        return HttpResponseRedirect(self._url("change", conversation.pk) + query)

    @staticmethod
    def _page_url(request, page: int) -> str:
        query = request.GET.copy()
        query[TRANSCRIPT_PAGE_VAR] = str(page)
        return f"?{query.urlencode()}"

    @staticmethod
    def _wants_json(request) -> bool:
        return "application/json" in request.headers.get("Accept", "")

    def rate_view(self, request, object_id):
        """POST rating=good|bad|"" (clear) and, optionally, note: sets rated_by and rated_at. CSRF-protected."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None:
            return JsonResponse({"error": "No such conversation."}, status=404) if self._wants_json(request) \
                else self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request, conversation):
            if self._wants_json(request):
                return JsonResponse({"error": "You may not rate conversations."}, status=403)
            raise PermissionDenied
        note = request.POST.get("note")
        try:
            services.rate_conversation(conversation, rating=request.POST.get("rating", ""), note=note,
                                       user=request.user)
        except services.RatingError as exc:
            if self._wants_json(request):
                return JsonResponse({"error": str(exc)}, status=400)
            self.message_user(request, str(exc), messages.ERROR)
            return HttpResponseRedirect(self._url("change", conversation.pk))
        word = conversation.get_rating_display().lower() if conversation.rating else "unrated"
        self.log_change(request, conversation, f"Rated {word}." + (f" Note: {conversation.rating_note}"
                                                                   if conversation.rating_note else ""))
        if self._wants_json(request):
            return JsonResponse({
                "rating": conversation.rating,
                "rating_display": conversation.get_rating_display() if conversation.rating else "",
                "note": conversation.rating_note,
                "rated_by": request.user.get_username() if conversation.rating else "",
                "rated_at": conversation.rated_at.isoformat() if conversation.rated_at else "",
                "badge": rating_badge(conversation),
            })
        self.message_user(request, f"Conversation #{conversation.pk} {'rated ' if conversation.rating else ''}{word}.",
                          messages.SUCCESS)
        query = f"?{request.GET.urlencode()}" if request.GET else ""
        if request.POST.get("next") == "unrated":
            return redirect(self._url("next_unrated") + query)
        return HttpResponseRedirect(self._url("change", conversation.pk) + query)
