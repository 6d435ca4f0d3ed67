"""Judging a whole event log again, once its deal is known: every action it records is
decided anew by the engine (`domain.game.engine.apply`), and the log must hold exactly the
events the engine produces for it.

Each action's events start with the action's own (`recorded_action`: a `card_drawn` is a
draw, a `bid_placed` a bid, ...); the engine, handed that action by that seat, refuses it
(`RuleError`: not this seat's turn, a bid too low, a payment that does not pay, the game
over) or produces its events, which the log's next events must equal (and then the state
goes on from the engine's). The deal is `new_game`'s from the deck given (top card first),
so every draw takes the deck's next card.

What a log shows of the service's own moves is judged as the engine makes them:
- a bid names the payment the auction's end shows (`auction_won`: a winning bid's payment
  is public only then), and no payment otherwise;
- a `timed_out` is the clock's (`domain.bots.clock.time_out`): the seat the game waited on
  lets its deadline pass, and the events after it (same version) are the move made for it,
  judged as any other; a `seat_taken_over` after timeouts (`take_over`) follows the move
  made for that seat after its timeout, while the game is not over;
- the bots' moves are actions like the players', judged the same way (which legal move a
  bot picked is the bot's, not the rules').
The deadlines and the clock are not in the log: when a timeout was due is not judged.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import fields, replace

from domain.game.engine import apply, new_game, take_over, to_act
from domain.game.errors import RuleError
from domain.game.model import (
    BOT_LEVELS,
    SEAT_ACTIONS,
    Action,
    AuctionStarted,
    AuctionWon,
    Bid,
    BidPassed,
    BidPlaced,
    Buy,
    BuyDeclined,
    CardBought,
    CardDrawn,
    Decline,
    Draw,
    Event,
    GameStarted,
    GameState,
    Pass,
    Reclaim,
    Resign,
    SeatReclaimed,
    SeatTakenOver,
    Stop,
    Stopped,
    TimedOut,
    TokenPayment,
)

# The action a seat decides whose events start with this one (`apply`: an action's own event
# comes first, its consequences after it). A `seat_taken_over` is a resignation, unless it
# is the clock's after timeouts (`take_over`: no action of the seat).
ACTION_OF_EVENT: dict[type, type] = {
    CardDrawn: Draw,
    Stopped: Stop,
    BidPlaced: Bid,
    BidPassed: Pass,
    CardBought: Buy,
    BuyDeclined: Decline,
    SeatTakenOver: Resign,
    SeatReclaimed: Reclaim,
}
_DRAW, _PASS, _DECLINE, _RESIGN, _RECLAIM = Draw(), Pass(), Decline(), Resign(), Reclaim()


def recorded_action(event: Event, payment: TokenPayment | None = None) -> tuple[int, Action] | None:
    """The seat and the action whose events start with `event`; None when no action of a
    seat starts so. A bid names `payment` (the log shows a bid's payment only when it wins
    the auction: `auction_won`)."""
    match event:
        case CardDrawn(seat=seat):
            return seat, _DRAW
        case Stopped(seat=seat, take=take):
            return seat, Stop(take=take)
        case BidPlaced(seat=seat, amount=amount):
            return seat, Bid(amount=amount, payment=payment)
        case BidPassed(seat=seat):
            return seat, _PASS
        case CardBought(seat=seat, card=card, payment=paid):
            return seat, Buy(card=card, payment=paid)
        case BuyDeclined(seat=seat):
            return seat, _DECLINE
        case SeatTakenOver(seat=seat, reason="resigned"):
            return seat, _RESIGN
        case SeatReclaimed(seat=seat):
            return seat, _RECLAIM
    return None


class Misplayed(ValueError):
    """A log the engine would not have written: the first event wrong (its `seq`, its
    `version`) and why."""

    def __init__(self, event: Event, why: str) -> None:
        self.seq, self.version, self.why = event.seq, event.version, why
        super().__init__(f"event {event.seq} (version {event.version}): {why}")


def rejudge(events: Sequence[Event], deck: Sequence[str], seed: str = "") -> GameState:
    """The state after the whole log `events` (from `game_started`), every action judged
    again by the engine on the game dealt from `deck`; raises Misplayed at the first event
    the engine would not have produced."""
    if not events or type(events[0]) is not GameStarted:
        raise ValueError("an event log starts with game_started")
    return _Judge(events).run(deck, seed)


class _Judge:
    """A log being judged: `at` is the index of the next action's first event."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = events
        self.winning = _winning_bids(events)
        self.bot_named = False  # a seat taken over named the game's takeover bot

    def run(self, deck: Sequence[str], seed: str) -> GameState:
        events = self.events
        state, at = _dealt(events, deck, seed), 2
        timed_out: int | None = None  # the seat whose timed-out move was the last judged
        while at < len(events):
            event = events[at]
            if type(event) is TimedOut:
                state, at = self.timed_out(state, at)
                timed_out = event.seat
                continue
            if type(event) is SeatTakenOver and event.reason == "timeouts":
                state, produced = self.taken_over(state, event, timed_out)
            else:
                state, produced = self.judged(state, at)
            _same(events[at : at + len(produced)], produced)
            at += len(produced)
            timed_out = None
        return state

    def judged(
        self, state: GameState, at: int, seat: int | None = None
    ) -> tuple[GameState, list[Event]]:
        """The engine's state and events for the action `events[at]` starts (of `seat`,
        when given: a timed-out seat's move)."""
        event = self.events[at]
        recorded = recorded_action(event, self.winning.get(at))
        if recorded is None:
            raise Misplayed(event, f"no action starts with {_tag(event)}")
        by, action = recorded
        if seat is not None and (by != seat or type(action) in SEAT_ACTIONS):
            raise Misplayed(event, f"{_tag(event)} of seat {by} is no move made for seat {seat}")
        if type(event) is SeatTakenOver:
            state = self.takeover_bot(state, event)
        try:
            return apply(state, by, action)
        except RuleError as exc:
            raise Misplayed(
                event, f"{_tag(event)} of seat {by} is refused by the rules: {exc}"
            ) from None
        except (AssertionError, ValueError, IndexError, KeyError) as exc:  # no seat of the game
            raise Misplayed(event, f"{_tag(event)} of seat {by} is no action: {exc}") from None

    def timed_out(self, state: GameState, at: int) -> tuple[GameState, int]:
        """The clock's timeout (`domain.bots.clock.time_out`) at `events[at]`: of the seat
        the game waits on, with the move made for that seat after it (same version,
        numbered after the `timed_out`)."""
        events = self.events
        event = events[at]
        assert type(event) is TimedOut
        waiting = to_act(state)
        if waiting is None:
            raise Misplayed(event, "a timeout after the game ended")
        if event.seat != waiting:
            raise Misplayed(event, f"seat {event.seat} times out, the game waits on seat {waiting}")
        if (event.seq, event.version) != (state.last_seq + 1, state.version + 1):
            raise Misplayed(event, "timed_out is not numbered as the move made for the seat")
        if at + 1 >= len(events):
            raise Misplayed(event, "timed_out is not followed by the move made for the seat")
        numbered = replace(state, last_seq=event.seq)
        after, produced = self.judged(numbered, at + 1, event.seat)
        _same(events[at + 1 : at + 1 + len(produced)], produced)
        return after, at + 1 + len(produced)

    def taken_over(
        self, state: GameState, event: SeatTakenOver, timed_out: int | None
    ) -> tuple[GameState, list[Event]]:
        """The clock's takeover (`take_over`): right after the seat's timed-out move, in a
        game not over."""
        if timed_out != event.seat:
            raise Misplayed(
                event, f"seat {event.seat} is taken over without timing out just before"
            )
        if to_act(state) is None:
            raise Misplayed(event, "a seat taken over after the game ended")
        return take_over(self.takeover_bot(state, event), event.seat, "timeouts")

    def takeover_bot(self, state: GameState, event: SeatTakenOver) -> GameState:
        """The game's takeover bot is the service's setting, not in the log: the first seat
        taken over names it, and the engine gives every later one the same."""
        if self.bot_named:
            return state
        if event.bot not in BOT_LEVELS:
            raise Misplayed(event, f"{event.bot!r} is no bot level")
        self.bot_named = True
        return replace(state, takeover_bot=event.bot)


