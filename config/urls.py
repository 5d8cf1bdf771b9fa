from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path

from plumbing import health


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever a page links: the site's icon, not a 404."""
    return redirect(static("favicon.svg"), permanent=True)


urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="prometheus-django-metrics"),
    path("favicon.ico", favicon, name="favicon"),
    path("", include("bookings.urls")),
    path("", include("chatbot.urls")),
]
