#!/usr/bin/env python3
"""Check TEN game records offline: provably fair deals, scheme "ten-fair-v1".

Stand-alone: the standard library only, nothing of the service. It reads game records
("ten-game-record", version 1: one JSON object per game, a JSON list of them, or NDJSON),
from files or standard input (NDJSON a line at a time), and for each one checks:

1. the commitment published before play is SHA-256 of the revealed seed;
2. the deal's seed follows from the seed and the seats' entropy;
3. the deck is the documented shuffle of the deck for the player count;
4. the starting seat is the next draw of the same stream, when the service drew it;
5. every card that left the draw pile (each `card_drawn` event, in log order) is the
   deck's next card, and every `auction_started` auctions the card just drawn.

Whether a deal is verifiable is what `game_started` published, not what the record claims:
a published commitment must verify fully, and the record's `fairness` must agree with it.
A deal game_started published no commitment for (a deck given as it is) is reported as not
verifiable: its cards must still be the game's (no more copies than it holds) and its draws
follow its deck. A malformed record is refused with a reason, and the others still checked.
The bulk export's last line is its trailer, not a record (`{"type": "end", "count": N,
"complete": true}`): an export it says was cut short (`"complete": false`), whose count is
not the records before it, or with lines after it, is reported INCOMPLETE. The algorithm:
README.md beside this file. Exit status: 0 every record verified, 1 some record refused (or,
with --require-verifiable, not verifiable) or an export incomplete, 2 the input could not be
read.

    python ten_verify.py records.ndjson [more files...] [--json] [--require-verifiable]
    python ten_verify.py - < record.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator

SCHEME = "ten-fair-v1"
FORMAT = "ten-game-record"
VERSION = 1

# ---------------------------------------------------------------- the deck


def deck_for(players: int) -> list[str]:
    """The unshuffled deck for a player count, in manifest order (docs/rules.md section 1):
    per color R, B, O, G and number 1..9 the number cards (numbers 1..6: a first copy, a
    second from 3 players, a third from 4; numbers 7..9: one copy), then two color wilds per
    color, the number wilds W1..W9, the full wild W#, the currency $1 x7, $2 x6, $3 x6,
    $4 x4, $5 x4."""
    if not 1 <= players <= 5:
        raise ValueError("a game has 1 to 5 players")
    deck: list[str] = []
    for color in "RBOG":
        for number in range(1, 10):
            copies = 1
            if number <= 6:
                copies += (players >= 3) + (players >= 4)
            deck += [f"{color}{number}"] * copies
    for color in "RBOG":
        deck += [f"{color}#"] * 2
    deck += [f"W{number}" for number in range(1, 10)] + ["W#"]
    for value, copies in ((1, 7), (2, 6), (3, 6), (4, 4), (5, 4)):
        deck += [f"${value}"] * copies
    return deck


# ---------------------------------------------------------------- the random stream


class Stream:
    """SHA-256 in counter mode: key = SHA-256(b"ten-rng-v1\\x00" + seed), block i =
    SHA-256(key + i as 8 bytes big-endian), each block four unsigned 64-bit big-endian
    numbers, taken in order."""

    def __init__(self, seed: str) -> None:
        self.key = hashlib.sha256(b"ten-rng-v1\x00" + seed.encode()).digest()
        self.counter = 0
        self.pending: list[int] = []

    def next_u64(self) -> int:
        if not self.pending:
            block = hashlib.sha256(self.key + self.counter.to_bytes(8, "big")).digest()
            self.counter += 1
            self.pending = [int.from_bytes(block[i : i + 8], "big") for i in (24, 16, 8, 0)]
        return self.pending.pop()

    def randbelow(self, n: int) -> int:
        """Uniform in [0, n): numbers at or above 2^64 - (2^64 mod n) are skipped."""
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = self.next_u64()
            if value < limit:
                return value % n

    def shuffled(self, items: list[str]) -> list[str]:
        """Fisher-Yates: for i from the last index down to 1, swap i with randbelow(i + 1)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.randbelow(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def commitment(seed: str) -> str:
    return hashlib.sha256(b"ten-commit-v1\x00" + seed.encode()).hexdigest()


def deal_seed(seed: str, entropy: list[str]) -> str:
    if not any(entropy):
        return seed
    data = b"ten-deal-v1"
    for part in [seed, *entropy]:
        encoded = part.encode()
        data += len(encoded).to_bytes(4, "big") + encoded
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- the checks


class Refused(Exception):
    """A record that does not verify, and why."""


def _require(condition: bool, why: str) -> None:
    if not condition:
        raise Refused(why)


def _started(record: dict) -> dict:
    events = record.get("events")
    _require(isinstance(events, list) and events != [], "the record holds no events")
    first = events[0]
    _require(
        isinstance(first, dict) and first.get("type") == "game_started",
        "the first event is not game_started",
    )
    return first


def _is_hex64(value: object) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


def _check_published(record: dict, published: object, players: int) -> dict:
    """What game_started published before play; the record's fairness must say the same."""
    fair = record["fairness"]
    _require(isinstance(published, dict), "game_started's fairness is not an object")
    assert isinstance(published, dict)
    _require(published.get("scheme") == SCHEME, f"unknown scheme {published.get('scheme')!r}")
    _require(_is_hex64(published.get("commitment")), "the published commitment is no SHA-256")
    entropy = published.get("entropy")
    _require(
        isinstance(entropy, list)
        and len(entropy) == players
        and all(isinstance(e, str) for e in entropy),
        "the entropy is not one string per seat",
    )
    _require(isinstance(published.get("start_drawn"), bool), "start_drawn is not true or false")
    _require(
        fair.get("verifiable") is True,
        "the record's fairness.verifiable is not true, yet game_started published a commitment",
    )
    for field in ("scheme", "commitment", "entropy", "start_drawn"):
        _require(
            fair.get(field) == published.get(field),
            f"the record's fairness.{field} differs from the one game_started published",
        )
    return published


def _check_fairness(record: dict, published: dict) -> str:
    """The commitment of a verifiable record against its revealed seed: the deal's seed."""
    seed = record["fairness"].get("seed")
    _require(isinstance(seed, str) and seed != "", "the record reveals no seed")
    _require(
        commitment(seed) == published["commitment"],
        "the commitment is not SHA-256 of the revealed seed",
    )
    return deal_seed(seed, published["entropy"])


def _check_unverifiable(record: dict, deck: list[str], players: int) -> list[str]:
    """A deal game_started published no commitment for (a deck given as it is): the record
    claims nothing more, and every card is one of the game's, no more copies than it holds."""
    fair = record["fairness"]
    _require(
        fair.get("verifiable") is False,
        "the record's fairness.verifiable is not false, yet game_started published no commitment",
    )
    for field in ("scheme", "commitment"):
        _require(
            fair.get(field) is None,
            f"the record's fairness.{field} is set, yet game_started published none",
        )
    _require(
        fair.get("start_drawn") in (False, None),
        "the record's fairness.start_drawn is set, yet game_started published none",
    )
    entropy = fair.get("entropy", [])
    _require(
        isinstance(entropy, list) and all(e == "" for e in entropy),
        "the record's fairness.entropy is set, yet game_started published none",
    )
    held = Counter(deck_for(players))
    for at, card in enumerate(deck):
        _require(card in held, f"the deck's card {at} ({card!r}) is no card of the game")
        held[card] -= 1
        _require(held[card] >= 0, f"the deck holds more {card} than the game has")
    return deck


def _check_deal(record: dict, started: dict, players: int) -> list[str]:
    """The deck as dealt: the shuffle when game_started published a commitment, else cards
    of the game."""
    deck = record.get("deck")
    _require(
        isinstance(deck, list) and all(isinstance(c, str) for c in deck), "the record has no deck"
    )
    _require(
        started.get("draw_pile_size") == len(deck),
        "game_started's draw_pile_size is not the deck's size",
    )
    if started.get("fairness") is None:
        return _check_unverifiable(record, deck, players)
    published = _check_published(record, started["fairness"], players)
    stream = Stream(_check_fairness(record, published))
    expected = stream.shuffled(deck_for(players))
    _require(
        len(deck) == len(expected),
        f"the deck has {len(deck)} cards, the shuffle of {players} players {len(expected)}",
    )
    if deck != expected:
        at = next(i for i, (a, b) in enumerate(zip(deck, expected, strict=True)) if a != b)
        raise Refused(
            f"the deck is not the shuffle of the deal's seed (card {at}: {deck[at]} "
            f"where the shuffle gives {expected[at]})"
        )
    if published["start_drawn"]:
        seat = stream.randbelow(players)
        _require(
            started.get("starting_seat") == seat,
            f"the starting seat is {started.get('starting_seat')}, the deal draws seat {seat}",
        )
    return deck


def _check_draws(events: list, deck: list[str]) -> int:
    """Every card_drawn event, in log order, draws the deck's next card, and every
    auction_started auctions the card just drawn: how many draws."""
    drawn = 0
    previous: object = None
    for event in events:
        _require(isinstance(event, dict), "an event is not a JSON object")
        kind = event.get("type")
        if kind == "auction_started":
            just = (
                previous.get("card")
                if isinstance(previous, dict) and previous.get("type") == "card_drawn"
                else None
            )
            _require(
                just is not None and event.get("card") == just,
                f"event {event.get('seq')} auctions {event.get('card')}, "
                f"not the card just drawn ({just})",
            )
        previous = event
        if kind != "card_drawn":
            continue
        _require(drawn < len(deck), f"event {event.get('seq')} draws from an empty pile")
        _require(
            event.get("card") == deck[drawn],
            f"event {event.get('seq')} draws {event.get('card')}, the deck's card {drawn} "
            f"is {deck[drawn]}",
        )
        _require(
            event.get("draw_pile_size") == len(deck) - drawn - 1,
            f"event {event.get('seq')} leaves {event.get('draw_pile_size')} cards, "
            f"the deck {len(deck) - drawn - 1}",
        )
        drawn += 1
    return drawn


def verify(record: object) -> dict:
    """One record's verdict: {"id", "ok", "verifiable", "draws", "error"}."""
    verdict: dict = {"id": None, "ok": False, "verifiable": False, "draws": 0, "error": None}
    try:
        if isinstance(record, Refused):  # a line of NDJSON that is not JSON
            raise record
        _require(isinstance(record, dict), "a record is a JSON object")
        assert isinstance(record, dict)
        verdict["id"] = record.get("id")
        _require(record.get("format") == FORMAT, f"not a {FORMAT} record")
        _require(record.get("record_version") == VERSION, f"record_version is not {VERSION}")
        _require(isinstance(record.get("fairness"), dict), "the record has no fairness")
        started = _started(record)
        players = len(started.get("players") or [])
        _require(1 <= players <= 5, "game_started seats 1 to 5 players")
        _require(record.get("player_count") == players, "player_count differs from the seats")
        verdict["verifiable"] = started.get("fairness") is not None  # what was published
        deck = _check_deal(record, started, players)
        verdict["draws"] = _check_draws(record["events"], deck)
        verdict["ok"] = True
    except Refused as refused:
        verdict["error"] = str(refused)
    except Exception as exc:  # any malformed record is refused, never a traceback
        verdict["error"] = f"malformed record: {type(exc).__name__}: {exc}"
    return verdict


# ---------------------------------------------------------------- reading, reporting


def records_in(lines: Iterable[str]) -> Iterator[object]:
    """The records of one input, read line by line. NDJSON (its first line a JSON value of
    its own) is streamed, a record at a time, so a bulk export needs little memory; a line
    of it that is not JSON is that record's refusal, the others still read. Else the input
    is one JSON document, read whole: a record, or a list of them."""
    lines = iter(lines)
    head: list[str] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    else:
        return  # nothing but blank lines
    try:
        first = json.loads(head[-1])
    except json.JSONDecodeError:
        try:
            whole = json.loads("".join(head) + "".join(lines))
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {exc.lineno}: not JSON ({exc.msg})") from None
        yield from whole if isinstance(whole, list) else [whole]
        return
    yield from first if isinstance(first, list) else [first]
    for number, line in enumerate(lines, len(head) + 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                yield Refused(f"line {number}: not JSON ({exc.msg})")


def _inputs(paths: Iterable[str]) -> Iterator[tuple[str, Iterable[str]]]:
    """Each input's name and its lines, read as they are asked for."""
    for path in paths:
        if path == "-":
            yield "<stdin>", sys.stdin
        else:
            with open(path, encoding="utf-8") as handle:
                yield path, handle


def is_end(item: object) -> bool:
    """The bulk export's last line, its trailer (`{"type": "end", "count": N, "complete":
    true}`), not a record: no record has a `type`."""
    return isinstance(item, dict) and item.get("type") == "end" and "format" not in item


def export_end(end: dict, records: int) -> str | None:
    """What an export's trailer says is wrong with the `records` read before it (None: the
    export is whole)."""
    count = end.get("count")
    if end.get("complete") is not True:
        error = end.get("error") if isinstance(end.get("error"), dict) else {}
        why = ": ".join(str(error[k]) for k in ("code", "detail") if error.get(k))
        return f"the export is incomplete, cut after {count} records" + (f" ({why})" if why else "")
    if count != records:
        return f"the export's end counts {count} records, {records} came before it"
    return None


def _verdicts(source: str, items: Iterable[object], require_verifiable: bool) -> Iterator[dict]:
    """A verdict per record of one input, and one for its export's trailer when something is
    wrong with it (an export cut short, a count that is not the records', lines after it)."""
    records = 0
    ended = False
    for index, item in enumerate(items):
        if ended or is_end(item):
            wrong = "a line after the export's end" if ended else export_end(item, records)  # type: ignore[arg-type]
            ended = True
            if wrong is not None:
                yield {"source": source, "index": index, "error": wrong, "export": True}
            continue
        records += 1
        verdict = {"source": source, "index": index, **verify(item)}
        if require_verifiable and verdict["ok"] and not verdict["verifiable"]:
            verdict.update(ok=False, error="not verifiable: dealt from a given deck")
        yield verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify TEN game records (ten-fair-v1).")
    parser.add_argument("paths", nargs="*", default=["-"], help="files ('-': standard input)")
    parser.add_argument("--json", action="store_true", help="one JSON report on stdout")
    parser.add_argument(
        "--require-verifiable", action="store_true",
        help="refuse records dealt from a given deck (not verifiable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    verdicts = []
    try:
        for source, lines in _inputs(args.paths or ["-"]):
            verdicts.extend(_verdicts(source, records_in(lines), args.require_verifiable))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        print(f"ten_verify: cannot read the input: {exc}", file=sys.stderr)
        return 2
    cut = [v for v in verdicts if v.get("export")]
    verdicts = [v for v in verdicts if not v.get("export")]
    refused = [v for v in verdicts if not v["ok"]]
    if args.json:
        summary = {"records": len(verdicts), "verified": len(verdicts) - len(refused),
                   "refused": len(refused), "results": verdicts,
                   "incomplete_exports": [{k: v[k] for k in ("source", "index", "error")}
                                          for v in cut]}  # fmt: skip
        print(json.dumps(summary, indent=1))
    else:
        for v in cut:
            print(f"INCOMPLETE {v['source']}#{v['index']}: {v['error']}")
        for v in verdicts:
            name = v["id"] or f"{v['source']}#{v['index']}"
            if v["ok"]:
                how = (
                    "deal and draws verified"
                    if v["verifiable"]
                    else "not verifiable (given deck); draws follow its deck"
                )
                print(f"OK      {name}: {how} ({v['draws']} draws)")
            else:
                print(f"REFUSED {name}: {v['error']}")
        print(f"{len(verdicts)} records, {len(refused)} refused", file=sys.stderr)
    return 1 if refused or cut else 0


if __name__ == "__main__":
    sys.exit(main())
