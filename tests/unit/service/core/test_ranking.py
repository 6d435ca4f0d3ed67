"""`service.core.ranking.ranking`: which archived games count for stats and the leaderboard, and
why the others do not; which seats of a game count. Each rule alone, then combinations, on
real engine states (seats taken over and resigned by the engine itself)."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import msgspec
import pytest

from domain.bots.simulation import play_bots, play_game
from domain.game.engine import new_game, take_over
from domain.game.model import GameState
from service.core.model import GameRecord
from service.core.ranking import SEAT_UNRANKED_REASONS, UNRANKED_REASONS, Ranking, ranking


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
    assert decided == Ranking(seats=(None, None))
    assert decided.ranked
    assert [decided.counts(seat) for seat in (0, 1)] == [True, True]
    assert decided.reason is None
    assert decided.reasons == ()


def test_verified_humans_with_bots_are_ranked() -> None:
    assert ranking(record((None, "basic", None, "random"))).ranked


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"aborted": True}, "aborted"),
        ({"abandoned": True}, "abandoned"),
        ({"custom_deck": True}, "custom_deck"),
        ({"casual": True}, "casual"),
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


FLAGS = ["aborted", "abandoned", "custom_deck", "unverified_identity", "too_few_humans"]


@pytest.mark.parametrize(
    "flags",
    [set(c) for n in range(len(FLAGS) + 1) for c in itertools.combinations(FLAGS, n)],
    ids=lambda flags: "+".join(sorted(flags)) or "none",
)
def test_every_combination_gives_every_reason_in_order(flags: set[str]) -> None:
    """All 32 combinations: ranked only with none; otherwise every reason that applies,
    in UNRANKED_REASONS' order (the first is the primary one); no seat of an unranked game
    counts."""
    changes: dict[str, Any] = {}
    if "aborted" in flags:
        changes["aborted"] = True
    if "abandoned" in flags:
        changes["abandoned"] = True
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
    seats = len(changes.get("bots", (None, None)))
    assert [decided.counts(seat) for seat in range(seats)] == [not flags] * seats


def test_legacy_is_never_decided_here() -> None:
    """ "legacy" belongs to the rows archived before ranking (set by the migration)."""
    assert "legacy" not in UNRANKED_REASONS


# ---------------------------------------------------------------- abandoned games


def test_an_abandoned_game_mid_play() -> None:
    """Ended by the service after the idle time: stopped mid-game like an aborted game,
    with its own reason alone (not "aborted" too)."""
    state, _ = new_game([("Ann", None), ("Bob", None)], "ranking/abandoned")
    decided = ranking(record(state=state, abandoned=True))
    assert decided.reasons == ("abandoned",)
    assert not decided.counts(0)


def test_abandoned_comes_right_after_aborted() -> None:
    assert UNRANKED_REASONS[:2] == ("aborted", "abandoned")
    both = ranking(record(aborted=True, abandoned=True))  # status "aborted" wins
    assert both.reasons == ("aborted", "abandoned")


# ---------------------------------------------------------------- seats


@cache
def finished_after(bots: tuple[str | None, ...], changes: tuple[tuple[int, str], ...]) -> GameState:
    """A game played by bots like `finished`, where the engine takes seats over mid-game
    (`changes`: (seat, "timeouts" | "resigned"), in that order, at action 20) and bots play
    it to its end: the results rank resigned seats last."""
    seen: list[GameState] = []
    play_game(
        [bot or "basic" for bot in bots],
        f"ranking/seats/{len(bots)}",
        on_action=lambda *a: seen.append(a[3]),
    )
    state = seen[20]
    assert state.phase != "finished"
    for seat, reason in changes:
        state, _ = take_over(state, seat, reason)
    state, _ = play_bots(state)
    assert state.phase == "finished"
    players = tuple(
        msgspec.structs.replace(p, bot=bot) for p, bot in zip(state.players, bots, strict=True)
    )
    return msgspec.structs.replace(state, players=players)


def seats_of(decided: Ranking, n: int) -> list[tuple[bool, str | None]]:
    return [(decided.counts(seat), decided.seats[seat]) for seat in range(n)]


def test_a_seat_taken_over_after_timeouts_does_not_count() -> None:
    """The game stays ranked; the seat a bot took over is the only one that does not count."""
    bots = (None, None, None)
    decided = ranking(record(bots, state=finished_after(bots, ((1, "timeouts"),))))
    assert decided.ranked
    assert decided.reasons == ()
    assert seats_of(decided, 3) == [(True, None), (False, "taken_over"), (True, None)]
    assert SEAT_UNRANKED_REASONS == ("taken_over",)


def test_a_seat_taken_back_stays_taken_over() -> None:
    """Reclaiming the seat gives the player their moves back, not the game's ranking:
    `taken_over` stays set (the seat no longer has a stand-in)."""
    bots = (None, None, None)
    state = finished_after(bots, ((1, "timeouts"),))
    bob = msgspec.structs.replace(state.players[1], stand_in=None)
    state = msgspec.structs.replace(state, players=(state.players[0], bob, state.players[2]))
    decided = ranking(record(bots, state=state))
    assert seats_of(decided, 3)[1] == (False, "taken_over")


def test_a_resigned_seat_counts_and_ranks_last() -> None:
    bots = (None, None, None)
    state = finished_after(bots, ((0, "resigned"),))
    decided = ranking(record(bots, state=state))
    assert decided.ranked
    assert seats_of(decided, 3) == [(True, None)] * 3
    assert state.results is not None
    ann, *others = state.results
    assert ann.resigned
    assert not ann.winner
    assert all(ann.rank > other.rank for other in others)
    assert not any(other.resigned for other in others)


def test_taken_over_then_resigned_counts() -> None:
    """Resigning after a takeover ranks the player last: the seat counts again (else
    timing out would be a way to leave a lost game without a loss)."""
    bots = (None, None, None)
    state = finished_after(bots, ((2, "timeouts"), (2, "resigned")))
    assert (state.players[2].taken_over, state.players[2].resigned) == (True, True)
    decided = ranking(record(bots, state=state))
    assert seats_of(decided, 3) == [(True, None)] * 3
    assert state.results is not None
    assert state.results[2].rank == 3


def test_the_game_stays_ranked_for_the_human_left() -> None:
    """Two humans and a bot; the only other human was taken over. The game was ranked by
    the rules of the game as a whole (two verified humans at the table), and it stays so:
    only the seat taken over is excluded. Unranking it for the human who stayed would
    punish them for the other's absence and let a losing player void the winner's result
    by letting their clock run out."""
    bots = (None, "basic", None)
    decided = ranking(record(bots, state=finished_after(bots, ((2, "timeouts"),))))
    assert decided.ranked
    assert seats_of(decided, 3) == [(True, None), (True, None), (False, "taken_over")]


def test_every_seat_taken_over() -> None:
    """Both humans timed out until a bot took them over: the game is ranked, nobody's
    result counts."""
    bots = (None, None)
    decided = ranking(record(bots, state=finished_after(bots, ((0, "timeouts"), (1, "timeouts")))))
    assert decided.ranked
    assert seats_of(decided, 2) == [(False, "taken_over")] * 2


def test_a_seat_reason_is_kept_in_an_unranked_game() -> None:
    """The seat's own reason is a fact about the seat: an unranked game keeps it (nothing
    of that game counts anyway)."""
    bots = (None, None, None)
    state = finished_after(bots, ((1, "timeouts"),))
    decided = ranking(record(bots, state=state, custom_deck=True))
    assert decided.reasons == ("custom_deck",)
    assert seats_of(decided, 3) == [(False, None), (False, "taken_over"), (False, None)]


def test_an_abandoned_game_with_a_seat_taken_over() -> None:
    state, _ = new_game([("Ann", None), ("Bob", None)], "ranking/abandoned/taken")
    state, _ = take_over(state, 0, "timeouts")
    decided = ranking(record(state=state, abandoned=True))
    assert decided.reasons == ("abandoned",)
    assert seats_of(decided, 2) == [(False, "taken_over"), (False, None)]


def test_a_table_that_never_started_has_no_seats_to_count() -> None:
    decided = ranking(msgspec.structs.replace(record(), state=None))
    assert decided.seats == ()
    assert not decided.counts(0)
