"""The checkout stays as the tests found it: nothing a test run writes lands in it.

`snapshot(root)` lists every path `git status --ignored` would show (untracked, ignored and
modified files, one by one) with its size and modification time; `changes(before, after)`
names what a run added or changed. The root conftest takes a snapshot of the untracked and
ignored files when a session starts and fails the session if any appeared or changed by its
end (edits of tracked files are left to `git diff`: a developer may save one mid-run).

Left out, exactly: `SET_UP` (the virtual environment and the TypeScript clients' npm
installs, made by `scripts/setup`, not by tests) and, in a run without `PYTHONPYCACHEPREFIX`,
`__pycache__/` directories (CPython's bytecode cache, written by any import of the
checkout's modules, the test run's own first of all). `scripts/test` sets the prefix
(scripts/lib/bytecode.sh), which moves the cache out of the checkout: then a `__pycache__`
written in it is a process a test started with an environment of its own that dropped the
prefix, and is named like any other write. Such an environment takes `bytecode_settings()`.

`outside(name)` is a directory for what tests keep between runs (the Hypothesis example
database, screenshots): in the system's temporary directory, one per checkout, never in it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from tests.servers import ROOT

SET_UP = (".venv", "clients/ts/node_modules", "clients/web/node_modules")
BYTECODE = "__pycache__"

# (git's two-letter status, size, mtime_ns); size and time None: listed but gone (deleted)
Stat = tuple[str, int | None, int | None]


def outside(name: str, root: Path = ROOT) -> Path:
    """`<tmp>/ten-tests-<checkout hash>/<name>`, created: kept between runs, outside `root`."""
    tag = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"ten-tests-{tag}" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def bytecode_settings() -> dict[str, str]:
    """The run's own bytecode settings (`PYTHONPYCACHEPREFIX`, `PYTHONDONTWRITEBYTECODE`),
    for a process started with an environment of its own."""
    names = ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")
    return {name: os.environ[name] for name in names if name in os.environ}


def left_out(path: str) -> bool:
    """`SET_UP`, and bytecode caches in a run that keeps them in the checkout (no
    `PYTHONPYCACHEPREFIX`). Git lists an ignored directory itself (`.venv/`)."""
    clean = path.rstrip("/")
    bytecode_here = not os.environ.get("PYTHONPYCACHEPREFIX")
    return (bytecode_here and BYTECODE in clean.split("/")) or any(
        clean == setup or clean.startswith(f"{setup}/") for setup in SET_UP
    )


def snapshot(root: Path = ROOT, *, tracked: bool = True) -> dict[str, Stat]:
    """Every untracked, ignored or (with `tracked`) changed tracked path under `root` (git's
    view, files one by one), what `left_out` says left out, with its size and time."""
    excluded = [f":(exclude){path}" for path in SET_UP]  # not walked (listed at most once)
    listed = subprocess.run(
        ["git", "status", "--porcelain=v1", "-z", "--ignored=matching",
         "--untracked-files=all", "--no-renames", "--", ".", *excluded],
        cwd=root, capture_output=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    found: dict[str, Stat] = {}
    for entry in listed.decode(errors="surrogateescape").split("\0"):
        status, path = entry[:2], entry[3:]
        if not entry or left_out(path) or (not tracked and status not in ("??", "!!")):
            continue
        try:
            stat = (root / path).lstat()
        except FileNotFoundError:
            found[path] = (status, None, None)
        else:
            found[path] = (status, stat.st_size, stat.st_mtime_ns)
    return found


def changes(before: Mapping[str, Stat], after: Mapping[str, Stat]) -> list[str]:
    """The paths that appeared, changed or went between two snapshots, each with what."""
    found = []
    for path in sorted(after.keys() | before.keys()):
        if path not in after:
            found.append(f"{path} (gone)")
        elif after[path] == before.get(path):
            continue
        elif after[path][1] is None:
            found.append(f"{path} (deleted)")
        elif path in before or after[path][0] not in ("??", "!!"):
            found.append(f"{path} (changed)")
        else:
            found.append(f"{path} (new)")
    return found
