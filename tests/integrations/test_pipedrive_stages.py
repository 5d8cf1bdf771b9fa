"""The admissions funnel in Pipedrive: each school maps its funnel stages to its own pipeline's stage ids
(School.pipedrive_stage_ids) and the deal follows, against the fake Pipedrive at the HTTP boundary."""

import datetime as dt

import pytest

from bookings import services as bookings
from crm import services as crm
from crm.models import Deal
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_the_deal_moves_through_the_schools_stages(pipedrive, next_weekday):
    school = SchoolFactory(pipedrive_stage_ids={"tour_booked": 12, "toured": 13, "applied": 14}, min_notice_hours=0)
    parent = ContactFactory(school=school, name="Mei Lin Tan", phone="+6591234567")
    day = next_weekday(school, 1)
    booking = bookings.book_tour(school=school, contact=parent, parent_name="Mei Lin Tan",
                                 parent_phone="+6591234567", child_name="Tom", child_age=5, local_date=day,
                                 local_time=dt.time(9))
    [deal] = pipedrive.deals.values()
    assert deal["stage_id"] == 12

    bookings.record_tour_outcome(booking=booking, status="completed")
    assert pipedrive.deals[deal["id"]]["stage_id"] == 13

    ours = Deal.objects.get(contact=parent)
    crm.move_deal_stage(ours, Deal.Stage.APPLIED)
    assert pipedrive.deals[deal["id"]]["stage_id"] == 14
    crm.move_deal_stage(ours, Deal.Stage.APPLIED)  # already there: Pipedrive is not asked again
    deal_patches = [c for c in pipedrive.calls("PATCH") if c.path.startswith("/api/v2/deals/")]
    assert [c.json["stage_id"] for c in deal_patches] == [12, 13, 14]


def test_a_stage_the_school_does_not_map_leaves_the_pipedrive_deal_alone(pipedrive, next_weekday):
    school = SchoolFactory(pipedrive_stage_ids={"toured": 7})
    parent = ContactFactory(school=school)
    bookings.book_tour(school=school, contact=parent, parent_name="Ana Lim", parent_phone="+6581234567",
                       child_name="Leo", child_age=4, local_date=next_weekday(school, 2), local_time=dt.time(9))
    [deal] = pipedrive.deals.values()
    assert "stage_id" not in deal
    assert not [c for c in pipedrive.calls("PATCH") if c.path.startswith("/api/v2/deals/")]
