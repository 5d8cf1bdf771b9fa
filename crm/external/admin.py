"""Admin for dead letters (with a "Retry" action) and the idempotency ledger (read-only)."""

from django.contrib import admin, messages
from django.utils import timezone

from crm.models import ExternalCall, FailedTask


@admin.register(FailedTask)
class FailedTaskAdmin(admin.ModelAdmin):
    list_display = ("created_at", "task_name", "args", "reason", "system", "status_code", "short_error", "resolved_at")
    list_filter = ("reason", "system", ("resolved_at", admin.EmptyFieldListFilter))
    search_fields = ("task_name", "error", "ledger_key")
    readonly_fields = ("task_name", "task_id", "signature", "args", "kwargs", "reason", "system", "status_code",
                       "ledger_key", "error", "retries", "created_at", "resolved_at", "resolution")
    actions = ("retry", "mark_resolved")
    date_hierarchy = "created_at"

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="error")
    def short_error(self, obj: FailedTask) -> str:
        return obj.error[:120]

    @admin.action(description="Retry the selected tasks now")
    def retry(self, request, queryset) -> None:
        from crm.external.tasks import retry_failed_task

        count = 0
        for failed in queryset.filter(resolved_at__isnull=True):
            retry_failed_task.delay(failed.pk)
            count += 1
        self.message_user(request, f"{count} task(s) sent again.", messages.SUCCESS)

    @admin.action(description="Mark the selected tasks as resolved")
    def mark_resolved(self, request, queryset) -> None:
        count = queryset.filter(resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolution=f"Resolved by {request.user.get_username()}.")
        self.message_user(request, f"{count} task(s) marked resolved.", messages.SUCCESS)


@admin.register(ExternalCall)
class ExternalCallAdmin(admin.ModelAdmin):
    list_display = ("key", "system", "state", "external_id", "attempts", "claimed_at", "done_at")
    list_filter = ("system", "state")
    search_fields = ("key", "external_id")
    readonly_fields = [f.name for f in ExternalCall._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
