from django.urls import path

from chatbot import views, webhooks

app_name = "chatbot"

urlpatterns = [
    path("", views.demo_page, name="demo"),
    path("chat/<slug:school_slug>/", views.chat_page, name="chat"),
    path("calendar/<str:token>.ics", views.booking_ics, name="booking_ics"),
    path("webhooks/chatwoot/<str:secret>/", webhooks.chatwoot_webhook, name="chatwoot_webhook"),
    path("webhooks/whatsapp/", webhooks.whatsapp_webhook, name="whatsapp_webhook"),
]
