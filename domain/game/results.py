"""End of game: scores, ranks and winners (rules.md 5, 6)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.model import ColorResult, Player, Result, Rules
from domain.game.scoring import score_collection


def final_results(players: Sequence[Player], rules: Rules) -> tuple[Result, ...]:
    """Highest score wins; ties: most currency tokens (bust tokens do not count), then the
    fewest cards in the collection; still tied, the win is shared. A seat whose player
    resigned ranks below every seat that did not (among themselves, by the same order) and
    never wins."""
    scores = [score_collection(p.cards, rules.perfect_bonus) for p in players]
    keys = [
        (p.resigned, -s.total, -p.currency, len(p.cards))
        for s, p in zip(scores, players, strict=True)
    ]
    results = []
    for seat, (player, score) in enumerate(zip(players, scores, strict=True)):
        rank = 1 + sum(1 for other in keys if other < keys[seat])
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
