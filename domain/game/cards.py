"""Card codes and the deck manifest (rules.md section 1).

Codes are the wire format everywhere. The player-count marks are data: each manifest
entry says from which player count its copies are in the deck.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final, Literal

import msgspec

from domain.game.errors import Joined, RuleError, Text

COLORS: Final = ("R", "B", "O", "G")
Color = Literal["R", "B", "O", "G"]
NUMBERS: Final = tuple(range(1, 10))


class ManifestEntry(msgspec.Struct, frozen=True, kw_only=True):
    code: str
    kind: Literal["number", "color_wild", "number_wild", "full_wild", "currency"]
    copies: int
    min_players: int = 1  # 3 for the `3+` mark, 4 for the `4+` mark


def _build_manifest() -> tuple[ManifestEntry, ...]:
    entries: list[ManifestEntry] = []
    for color in COLORS:
        for n in NUMBERS:
            code = f"{color}{n}"
            if n <= 6:
                # first copy unmarked, second `3+`, third `4+` [decision]
                entries.append(ManifestEntry(code=code, kind="number", copies=1))
                entries.append(ManifestEntry(code=code, kind="number", copies=1, min_players=3))
                entries.append(ManifestEntry(code=code, kind="number", copies=1, min_players=4))
            else:
                entries.append(ManifestEntry(code=code, kind="number", copies=1))
    entries.extend(ManifestEntry(code=f"{c}#", kind="color_wild", copies=2) for c in COLORS)
    entries.extend(ManifestEntry(code=f"W{n}", kind="number_wild", copies=1) for n in NUMBERS)
    entries.append(ManifestEntry(code="W#", kind="full_wild", copies=1))
    for value, copies in ((1, 7), (2, 6), (3, 6), (4, 4), (5, 4)):
        entries.append(ManifestEntry(code=f"${value}", kind="currency", copies=copies))
    return tuple(entries)


MANIFEST: Final[tuple[ManifestEntry, ...]] = _build_manifest()

NUMBER_CARDS: Final = frozenset(f"{c}{n}" for c in COLORS for n in NUMBERS)
COLOR_WILDS: Final = frozenset(f"{c}#" for c in COLORS)
NUMBER_WILDS: Final = frozenset(f"W{n}" for n in NUMBERS)
FULL_WILD: Final = "W#"
WILDS: Final = COLOR_WILDS | NUMBER_WILDS | {FULL_WILD}
CURRENCY_CARDS: Final = frozenset(f"${v}" for v in range(1, 6))
ALL_CODES: Final = NUMBER_CARDS | WILDS | CURRENCY_CARDS
# code -> its number (a number card: also its price) or its value (a currency card)
DIGIT: Final[dict[str, int]] = {code: int(code[1]) for code in ALL_CODES if code[1].isdigit()}


def _copies() -> dict[str, int]:
    copies: dict[str, int] = {}
    for entry in MANIFEST:
        copies[entry.code] = copies.get(entry.code, 0) + entry.copies
    return copies


COPIES: Final[dict[str, int]] = _copies()  # copies of each code in the full 129-card game


# the codes as types: decoding refuses anything else, and the OpenAPI lists them as enums
CardCode = Literal[tuple(sorted(ALL_CODES))]  # type: ignore[valid-type]
NumberCode = Literal[tuple(sorted(NUMBER_CARDS))]  # type: ignore[valid-type]
CollectionCode = Literal[tuple(sorted(NUMBER_CARDS | WILDS))]  # type: ignore[valid-type]


def deck_for(players: int) -> list[str]:
    """The unshuffled deck for a player count, in manifest order."""
    if not 1 <= players <= 5:
        raise ValueError("a game has 1 to 5 players")
    return list(_DECKS[players])


_DECKS: Final = {
    n: tuple(e.code for e in MANIFEST if e.min_players <= n for _ in range(e.copies))
    for n in range(1, 6)
}


def deck_size(players: int) -> int:
    return sum(e.copies for e in MANIFEST if e.min_players <= players)


def check_copies(codes: Iterable[str]) -> None:
    """Refuse (RuleError `too_many_copies`) a list of valid codes holding some card more
    times than the 129-card game has it: custom decks and scored collections are subsets of
    the real cards, which is what a table can lay out (and what lets scoring assume at most
    one `Wn` of each number and one `W#`)."""
    counts = Counter(codes)
    over = sorted(code for code, count in counts.items() if count > COPIES[code])
    if over:
        copies = Joined(
            ", ",
            (
                Text(
                    "{card} x{count} (the game has {limit})",
                    card=c,
                    count=counts[c],
                    limit=COPIES[c],
                )
                for c in over
            ),
        )
        raise RuleError(
            "too_many_copies", "More copies than the game has: {copies}.", copies=copies
        )
