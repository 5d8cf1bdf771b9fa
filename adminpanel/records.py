"""Admin pages of records the product writes (steps, messages, moves, job runs, results): staff read, never edit."""

from contextvars import ContextVar
from typing import Any

from django.template.response import TemplateResponse

from adminpanel.services import contact_details_for
from bookings.models import School
from plumbing.logging import mask_contact_details

_viewer: ContextVar = ContextVar("record_viewer", default=None)


class ReadOnlyMixin:
    """A record of what happened: viewable, not editable, not deletable."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ContactDetailsMaskedMixin:
    """Record pages that show what parents wrote (messages, reasoning steps): phones and e-mails in them are masked
    for a viewer who may not see them (adminpanel.services.contact_details_for, as on the review page and in the
    exports). The viewer is set for the whole view, rendering included; outside a view everything is masked."""

    def changeform_view(self, request, *args, **kwargs):
        return self._as_viewer(request, super().changeform_view, request, *args, **kwargs)

    def changelist_view(self, request, *args, **kwargs):
        return self._as_viewer(request, super().changelist_view, request, *args, **kwargs)

    @staticmethod
    def _as_viewer(request, view, *args, **kwargs):
        token = _viewer.set(request.user)
        try:
            response = view(*args, **kwargs)
            if isinstance(response, TemplateResponse) and not response.is_rendered:
                response.render()
            return response
        finally:
            _viewer.reset(token)

    @staticmethod
    def shown(value: Any, school: School | None) -> Any:
        """`value` as the current viewer may see it."""
        region = school.default_phone_region if school is not None else ""
        viewer = _viewer.get()
        return contact_details_for(viewer, value, region) if viewer is not None else mask_contact_details(value,
                                                                                                         region)
