"""`service.ranking.ranking`: which archived games count for stats and the leaderboard, and
why the others do not. Each rule alone, then combinations, on real engine states."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import msgspec
import pytest

from domain.engine import new_game
from domain.model import GameState
from domain.simulation import play_game
from service.ports import GameRecord
from service.ranking import UNRANKED_REASONS, Ranking, ranking

pytestmark = pytest.mark.unit


@cache
def finished(bots: tuple[str | None, ...]) -> GameState:
    """A finished game with these seats: a bot level, or None for a human (the bots of
    `play_game` play the human seats too; only the record says who is a bot)."""
    sim = play_game([bot or "basic" for bot in bots], f"ranking/{len(bots)}")
    assert sim.state.phase == "finished"
    players = tuple(
        msgspec.structs.replace(p, bot=bot) for p, bot in zip(sim.state.players, bots, strict=True)
    )
    return msgspec.structs.replace(sim.state, players=players)


def record(
    bots: tuple[str | None, ...] = (None, None),
    player_ids: tuple[str | None, ...] | None = None,
    verified: tuple[bool, ...] | None = None,
    **fields: Any,
) -> GameRecord:
    """A game as the archive gets it; by default two verified humans, ann and bob, and bots."""
    n = len(bots)
    default_ids = tuple(
        ("ann", "bob", "cy", "dee", "eve")[s] if bots[s] is None else None for s in range(n)
    )
    return GameRecord(
        id="0" * 20,
        state=fields.pop("state", None) or finished(bots),
        token_hashes=(None,) * n,
        created_at=1.0,
        updated_at=2.0,
        player_ids=default_ids if player_ids is None else player_ids,
        verified=tuple(b is None for b in bots) if verified is None else verified,
        **fields,
    )


def test_two_verified_humans_are_ranked() -> None:
    decided = ranking(record())
    assert decided == Ranking()
    assert decided.ranked
    assert decided.reason is None
    assert decided.reasons == ()


def test_verified_humans_with_bots_are_ranked() -> None:
    assert ranking(record((None, "basic", None, "random"))).ranked


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"aborted": True}, "aborted"),
        ({"custom_deck": True}, "custom_deck"),
        ({"verified": (True, False)}, "unverified_identity"),
        ({"verified": (False, False)}, "unverified_identity"),
        ({"verified": ()}, "unverified_identity"),  # a record of an older release
        ({"verified": (True,)}, "unverified_identity"),  # shorter than the seats
        ({"bots": (None, "basic", "basic")}, "too_few_humans"),  # one human, verified
        ({"bots": (None,)}, "too_few_humans"),  # a solo game
        ({"bots": ("basic", "random")}, "too_few_humans"),  # bots only
        ({"player_ids": ("ann", "ann")}, "too_few_humans"),  # one person in two seats
    ],
)
def test_each_rule_alone(changes: dict[str, Any], reason: str) -> None:
    decided = ranking(record(**changes))
    assert not decided.ranked
    assert decided.reasons == (reason,)
    assert decided.reason == reason


def test_a_human_without_a_player_id_is_unverified_even_if_marked_verified() -> None:
    """verified[seat] alone is not enough: the seat must have a player id too."""
    decided = ranking(
        record((None, None, None), player_ids=("ann", "bob", None), verified=(True,) * 3)
    )
    assert decided.reasons == ("unverified_identity",)


def test_a_bot_seat_needs_no_verification() -> None:
    """Bots are not humans: an unverified bot seat (and a player id on it) change nothing."""
    decided = ranking(
        record(
            (None, None, "basic"),
            player_ids=("ann", "bob", "bot-owner"),
            verified=(True, True, False),
        )
    )
    assert decided.ranked


def test_bots_do_not_count_as_humans() -> None:
    """Two distinct ids, but one of them on a bot seat: one human only."""
    decided = ranking(record((None, "basic"), player_ids=("ann", "bob"), verified=(True, True)))
    assert decided.reasons == ("too_few_humans",)


def test_anonymous_humans_are_unverified_and_too_few() -> None:
    """Four humans without player ids (the open default): neither verified nor distinct."""
    decided = ranking(record((None,) * 4, player_ids=(None,) * 4, verified=()))
    assert decided.reasons == ("unverified_identity", "too_few_humans")
    assert decided.reason == "unverified_identity"


def test_an_unfinished_game_that_was_not_aborted_is_not_ranked() -> None:
    """Only an ended game is archived; one still going is not a normal end either."""
    state, _ = new_game([("Ann", None), ("Bob", None)], "ranking/live")
    decided = ranking(record(state=state))
    assert decided.reasons == ("aborted",)


def test_an_aborted_game_mid_play() -> None:
    state, _ = new_game([("Ann", None), ("Bob", None)], "ranking/aborted")
    decided = ranking(record(state=state, aborted=True))
    assert decided.reasons == ("aborted",)


def test_a_table_that_never_started() -> None:
    base = record()
    decided = ranking(msgspec.structs.replace(base, state=None))
    assert not decided.ranked
    assert decided.reason == "aborted"


FLAGS = ["aborted", "custom_deck", "unverified_identity", "too_few_humans"]


@pytest.mark.parametrize(
    "flags",
    [set(c) for n in range(len(FLAGS) + 1) for c in itertools.combinations(FLAGS, n)],
    ids=lambda flags: "+".join(sorted(flags)) or "none",
)
def test_every_combination_gives_every_reason_in_order(flags: set[str]) -> None:
    """All 16 combinations: ranked only with none; otherwise every reason that applies,
    in UNRANKED_REASONS' order (the first is the primary one)."""
    changes: dict[str, Any] = {}
    if "aborted" in flags:
        changes["aborted"] = True
    if "custom_deck" in flags:
        changes["custom_deck"] = True
    if "too_few_humans" in flags:
        changes["bots"] = (None, "basic")
    if "unverified_identity" in flags:
        bots = changes.get("bots", (None, None))
        changes["verified"] = (False,) * len(bots)
    decided = ranking(record(**changes))
    expected = tuple(r for r in UNRANKED_REASONS if r in flags)
    assert decided.reasons == expected
    assert decided.ranked is (not flags)
    assert decided.reason == (expected[0] if expected else None)


def test_legacy_is_never_decided_here() -> None:
    """ "legacy" belongs to the rows archived before ranking (set by the migration)."""
    assert "legacy" not in UNRANKED_REASONS
