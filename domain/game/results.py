"""End of game: scores, ranks and winners (rules.md 5, 6)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.model import ColorResult, Player, Result, Rules
from domain.game.scoring import score_collection

# a seat's place in the rules' order of seats (`place`): the lower, the better
Place = tuple[bool, float, int, int]


def place(score: float, resigned: bool, currency: int, cards: int) -> Place:
    """A seat's key in the rules' order of seats (rules.md D16): a seat whose player did not
    resign before one that did, then the higher score, then the most currency tokens (bust
    tokens do not count), then the fewest cards in the collection; equal keys tie."""
    return (resigned, -score, -currency, cards)


def ranks(places: Sequence[Place]) -> tuple[int, ...]:
    """Each seat's rank from its `place`: 1 + the seats placed before it (tied seats share a
    rank and the next rank is skipped)."""
    return tuple(1 + sum(1 for other in places if other < mine) for mine in places)


def margins(worth: Sequence[float]) -> tuple[float, ...]:
    """Each seat's worth (a score, an equity, a count) less the mean of the other seats'
    (a seat alone: its own worth). Over two seats or more they sum to 0."""
    n = len(worth)
    if n == 1:
        return (float(worth[0]),)
    total = sum(worth)
    return tuple(w - (total - w) / (n - 1) for w in worth)


def final_results(players: Sequence[Player], rules: Rules) -> tuple[Result, ...]:
    """Highest score wins; ties: most currency tokens (bust tokens do not count), then the
    fewest cards in the collection; still tied, the win is shared. A seat whose player
    resigned ranks below every seat that did not (among themselves, by the same order) and
    never wins."""
    scores = [score_collection(p.cards, rules.perfect_bonus) for p in players]
    ranked = ranks(
        [
            place(s.total, p.resigned, p.currency, len(p.cards))
            for s, p in zip(scores, players, strict=True)
        ]
    )
    results = []
    for seat, (player, score) in enumerate(zip(players, scores, strict=True)):
        rank = ranked[seat]
        results.append(
            Result(
                seat=seat,
                score=score.total,
                colors={
                    color: ColorResult(points=cs.points, run=cs.run)
                    for color, cs in score.colors.items()
                },
                rank=rank,
                winner=rank == 1 and not player.resigned,
                currency=player.currency,
                bust=player.bust,
                cards=len(player.cards),
                resigned=player.resigned,
            )
        )
    return tuple(results)
