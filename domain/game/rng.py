"""A seeded random source that gives the same numbers on every machine and Python version.

`random.Random` is not promised to stay stable across Python releases, so the shuffle is
built on SHA-256 in counter mode with rejection sampling (no modulo bias).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
_U64S = {blocks: struct.Struct(f">{4 * blocks}Q") for blocks in range(1, 9)}  # 4 per block


class SeededRandom:
    __slots__ = ("_counter", "_key", "_pending", "_seed")

    def __init__(self, seed: str | int) -> None:
        # the key is hashed at the first number drawn: a bot's random source is made for
        # every move, and only the `random` bot draws from it
        self._seed = seed
        self._key = b""
        self._counter = 0
        self._pending: list[int] = []  # numbers hashed but not used yet, last first

    def _refill(self) -> None:
        """The next blocks of the stream into `_pending` (empty): one block for a new
        stream, more at a time (up to 8) once it has used several, as a game's does."""
        used = self._counter
        blocks = 1 if used < 2 else used if used < 8 else 8
        self._pending.extend(_U64S[blocks].unpack(self._next_blocks(blocks))[::-1])

    def _next_blocks(self, blocks: int) -> bytes:
        """The stream's next `blocks` blocks of 32 bytes (4 numbers each)."""
        key, first = self._key, self._counter
        if not key:
            key = self._key = _sha256(b"ten-rng-v1\x00" + str(self._seed).encode()).digest()
        self._counter = first + blocks
        return b"".join(
            [_sha256(key + c.to_bytes(8, "big")).digest() for c in range(first, first + blocks)]
        )

    def _next_u64(self) -> int:
        if not self._pending:
            self._refill()
        return self._pending.pop()

    def randbelow(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        limit = _LIMITS.get(n)
        if limit is None:
            if n <= 0:
                raise ValueError("n must be positive")
            limit = _limit(n)
        pending = self._pending
        while True:
            if not pending:
                self._refill()
            value = pending.pop()
            if value < limit:
                return value % n

    def choice(self, items: Sequence[T]) -> T:
        return items[self.randbelow(len(items))]

    def random(self) -> float:
        """A uniform float in [0, 1) with 53 bits."""
        return (self._next_u64() >> 11) / float(1 << 53)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffle: for i from the last index down to 1, swap item i with
        item randbelow(i + 1)."""
        out = list(items)
        randbelow = self.randbelow
        for i in range(len(out) - 1, 0, -1):
            j = randbelow(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def _limit(n: int) -> int:
    """Values of a u64 at or above this are rejected for `randbelow(n)` (no modulo bias)."""
    return (1 << 64) - ((1 << 64) % n)


_sha256 = hashlib.sha256
_LIMITS: dict[int, int] = {n: _limit(n) for n in range(1, 257)}
