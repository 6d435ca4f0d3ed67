"""The engine's one error type: every refusal carries a stable machine-readable code, and a
message as an English template with named parameters (`Text`), which an outer layer may
translate (the problem responses: `service.entrypoints.api.i18n`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


def _same(template: str) -> str:
    return template


class Text:
    """A message: an English template in `str.format` syntax and its named parameters
    (`Text("Not valid card codes: {cards}.", cards="X9")`). `str()` is the English; `render`
    looks each template up through `translate` first. A parameter that is itself a Text (or
    `Joined` Texts) is rendered the same way; any other value (a card code, a number) is
    formatted as it is, never translated."""

    __slots__ = ("params", "template")

    def __init__(self, template: str, **params: object) -> None:
        self.template = template
        self.params = params

    def render(self, translate: Callable[[str], str] = _same) -> str:
        values = {name: _rendered(value, translate) for name, value in self.params.items()}
        return translate(self.template).format_map(values)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Text({self.template!r}, **{self.params!r})"


class Joined:
    """Texts as one parameter of a Text: each rendered, then joined by `separator`."""

    __slots__ = ("separator", "texts")

    def __init__(self, separator: str, texts: Iterable[Text]) -> None:
        self.separator = separator
        self.texts = tuple(texts)

    def render(self, translate: Callable[[str], str] = _same) -> str:
        return self.separator.join(text.render(translate) for text in self.texts)


def _rendered(value: object, translate: Callable[[str], str]) -> object:
    return value.render(translate) if isinstance(value, Text | Joined) else value


def message(default: str, detail: str | Text | None, params: dict[str, object]) -> Text:
    """The Text of an error: `detail` (a template formatted with `params`, or a Text), else
    the code's `default`."""
    if isinstance(detail, Text):
        return detail
    return Text(detail or default, **params)


class RuleError(Exception):
    """An action or setup the rules refuse. The state it was applied to is unchanged.

    `detail` is an English template formatted with the keyword `params`
    (`RuleError("unknown_card", "Not valid card codes: {cards}.", cards="X9")`); `text`
    keeps both for translation, `detail` is the English."""

    def __init__(self, code: str, detail: str | Text | None = None, **params: object) -> None:
        if code not in RULE_ERROR_CODES:
            raise ValueError(f"unknown rule error code {code!r}")
        self.code = code
        self.text = message(RULE_ERROR_CODES[code], detail, params)
        self.detail = str(self.text)
        super().__init__(f"{code}: {self.detail}")

    def __reduce__(self) -> tuple:
        """Pickled as its code and Text (a step computed in another process raises it there)."""
        return (RuleError, (self.code, self.text))
