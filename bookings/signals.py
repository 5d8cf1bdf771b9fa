"""What the booking app announces, after the change has committed, for apps that tell parents (chatbot.outreach).

bookings never imports chatbot; these signals are how a booking change reaches a parent's channel.
"""

import django.dispatch

seat_offered = django.dispatch.Signal()  # entry=<WaitlistEntry just offered a held seat>
offer_lapsed = django.dispatch.Signal()  # entry=<WaitlistEntry whose held seat expired unanswered>
tour_outcome_recorded = django.dispatch.Signal()  # booking=<TourBooking marked completed or no-show>
