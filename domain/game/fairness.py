"""Provably fair deals, scheme `ten-fair-v1` (docs/fairness.md): the server commits to a
game's secret seed before any seat acts, each human seat may add its own entropy when it
takes its seat, and the pile is the documented shuffle (`domain.game.rng`) of a seed derived
from both. The seed is revealed once the game has ended, so anyone can check the deal.

- `commitment(seed)`: hex SHA-256 of `b"ten-commit-v1\\x00" + seed` (UTF-8).
- `deal_seed(seed, entropy)`: the seed itself when every seat's entropy is empty (the deals
  made before the scheme, and every seeded test, are unchanged); otherwise hex SHA-256 of
  `b"ten-deal-v1"`, then the seed and each seat's entropy in seat order, each as its UTF-8
  length (4 bytes, big-endian) followed by its UTF-8 bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec

SCHEME = "ten-fair-v1"
ENTROPY_LIMIT = 64  # characters of one seat's entropy
_COMMIT_TAG = b"ten-commit-v1\x00"
_DEAL_TAG = b"ten-deal-v1"


class Fairness(msgspec.Struct, frozen=True, kw_only=True):
    """What `game_started` publishes of a seeded deal: the scheme, the commitment to the
    secret seed, each seat's entropy ("" for none) in seat order, and whether the starting
    seat was drawn from the deal's random stream (else the creator named it)."""

    scheme: str = SCHEME
    commitment: str
    entropy: tuple[str, ...]
    start_drawn: bool


def commitment(seed: str | int) -> str:
    """The published commitment to a secret seed."""
    return hashlib.sha256(_COMMIT_TAG + str(seed).encode()).hexdigest()


def _framed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def deal_seed(seed: str | int, entropy: Sequence[str]) -> str:
    """The seed the pile is shuffled from: `seed` alone when no seat gave entropy, else the
    digest of the seed and every seat's entropy (see the module docstring)."""
    if not any(entropy):
        return str(seed)
    data = _DEAL_TAG + _framed(str(seed).encode()) + b"".join(_framed(e.encode()) for e in entropy)
    return hashlib.sha256(data).hexdigest()
