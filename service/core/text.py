"""The one policy for human-readable text a client sends (a player's name, and any text added
later): what is stored is NFC-normalized, trimmed, visible and bounded, or it is refused.

A name is shown to other players (the web client, the event log, a platform's UI) and
archived (PostgreSQL refuses U+0000). So a name:
- is at most `limit` characters (code points) long as sent;
- holds none of the characters in `REFUSED`: control characters (C0, DEL, C1: U+0000, a
  bell, a tab, a line feed...), the line and paragraph separators, the bidi controls
  (embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069, the marks U+200E,
  U+200F, U+061C), which reorder what is shown around a name ("... sdib exe.png"), and the
  invisible format characters that only hide or join text (zero-width space, word joiner,
  invisible operators, soft hyphen, the BOM, the interlinear annotation marks); the
  zero-width joiner and non-joiner (U+200D, U+200C) are kept, as Indic and Persian
  spellings and emoji sequences need them, and so are the tag characters of flag emoji;
- has something visible: not only the characters in `INVISIBLE` (the spaces, the joiners,
  the Hangul fillers, the braille blank, the variation selectors);
- is stored normalized (NFC) with the spaces at both ends trimmed.

The same sets make the names' pattern in the OpenAPI document (`pattern`), so a client (or
a contract-testing tool) that follows the schema sends only what the policy keeps. Refused
with `invalid_text` (400), naming the field and the character.
"""

from __future__ import annotations

import re
import unicodedata

from service.core.errors import ServiceError

# (first, last) code points, all within the Basic Multilingual Plane (so that a JSON Schema
# pattern states them to an ECMA-262 client as it does to Python). No surrogates: a lone
# one is no character (the JSON decoder refuses "\ud800" before any policy)
REFUSED: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F),  # C0 controls
    (0x007F, 0x009F),  # DEL, C1 controls
    (0x00AD, 0x00AD),  # soft hyphen
    (0x061C, 0x061C),  # Arabic letter mark
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200B),  # zero-width space
    (0x200E, 0x200F),  # left-to-right, right-to-left marks
    (0x2028, 0x202E),  # line, paragraph separators; bidi embeddings, pop, overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x206F),  # bidi isolates; deprecated format characters
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFF9, 0xFFFB),  # interlinear annotation
)
INVISIBLE: tuple[tuple[int, int], ...] = (
    (0x0020, 0x0020),  # space
    (0x00A0, 0x00A0),  # no-break space
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul choseong, jungseong fillers
    (0x1680, 0x1680),  # Ogham space mark
    (0x2000, 0x200A),  # en quad ... hair space
    (0x200C, 0x200D),  # zero-width non-joiner, joiner
    (0x202F, 0x202F),  # narrow no-break space
    (0x205F, 0x205F),  # medium mathematical space
    (0x2800, 0x2800),  # braille pattern blank
    (0x3000, 0x3000),  # ideographic space
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
)
SPACES = frozenset(
    " \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


# a name as the schema states it: no refused character, one visible at least, the whole
# string (`(?!\n)`: Python's `$` would match before a final line feed; nothing to ECMA-262)
_ANY = f"[^{_class(REFUSED)}]"
_VISIBLE = f"[^{_class(REFUSED)}{_class(INVISIBLE)}]"
PATTERN = f"^{_ANY}*{_VISIBLE}{_ANY}*(?!\\n)$"
_REFUSED = re.compile(f"[{_class(REFUSED)}]")
_VISIBLE_CHAR = re.compile(_VISIBLE)


def clean_text(value: str, *, field: str, limit: int) -> str:
    """`value` as stored (NFC, trimmed), or `invalid_text` saying why not."""
    refused = _REFUSED.search(value)
    if refused is not None:
        raise ServiceError(
            "invalid_text",
            "{field} holds a character that is not allowed (U+{point}): control "
            "characters, separators, bidi controls and invisible formatting characters are "
            "refused.",
            field=field,
            point=f"{ord(refused.group()):04X}",
        )
    if _VISIBLE_CHAR.search(value) is None:
        raise ServiceError("invalid_text", "{field} is empty or invisible.", field=field)
    if len(value) > limit:
        raise ServiceError(
            "invalid_text", "{field} is longer than {limit} characters.", field=field, limit=limit
        )
    return _trimmed(unicodedata.normalize("NFC", value))


def _trimmed(text: str) -> str:
    """Without the spaces at both ends (a tab or a line feed there is a control character,
    refused like any)."""
    start, end = 0, len(text)
    while start < end and text[start] in SPACES:
        start += 1
    while end > start and text[end - 1] in SPACES:
        end -= 1
    return text[start:end]
