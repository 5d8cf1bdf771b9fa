from django.urls import path

from bookings import views

app_name = "bookings"

urlpatterns = [
    path("manage/<str:token>/", views.manage_booking, name="manage"),
]
