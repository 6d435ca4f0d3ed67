"""The one write loop (`service.core.unit_of_work.write`) with fakes: a lost race is tried again
after a jittered pause on the record as stored, a gone record and too many lost races are
coded errors, and a refusal judged on a stale copy is judged again on the stored record."""

from __future__ import annotations

import asyncio

import pytest

from service.core.errors import ServiceError
from service.core.unit_of_work import Conflict, Retry, write


class Fake:
    def __init__(self, stored: int, tries: int = 5) -> None:
        self.stored = stored
        self.pauses: list[float] = []
        self.reads = 0

        async def sleep(seconds: float) -> None:
            self.pauses.append(seconds)

        self.retry = Retry(tries, base=0.01, cap=0.05, sleep=sleep, uniform=lambda a, b: b)

    async def reread(self) -> int:
        self.reads += 1
        return self.stored


def test_a_lost_race_pauses_longer_each_time_and_tries_the_stored_record() -> None:
    fake = Fake(stored=3)
    seen = []

    async def attempt(record: int) -> str:
        seen.append(record)
        if record < 3:
            fake.stored = 3
            raise Conflict(current=record + 1)
        return f"saved on {record}"

    answer = asyncio.run(write(0, attempt, fake.retry, gone="x_not_found", reread=fake.reread))
    assert answer == "saved on 3"
    assert seen == [0, 3]  # after the pause: the record as stored, not the conflict's
    assert fake.pauses == [0.01]

    fake = Fake(stored=0)
    lost: list[int] = []

    async def always_lost(record: int) -> str:
        lost.append(record)
        raise Conflict(current=record)

    with pytest.raises(ServiceError) as refused:
        asyncio.run(write(0, always_lost, fake.retry, gone="x_not_found"))
    assert refused.value.code == "concurrent_update"
    assert len(lost) == 5
    assert fake.pauses == [0.01, 0.02, 0.04, 0.05]  # doubling up to the cap


def test_a_gone_record_is_its_not_found_error() -> None:
    fake = Fake(stored=0)

    async def attempt(record: int) -> str:
        raise Conflict(current=None)

    with pytest.raises(ServiceError) as refused:
        asyncio.run(write(0, attempt, fake.retry, gone="tournament_not_found"))
    assert refused.value.code == "tournament_not_found"


def test_a_refusal_on_a_stale_copy_is_judged_again_on_the_stored_record() -> None:
    fake = Fake(stored=7)

    async def attempt(record: int) -> str:
        if record != 7:
            raise ServiceError("game_over")
        return "saved"

    assert asyncio.run(write(1, attempt, fake.retry, gone="g", stale=True, reread=fake.reread))
    assert fake.reads == 1
    with pytest.raises(ServiceError):  # on a fresh record, the refusal is the answer
        asyncio.run(write(1, attempt, fake.retry, gone="g", reread=fake.reread))
