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


def normalise_phone(raw: str, region: str = "SG") -> str:
    """"+65 9123 4567", "9123-4567" (region SG) -> "+6591234567"; raises InvalidContactDetail."""
    text = (raw or "").strip()
    if not text:
        raise InvalidContactDetail("parent_phone", "Please give a phone number.")
    try:
        number = phonenumbers.parse(text, region.upper() if region else None)
    except phonenumbers.NumberParseException:
        raise InvalidContactDetail(
            "parent_phone", f"“{text}” doesn't look like a phone number. Could you check it?"
        ) from None
    if not phonenumbers.is_valid_number(number):
        raise InvalidContactDetail(
            "parent_phone",
            f"“{text}” isn't a valid phone number. Please include the country code if it's not a local number.",
        )
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
