"""The one reading of a client's number (`service.core.numbers.ascii_number`): ASCII digits
within bounds, nothing else; and the seat of a seat token read with it (a digit `int`
refuses was a 500)."""

from __future__ import annotations

import asyncio

import pytest

from infra.memory_store import MemoryGameStore
from service.core.errors import ServiceError
from service.core.numbers import ascii_number
from service.core.settings import Settings
from service.games.use_cases import GameService
from tests.support.records import new_record

# what str.isdigit or int() take and a client's number is not
NOT_NUMBERS = [
    "²",  # isdigit, int() refuses
    "¹",
    "١",  # Arabic-Indic one: both take it
    "１",  # fullwidth one
    "𝟏",  # mathematical bold one
    "-1",
    "+1",
    " 1",
    "1 ",
    "1_0",
    "0x1",
    "",
    " ",
    "1.0",
    "1e3",
    "٣٤",
    "9" * 5000,  # past int()'s digit limit: refused before it is read
]


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_anything_but_ascii_digits_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a number from"):
        ascii_number(text, high=10**9)


@pytest.mark.parametrize(
    ("text", "low", "high", "number"),
    [("0", 0, 9, 0), ("9", 0, 9, 9), ("007", 0, 999, 7), ("1000000000", 0, 10**9, 10**9)],
)
def test_ascii_digits_within_bounds_are_read(text: str, low: int, high: int, number: int) -> None:
    assert ascii_number(text, low=low, high=high) == number


@pytest.mark.parametrize(
    ("text", "low", "high"), [("10", 0, 9), ("0", 1, 9), ("1000000001", 0, 10**9)]
)
def test_out_of_bounds_is_refused(text: str, low: int, high: int) -> None:
    with pytest.raises(ValueError, match="not a number from"):
        ascii_number(text, low=low, high=high)


@pytest.mark.parametrize("seat", ["²", "١", "-1", "", "10", "1 "])
def test_a_seat_token_with_a_seat_that_is_no_ascii_digit_is_unauthorized(seat: str) -> None:
    async def body() -> None:
        service = GameService(MemoryGameStore(), Settings())
        record, _ = new_record("numbersgame000000000")
        with pytest.raises(ServiceError) as refused:
            await service.seat_of(record, f"{record.id}.{seat}.secret")
        assert refused.value.code == "unauthorized"

    asyncio.run(body())


def test_a_seat_token_of_the_game_still_gives_its_seat() -> None:
    async def body() -> None:
        service = GameService(MemoryGameStore(), Settings())
        record, _ = new_record("numbersgame000000000")
        assert await service.seat_of(record, f"{record.id}.0.secret") == 0

    asyncio.run(body())
