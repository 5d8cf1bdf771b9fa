"""The message catalogues (locale/, django and djangojs): every parent-facing message translated, .mo current.

Django reads only the compiled .mo files, so a .po edited without `compilemessages`
would leave parents reading the old text: each .po entry must be what gettext answers.
"""

import ast
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, ngettext, npgettext, pgettext

from chatbot.language import widget_texts

LOCALE = Path(settings.BASE_DIR) / "locale"
ENTRY = re.compile(r'^(?:msgctxt (?P<context>".*")\n)?msgid (?P<id>(?:".*"\n)+)'
                   r'(?:msgid_plural (?P<plural>(?:".*"\n)+))?(?P<strs>(?:msgstr(?:\[\d\])? (?:".*"\n?)+)+)',
                   re.MULTILINE)


def _text(quoted: str) -> str:
    return "".join(ast.literal_eval(line) for line in quoted.strip().splitlines())


def entries(language: str, domain: str = "django") -> list[tuple[str | None, str, str | None, list[str]]]:
    found = []
    po = (LOCALE / translation.to_locale(language) / "LC_MESSAGES" / f"{domain}.po").read_text(encoding="utf-8")
    for match in ENTRY.finditer(po):
        if not _text(match["id"]):
            continue  # the header
        strs = [_text(s) for s in re.split(r"^msgstr(?:\[\d\])? ", match["strs"], flags=re.MULTILINE) if s.strip()]
        found.append((_text(match["context"]) if match["context"] else None, _text(match["id"]),
                      _text(match["plural"]) if match["plural"] else None, strs))
    return found


@pytest.mark.parametrize("language", ["zh-hans", "ms", "ta"])
def test_every_message_is_translated_and_compiled(language):
    found = entries(language)
    assert len(found) > 150
    with translation.override(language):
        for context, msgid, plural, strs in found:
            assert all(strs), f"{msgid!r} has no {language} translation"
            if plural:
                got = npgettext(context, msgid, plural, 1) if context else ngettext(msgid, plural, 1)
            else:
                got = pgettext(context, msgid) if context else gettext(msgid)
            assert got == strs[0], f"{msgid!r}: the .mo is older than the .po"


@pytest.mark.parametrize("language", ["zh-hans", "ms", "ta"])
def test_every_widget_message_is_translated_and_compiled(language):
    """The widget's catalogue (djangojs), as the server sends it to the widget."""
    found = entries(language, "djangojs")
    texts = widget_texts(language)
    assert len(found) > 50
    for _, msgid, _, strs in found:
        assert strs[0] and texts[msgid] == strs[0], f"{msgid!r}: untranslated, or the .mo is older than the .po"
