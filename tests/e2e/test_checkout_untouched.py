"""A test run leaves the checkout as it found it (issue 26): a service process on the
embedded default (no TEN_* at all: its SQLite archive is `./ten-archive.sqlite3` in its
working directory) plays a game to its end and archives it; the archive is in the process's
own temporary directory, and the checkout shows nothing new or changed (git's view,
tests/support/checkout.py; the root conftest checks the same of every whole session)."""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path

import pytest

from tests.servers import ROOT, ServiceProcess
from tests.support.api import strict_client
from tests.support.checkout import changes, snapshot
from tests.support.replicas import create_game, play_game

ARCHIVED_WITHIN = 30.0  # seconds: a bounded wait for the archiver, not a speed check


def test_an_embedded_service_archives_in_its_own_directory_not_the_checkout() -> None:
    before = snapshot(ROOT)
    server = ServiceProcess({})
    own = server.cwd
    try:
        assert own is not None
        assert not own.is_relative_to(ROOT), own
        with strict_client(server.base) as client:
            game = create_game(client, [{"name": "ann"}, {"name": "bob"}])
            final, _ = play_game([client], game, random.Random(26))
            assert final["status"] == "finished"
            deadline = time.monotonic() + ARCHIVED_WITHIN
            while (archived := client.get(f"/v1/archive/games/{game['id']}")).status_code == 404:
                assert time.monotonic() < deadline, "the finished game was never archived"
                time.sleep(0.1)
            assert archived.status_code == 200, archived.text
            assert archived.json()["id"] == game["id"]
        assert (own / "ten-archive.sqlite3").is_file()
    finally:
        server.stop()
    assert not own.exists()  # removed with the process
    assert changes(before, snapshot(ROOT)) == []


@pytest.mark.parametrize("prefix", [None, "elsewhere"], ids=["bytecode here", "bytecode moved"])
def test_the_checkout_check_sees_a_new_an_ignored_and_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str | None
) -> None:
    """Bytecode caches are left out in a run that writes them in the checkout; in a run
    whose `PYTHONPYCACHEPREFIX` moves them out, one written in it is named (a process
    started without the run's environment wrote it)."""
    if prefix is None:
        monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    else:
        monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / prefix))
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("*.sqlite3\n.venv/\n")
    (repo / "kept.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        check=True,
    )
    (repo / ".venv").mkdir()
    (repo / "pkg" / "__pycache__").mkdir(parents=True)
    before = snapshot(repo)
    (repo / "ten-archive.sqlite3").write_bytes(b"x")  # ignored, still a write
    (repo / "notes.txt").write_text("new\n")  # untracked
    (repo / "kept.txt").write_text("two\n")  # tracked, changed
    (repo / ".venv" / "lib.py").write_text("")  # set-up artefact: left out
    (repo / "pkg" / "__pycache__" / "m.pyc").write_bytes(b"")  # bytecode cache
    bytecode = [] if prefix is None else ["pkg/__pycache__/m.pyc (new)"]
    assert changes(before, snapshot(repo)) == [
        "kept.txt (changed)",
        "notes.txt (new)",
        *bytecode,
        "ten-archive.sqlite3 (new)",
    ]
