"""The one reading of a number a client writes in a header, a path, a query or a token.

`str.isdigit` accepts digits `int` refuses (`²`) and `int` reads digits of every script
(`١`), signs, spaces and underscores: neither is a rule for what a client may send. A
number is ASCII digits only, within the bounds the caller states."""

from __future__ import annotations


def ascii_number(text: str, *, high: int, low: int = 0) -> int:
    """The number `text` writes in ASCII decimal digits (nothing else: no sign, space or
    `_`), from `low` to `high`; ValueError for anything else."""
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(high))):
        raise ValueError(f"not a number from {low} to {high}")
    number = int(text)
    if not low <= number <= high:
        raise ValueError(f"not a number from {low} to {high}")
    return number
