"""The languages of problem responses: `Accept-Language` negotiation and the message catalogs.

Messages are translated the gettext way: a raise site keeps an English template with named
parameters (`domain.game.errors.Text`), and each language's catalog (`service.entrypoints.api.i18n.<lang>`, a dict
from the English template to its translation, same `{placeholders}`) gives the template in
that language; the parameters (card codes, numbers, names) are never translated. English
needs no catalog, and a template a catalog lacks stays English (tests/unit/
test_problem_language.py makes sure none is missing). The terms are the rulebook's, as listed
in its glossary (the seeds in Indonesian, Armenian, Spanish and Gujarati).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Final

from domain.game.errors import Text
from service.entrypoints.api.i18n import es, gu, hy
from service.entrypoints.api.i18n import id as id_

DEFAULT: Final = "en"
CATALOGS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {},
    "id": id_.MESSAGES,
    "hy": hy.MESSAGES,
    "es": es.MESSAGES,
    "gu": gu.MESSAGES,
}
LANGUAGES: Final = tuple(CATALOGS)
# ISO 639 codes that name one of ours ("in" is Indonesian's withdrawn code, still sent)
ALIASES: Final = {"in": "id"}
MAX_HEADER = 4096  # characters of Accept-Language read; the rest is ignored
MAX_RANGES = 32  # language ranges read
_RANGE = re.compile(r"\*|[a-z]{1,8}(?:-[a-z0-9]{1,8})*")
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


def negotiate(header: str | None) -> str:
    """The language of `LANGUAGES` that an `Accept-Language` header (RFC 9110, 12.5.4) prefers:
    the highest q-value wins, the earlier range on a tie; a range names its language by its
    primary subtag (`es-MX` is `es`); `*` is English. Anything else, including a malformed
    range or q-value (skipped) or no header, is English: this never fails."""
    best, best_q = DEFAULT, 0.0
    for item in (header or "")[:MAX_HEADER].split(",")[:MAX_RANGES]:
        found = _preference(item)
        if found is not None and found[1] > best_q:
            best, best_q = found
    return best


def _preference(item: str) -> tuple[str, float] | None:
    """(language, q) of one language range, or None if it is malformed or not ours."""
    tag, *params = item.strip().lower().split(";")
    tag = tag.strip()
    if not _RANGE.fullmatch(tag):
        return None
    q = 1.0
    for param in params:
        name, _, value = param.strip().partition("=")
        if name.strip() != "q" or not _QVALUE.fullmatch(value.strip()):
            return None
        q = float(value)
    primary = tag.split("-")[0]
    language = DEFAULT if primary == "*" else ALIASES.get(primary, primary)
    return (language, q) if language in CATALOGS else None


def translator(language: str) -> Callable[[str], str]:
    """Template -> the template in `language` (itself where the catalog lacks it)."""
    catalog = CATALOGS.get(language, CATALOGS[DEFAULT])
    return lambda template: catalog.get(template, template)


def localize(text: Text, language: str) -> str:
    """`text` in `language`, its parameters formatted in."""
    return text.render(translator(language))


def title(status: int, language: str) -> str:
    """A problem's `title`: the status's reason phrase, in `language`."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return translator(language)(phrase)
