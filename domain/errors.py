"""The engine's one error type: every refusal carries a stable machine-readable code."""

from __future__ import annotations

from typing import Final

# code -> what it means; the HTTP layer maps these to statuses (api.md)
RULE_ERROR_CODES: Final[dict[str, str]] = {
    "not_your_turn": "It is not this seat's decision now.",
    "illegal_action": "This kind of action is not allowed in the current phase.",
    "game_finished": "The game is over; no more actions are accepted.",
    "must_draw": "The first action of every turn is a draw.",
    "draw_pile_empty": "The draw pile is empty: the player must stop.",
    "bid_too_low": "A bid must be at least 1 and strictly more than the highest bid so far.",
    "bid_too_high": "A bid cannot exceed the bidder's bidding power (currency + 3 x bust tokens).",
    "insufficient_payment": "The payment is worth less than the price.",
    "payment_not_minimal": "Taking a token or card out of the payment would still cover the price.",
    "payment_not_held": "The payment uses tokens or cards the player does not hold.",
    "duplicate_card": "The player already has an identical number card.",
    "card_not_in_market": "That card is not in the market.",
    "unknown_card": "Not a valid card code.",
    "invalid_game": "The game setup is not valid.",
    "not_due": "No deadline of this game has passed yet.",
    "too_many_copies": "A deck or collection holds a card more times than the 129-card game has it.",
}


class RuleError(Exception):
    """An action or setup the rules refuse. The state it was applied to is unchanged."""

    def __init__(self, code: str, detail: str | None = None) -> None:
        if code not in RULE_ERROR_CODES:
            raise ValueError(f"unknown rule error code {code!r}")
        self.code = code
        self.detail = detail or RULE_ERROR_CODES[code]
        super().__init__(f"{code}: {self.detail}")
