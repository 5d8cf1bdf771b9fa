"""Reading the contact details parents type: phone numbers to E.164, e-mails validated."""

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email as django_validate_email


class InvalidContactDetail(ValueError):
    """A phone number or e-mail that cannot be used; `message` is fit to show a parent."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# Where a school's parents also come from, most likely first: a local number that does not fit the school's
# region is read as the first of these it fits ("012-345 6789" at a Singapore school is a Malaysian mobile).
NEIGHBOUR_REGIONS = {
    "SG": ("MY", "ID"),
    "MY": ("SG", "BN", "ID", "TH"),
    "ID": ("SG", "MY"),
    "BN": ("MY",),
    "TH": ("MY",),
}


def _parse(text: str, region: str | None) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None


def _valid(number: phonenumbers.PhoneNumber | None) -> bool:
    return number is not None and phonenumbers.is_valid_number(number)


def _neighbour_readings(text: str, region: str) -> list[phonenumbers.PhoneNumber | None]:
    """A number without "+" as each neighbour reads it, where it is written as that neighbour writes its own
    (with its trunk prefix "0" when it has one: "80000000" is no Malaysian number), then with its digits taken
    as a country code whose "+" was left off ("6012 345 6789")."""
    digits = "".join(ch for ch in text if ch.isdigit())
    readings = []
    for other in NEIGHBOUR_REGIONS.get(region, ()):
        prefix = phonenumbers.PhoneMetadata.metadata_for_region(other).national_prefix
        if not prefix or digits.startswith(prefix):
            readings.append(_parse(text, other))
    codes = {phonenumbers.country_code_for_region(r) for r in (region, *NEIGHBOUR_REGIONS.get(region, ()))}
    plus = _parse(f"+{digits}", None) if digits else None
    return [*readings, plus if plus is not None and plus.country_code in codes else None]


def _read_number(text: str, region: str | None) -> phonenumbers.PhoneNumber | None:
    """The number as the school's region reads it; else, for a number without "+", the first neighbour's reading
    that fits; else the region's reading (None when it is no number at all)."""
    local = _parse(text, region)
    if _valid(local) or text.lstrip("( ").startswith("+") or not region:
        return local
    return next((n for n in _neighbour_readings(text, region) if _valid(n)), local)


def normalise_phone(raw: str, region: str = "SG") -> str:
    """E.164 of "+65 9123 4567", "9123-4567" (region SG) -> "+6591234567"; "012-345 6789" (SG, a Malaysian mobile) ->
    "+60123456789"; raises InvalidContactDetail, saying what to check."""
    text = (raw or "").strip()
    if not text:
        raise InvalidContactDetail("parent_phone", "Please give a phone number.")
    region = (region or "").upper()
    number = _read_number(text, region or None)
    if number is None:
        raise InvalidContactDetail("parent_phone", f"“{text}” doesn't look like a phone number. Could you check it?")
    if not phonenumbers.is_valid_number(number):
        if text.lstrip("( ").startswith("+"):
            problem = f"isn't a valid number for its country code (+{number.country_code}): could you check the digits?"
        else:
            problem = "isn't a valid phone number. Please include the country code if it's not a local number."
        raise InvalidContactDetail("parent_phone", f"“{text}” {problem}")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def format_phone(e164: str) -> str:
    """E.164 -> the international format people read ("+65 9123 4567")."""
    try:
        return phonenumbers.format_number(phonenumbers.parse(e164, None), phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    except phonenumbers.NumberParseException:
        return e164


def normalise_email(raw: str) -> str:
    """Trim and lower-case the domain; raises InvalidContactDetail for a malformed address."""
    text = (raw or "").strip()
    try:
        django_validate_email(text)
    except ValidationError:
        raise InvalidContactDetail("parent_email", f"“{text}” doesn't look like an e-mail address.") from None
    local, _, domain = text.rpartition("@")
    return f"{local}@{domain.lower()}"
