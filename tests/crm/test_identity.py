"""crm.identity: phone numbers to E.164 and e-mail validation, as parents type them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crm.identity import InvalidContactDetail, format_phone, normalise_email, normalise_phone


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("9123 4567", "SG", "+6591234567"),
        ("9123-4567", "SG", "+6591234567"),
        ("91234567", "sg", "+6591234567"),
        ("  +65 9123 4567 ", "SG", "+6591234567"),
        ("(+65) 9123 4567", "SG", "+6591234567"),
        ("6123 4567", "SG", "+6561234567"),
        ("+44 20 7946 0958", "SG", "+442079460958"),
        ("020 7946 0958", "GB", "+442079460958"),
        ("+1 415 555 2671", "SG", "+14155552671"),
    ],
)
def test_normalise_phone_to_e164(raw, region, expected):
    assert normalise_phone(raw, region) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "12345",  # too short
        "+65 1234 5678",  # no SG number starts with 1
        "020 7946 0958",  # a UK number without +44, read as Singaporean
        "9123 4567 8910 1112",  # too long
    ],
)
def test_invalid_phone_numbers_are_refused_with_a_helpful_message(raw):
    with pytest.raises(InvalidContactDetail) as exc_info:
        normalise_phone(raw, "SG")
    err = exc_info.value
    assert err.field == "parent_phone"
    assert raw.strip() in err.message
    assert "country code" in err.message


@pytest.mark.parametrize("raw", ["abc", "call me", "++--", "+999 1234 5678"])  # +999: no such country code
def test_text_that_is_not_a_number_at_all(raw):
    with pytest.raises(InvalidContactDetail) as exc_info:
        normalise_phone(raw, "SG")
    assert exc_info.value.field == "parent_phone"
    assert "doesn't look like a phone number" in exc_info.value.message


@pytest.mark.parametrize("raw", ["", "   ", None])
def test_missing_phone_number(raw):
    with pytest.raises(InvalidContactDetail) as exc_info:
        normalise_phone(raw, "SG")
    assert exc_info.value.message == "Please give a phone number."


def test_invalid_contact_detail_is_a_value_error():
    with pytest.raises(ValueError, match="phone"):
        normalise_phone("", "SG")


def test_format_phone_for_people():
    assert format_phone("+6591234567") == "+65 9123 4567"
    assert format_phone("+442079460958") == "+44 20 7946 0958"
    assert format_phone("not a number") == "not a number"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ana@example.com", "ana@example.com"),
        ("  Ana.Lee@Example.COM ", "Ana.Lee@example.com"),  # local part kept, domain lower-cased
        ("ana+tours@mail.example.sg", "ana+tours@mail.example.sg"),
    ],
)
def test_normalise_email(raw, expected):
    assert normalise_email(raw) == expected


@pytest.mark.parametrize(
    "raw", ["nope", "ana@", "@example.com", "ana@example", "ana@@example.com", "ana example.com", ""]
)
def test_invalid_emails_are_refused(raw):
    with pytest.raises(InvalidContactDetail) as exc_info:
        normalise_email(raw)
    assert exc_info.value.field == "parent_email"
    assert "doesn't look like an e-mail address" in exc_info.value.message


@given(st.from_regex(r"[89][0-9]{7}", fullmatch=True), st.sampled_from(["", " ", "-"]))
def test_any_sg_mobile_written_locally_or_internationally_gives_the_same_e164(digits, sep):
    local = f"{digits[:4]}{sep}{digits[4:]}"
    try:
        expected = normalise_phone(f"+65{digits}", "SG")
    except InvalidContactDetail:
        # Some 8/9 prefixes are unallocated: then every spelling is refused.
        with pytest.raises(InvalidContactDetail):
            normalise_phone(local, "SG")
        return
    assert expected == f"+65{digits}"
    assert normalise_phone(local, "SG") == expected
    assert normalise_phone(f"+65 {local}", "GB") == expected
    # Idempotent: an E.164 number normalises to itself.
    assert normalise_phone(expected, "SG") == expected


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("017-882 4410", "SG", "+60178824410"),  # a Malaysian mobile at a Singapore school
        ("6017 882 4410", "SG", "+60178824410"),  # its country code typed without "+"
        ("03-7956 1234", "SG", "+60379561234"),  # a Kuala Lumpur line
        ("8765 4321", "MY", "+6587654321"),  # a Singapore mobile at a Malaysian school
        ("6587654321", "MY", "+6587654321"),
        ("9876 5432", "SG", "+6598765432"),  # the school's own region first
    ],
)
def test_a_number_from_a_neighbouring_country_is_read_without_its_country_code(raw, region, expected):
    assert normalise_phone(raw, region) == expected


def test_an_international_number_that_does_not_fit_its_country_says_to_check_the_digits():
    with pytest.raises(InvalidContactDetail) as exc_info:
        normalise_phone("+60 12 34", "SG")
    assert "(+60)" in exc_info.value.message
    assert "check the digits" in exc_info.value.message
