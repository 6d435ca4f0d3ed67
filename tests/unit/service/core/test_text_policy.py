"""The one policy for text a client sends (`service.core.text`), and the commands that apply it to
every name: NFC, trimmed, no control, format (bidi) or separator characters, something
visible, a length in characters; refused with `invalid_text`."""

from __future__ import annotations

import re
import unicodedata

import pytest

from service.core.errors import ServiceError
from service.core.text import PATTERN, clean_text

HOSTILE = {
    "nul": "Ann\x00",
    "bell": "Ann\x07",
    "tab inside": "An\tn",
    "trailing line feed": "Ann\n",
    "line feed": "Ann\nBob",
    "del": "Ann\x7f",
    "c1": "Ann\x85",
    "line separator": "Ann\u2028Bob",
    "paragraph separator": "Ann\u2029",
    "right-to-left override": "Ann \u202egnp.exe",
    "left-to-right embedding": "\u202aAnn",
    "first strong isolate": "\u2068Ann\u2069",
    "right-to-left mark": "Ann\u200f",
    "arabic letter mark": "Ann\u061c",
    "zero-width space": "An\u200bn",
    "byte order mark": "\ufeffAnn",
    "soft hyphen": "An\u00adn",
    "interlinear annotation": "Ann\ufff9",
    "word joiner": "An\u2060n",
}
INVISIBLE = {
    "empty": "",
    "spaces": "   ",
    "ideographic space": "\u3000",
    "joiners only": "\u200d\u200c",
    "space and joiner": " \u200d ",
    "hangul filler": "\u3164\u3164",
    "braille blank": "\u2800",
    "variation selector": "\ufe0f",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_control_format_and_separator_characters_are_refused_naming_the_code_point(text: str):
    with pytest.raises(ServiceError) as caught:
        clean_text(text, field="name", limit=40)
    assert caught.value.code == "invalid_text"
    [code] = re.findall(r"U\+([0-9A-F]{4,6})", caught.value.detail)
    assert unicodedata.category(chr(int(code, 16))) in {"Cc", "Cf", "Zl", "Zp"}
    assert chr(int(code, 16)) in text
    assert re.search(PATTERN, text) is None  # the schema's pattern refuses it too


@pytest.mark.parametrize("text", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_nothing_visible_is_refused(text: str):
    with pytest.raises(ServiceError) as caught:
        clean_text(text, field="name", limit=40)
    assert caught.value.code == "invalid_text"
    assert "empty or invisible" in caught.value.detail
    assert re.search(PATTERN, text) is None


def test_a_name_is_stored_normalized_and_trimmed():
    decomposed = "Zo\u0065\u0301 "  # e + combining acute, a trailing space
    assert clean_text(decomposed, field="name", limit=40) == "Zo\u00e9"
    assert clean_text("  Ann Lee  ", field="name", limit=40) == "Ann Lee"  # inner space kept


def test_scripts_that_need_joiners_and_right_to_left_names_are_kept():
    for name in (
        "\u0aae\u0ac7\u0ab9\u0ac1\u0ab2",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        "\u05d0\u05d1\u05d2 12",
        "\U0001f469\u200d\U0001f4bb",
    ):
        assert clean_text(name, field="name", limit=40) == unicodedata.normalize("NFC", name)


def test_the_length_is_counted_in_characters_as_sent():
    assert clean_text("\u00e9" * 40, field="name", limit=40) == "\u00e9" * 40  # 80 UTF-8 bytes
    with pytest.raises(ServiceError, match="longer than 40 characters"):
        clean_text("a" * 41, field="name", limit=40)
    with pytest.raises(ServiceError, match="longer than 40 characters"):
        clean_text("e\u0301" * 21, field="name", limit=40)  # 42 code points, as the schema


KEPT = [
    "Ann",
    " Ann Lee ",
    "\u0aae\u0ac7\u0ab9\u0ac1\u0ab2",
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "\u05d0\u05d1\u05d2 12",
    "\U0001f469\u200d\U0001f4bb",
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # a flag: tags
    "\ue000 private",
    "a\u0301",
]


@pytest.mark.parametrize("text", KEPT)
def test_the_schema_pattern_and_the_policy_agree_on_what_is_kept(text: str):
    assert re.search(PATTERN, text) is not None
    assert clean_text(text, field="name", limit=40)
