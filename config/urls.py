from django.contrib import admin
from django.urls import include, path

from config import health

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="prometheus-django-metrics"),
    path("", include("bookings.urls")),
    path("", include("chatbot.urls")),
]
