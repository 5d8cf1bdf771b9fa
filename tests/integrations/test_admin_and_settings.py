"""The integrations admin (dead letters, ledger) and the settings checks."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from crm.models import ExternalCall, FailedTask

pytestmark = [pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


@pytest.mark.django_db
def test_admin_pages_open_with_data(admin_client):
    failed = FailedTask.objects.create(task_name="chatbot.tasks.deliver_chatwoot_message", signature="x", args=[7],
                                       reason="exhausted", system="chatwoot", status_code=503, error="503 x8")
    call = ExternalCall.objects.create(key="chatwoot:message:7:0", system="chatwoot", state="done", external_id="9")
    for url in ("/admin/crm/failedtask/", f"/admin/crm/failedtask/{failed.pk}/change/",
                "/admin/crm/externalcall/", f"/admin/crm/externalcall/{call.pk}/change/"):
        assert admin_client.get(url).status_code == 200, url
    response = admin_client.post("/admin/crm/failedtask/",
                                 {"action": "mark_resolved", "_selected_action": [failed.pk]})
    assert response.status_code == 302
    failed.refresh_from_db()
    assert failed.resolved_at and "Resolved by" in failed.resolution


def test_a_worker_setup_without_redis_is_flagged(settings):
    settings.AGENT_WORKER = True
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    with pytest.raises(SystemCheckError, match="crm.W001"):
        call_command("check", fail_level="WARNING")


def test_a_webhook_without_a_way_to_reply_is_flagged(settings):
    settings.CHATWOOT_WEBHOOK_SECRET, settings.CHATWOOT_URL = "s", ""
    with pytest.raises(SystemCheckError, match="crm.W002"):
        call_command("check", fail_level="WARNING")
