"""The soak (bench/soak.py) run short: 40 s of mixed play on two replicas, Redis and a private
PostgreSQL, with each kind of fault once (Redis restarted, a replica SIGKILLed, PostgreSQL
restarted, the webhook receiver down), and its accounting clean. Then the accounting itself
is shown to find what it must: the run's own records, each spoiled in one way, each fail it.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
from collections.abc import Callable

from tests.servers import ROOT

_spec = importlib.util.spec_from_file_location("soak", ROOT / "bench" / "soak.py")
assert _spec is not None
assert _spec.loader is not None
soak = importlib.util.module_from_spec(_spec)
sys.modules["soak"] = soak  # dataclasses look their module up there
_spec.loader.exec_module(soak)

DURATION = 40.0


def _acked(c) -> str:
    return next(g for g, note in c.games.items() if len(note.acks) > 2)


def _finished(c, kind: str) -> str:
    return next(g for g, n in c.games.items() if n.kind == kind and g in c.archived)


def _drop_an_event(c) -> None:
    del c.logs[_acked(c)][3]


def _apply_twice(c) -> None:
    """An action applied twice: the log holds a version nobody acknowledged."""
    note = c.games[_acked(c)]
    version, events = note.acks.pop(1)
    note.acks.append((version + 1, events))


def _archive_twice(c) -> None:
    c.archived[_finished(c, "humans")]["rows"] = 2


def _not_rated(c) -> None:
    c.rated.pop(_finished(c, "humans"))


def _rated_unranked(c) -> None:
    c.rated[_finished(c, "bots")] = 1


def _webhook_lost(c) -> None:
    c.deliveries.pop(next(iter(c.deliveries)))


def _a_500(c) -> None:
    c.fivexx.append({"t": 1.0, "method": "GET", "path": "/v1/x", "status": 500, "retry_after": None, "body": ""})  # fmt: skip


def _a_503_outside_outages(c) -> None:
    after = max(w.up for w in c.windows) + soak.GRACE + 1
    c.fivexx.append({"t": after, "method": "GET", "path": "/v1/x", "status": 503, "retry_after": "1", "body": ""})  # fmt: skip


def _stream_gap(c) -> None:
    watch = next(w for w in c.watches if len(w.events) > 3)
    del watch.events[2]


def _clock_fired_twice(c) -> None:
    game_id = next(g for g, n in c.games.items() if n.kind == "clock" and not n.played_out)
    timed_out = next(e for e in c.logs[game_id] if e["type"] == "timed_out")
    c.logs[game_id].append({**timed_out, "seq": len(c.logs[game_id]) + 1})


SPOILED: dict[str, tuple[Callable, str]] = {
    "an event missing": (_drop_an_event, "acknowledged actions:"),
    "an action applied twice": (_apply_twice, "acknowledged actions:"),
    "archived twice": (_archive_twice, "archive:"),
    "a ranked game not rated": (_not_rated, "ratings:"),
    "an unranked game rated": (_rated_unranked, "ratings:"),
    "a webhook never delivered": (_webhook_lost, "webhooks:"),
    "a 500": (_a_500, "5xx:"),
    "a 503 outside any outage": (_a_503_outside_outages, "5xx:"),
    "a gap in a stream": (_stream_gap, "event streams:"),
    "a clock fired twice": (_clock_fired_twice, "clocks:"),
}


def test_a_short_soak_with_every_fault_accounts_for_everything(tmp_path) -> None:
    outcome = soak.run(DURATION, seed=5, work=tmp_path)
    c, accounting = outcome.collected, outcome.accounting
    assert {w.kind for w in c.windows} == {"redis", "replica", "postgres", "webhooks"}
    assert all(w.up is not None for w in c.windows)
    assert accounting.violations == [], "\n".join(accounting.violations)
    figures = accounting.figures
    # the play did what it says: every kind of game, finished, rated, timed out, streamed
    assert {n.kind for n in c.games.values()} == {"humans", "bots", "lobby", "clock"}
    assert figures["acks"] > 100
    assert figures["finished"] > 10
    assert figures["rated"] > 0
    assert figures["timed_out"] > 0
    assert figures["streamed"] > 0
    assert figures["webhooks"] > figures["finished"]
    assert any(i.killed for i in c.incarnations)
    assert len(c.incarnations) == 3

    for name, (spoil, check) in SPOILED.items():
        spoiled = copy.deepcopy(c)
        spoil(spoiled)
        found = soak.account(spoiled).violations
        assert any(v.startswith(check) for v in found), (name, found)