def _dealt(events: Sequence[Event], deck: Sequence[str], seed: str) -> GameState:
    """`new_game`'s deal from `deck`: `game_started` and the first `turn_started` must be
    its (the fairness commitment aside: a deck given has none; the verifier checks it)."""
    started = events[0]
    assert type(started) is GameStarted
    try:
        state, opening = new_game(
            [(p.name, p.bot) for p in started.players],
            seed,
            deck=deck,
            starting_seat=started.starting_seat,
            rules=started.rules,
            version=started.version,
        )
    except (RuleError, ValueError) as exc:
        raise Misplayed(started, f"game_started is no deal of the engine: {exc}") from None
    _same([replace(started, fairness=None), *events[1:2]], opening)
    return replace(state, fairness=started.fairness)


def _winning_bids(events: Sequence[Event]) -> dict[int, TokenPayment]:
    """The index of each auction's last bid, with the payment its `auction_won` shows."""
    winning: dict[int, TokenPayment] = {}
    last_bid = None
    for at, event in enumerate(events):
        kind = type(event)
        if kind is AuctionStarted:
            last_bid = None
        elif kind is BidPlaced:
            last_bid = at
        elif kind is AuctionWon and last_bid is not None:
            winning[last_bid] = event.payment  # type: ignore[attr-defined]
    return winning


def _same(logged: Sequence[Event], produced: Sequence[Event]) -> None:
    """The log's events are the engine's, one for one."""
    for i, made in enumerate(produced):
        if i >= len(logged):
            raise Misplayed(made, f"the log ends where the engine gives {_tag(made)}")
        event = logged[i]
        if event == made:
            continue
        if type(event) is CardDrawn and type(made) is CardDrawn and event.card != made.card:
            raise Misplayed(event, f"draws {event.card}, the deck's next card is {made.card}")
        if type(event) is not type(made):
            raise Misplayed(event, f"the log has {_tag(event)} where the engine gives {_tag(made)}")
        differ = [f.name for f in fields(event) if getattr(event, f.name) != getattr(made, f.name)]
        raise Misplayed(event, f"{_tag(event)} differs from the engine's in {', '.join(differ)}")


def _tag(event: Event) -> str:
    return str(type(event).__struct_config__.tag)
