"""Admin pages of records the product writes (steps, messages, moves, job runs, results): staff read, never edit."""


class ReadOnlyMixin:
    """A record of what happened: viewable, not editable, not deletable."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
