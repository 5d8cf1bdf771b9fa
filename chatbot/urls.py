from django.urls import path

from chatbot import views
from chatbot.channels import registry

app_name = "chatbot"

urlpatterns = [
    path("", views.demo_page, name="demo"),
    path("chat/<slug:school_slug>/", views.chat_page, name="chat"),
    path("calendar/<str:token>.ics", views.booking_ics, name="booking_ics"),
    *registry.urlpatterns(),  # the channels' webhooks
]
