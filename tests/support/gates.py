"""A step that waits, in whatever process computes it (a bot pool's worker), until the test
opens its gate: a FIFO in the test's own directory (`Gate`)."""

from __future__ import annotations

import os
from pathlib import Path


def held(path: str) -> bytes:
    """Wait until the gate at `path` opens (opening a FIFO to read blocks until a writer
    opens it); what was written through it."""
    with open(path, "rb") as fifo:
        return fifo.read()


class Gate:
    def __init__(self, where: Path, name: str = "gate") -> None:
        self.path = str(where / name)
        os.mkfifo(self.path)

    def open(self, message: bytes = b"open") -> None:
        """Let one step waiting at the gate through."""
        with open(self.path, "wb") as fifo:
            fifo.write(message)
