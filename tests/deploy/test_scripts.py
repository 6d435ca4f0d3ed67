"""The set-up scripts: `scripts/run` installs only the runtime (no dev extras, no npm),
`scripts/setup` (for the tests) the dev extras and the TypeScript clients' packages, the
stamps let either run first, and every apt-get call waits for a held package lock.

The scripts run for real in a temp copy of the checkout, with stand-ins on PATH and in
`.venv` for the installers (uv, pip, npm, apt-get) that record how they were called: what
is installed is the scripts' decision, which is what is checked, without the network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "scripts").rglob("*") if p.is_file())

RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "$CALLS"
{extra}
"""


def recorder(path: Path, extra: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RECORDER.format(extra=extra))
    path.chmod(0o755)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what scripts/setup reads, with a `.venv` whose python and uv only record
    their calls, and npm on PATH that records too."""
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    shutil.copy(ROOT / "pyproject.toml", copy)
    shutil.copy(ROOT / "setup.py", copy)
    (copy / "domain/game").mkdir(parents=True)
    shutil.copy(ROOT / "domain/game/scoring.py", copy / "domain/game")
    # the documentation site's sources (setup installs its tools and builds it)
    shutil.copytree(ROOT / "docs", copy / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", copy)
    (copy / "openapi").mkdir()
    shutil.copy(ROOT / "openapi/openapi.json", copy / "openapi")
    for pkg in ("clients/ts", "clients/web"):
        (copy / pkg).mkdir(parents=True)
        shutil.copy(ROOT / pkg / "package-lock.json", copy / pkg)
    recorder(copy / ".venv/bin/python")  # `-m pip install uv==...`
    recorder(copy / ".venv/bin/uv", 'echo "uv 0.0.0"')  # an old uv: pip reinstalls it
    recorder(tmp_path / "bin/npm", 'mkdir -p "$3/node_modules"')  # npm ci --prefix <pkg>
    recorder(tmp_path / "bin/apt-get")
    return copy


def execute(
    checkout: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run bash with `args` in the copy, the stand-ins first on PATH."""
    return subprocess.run(
        ["bash", *args],
        cwd=checkout,
        env={
            **os.environ,
            "PATH": f"{checkout.parent / 'bin'}:{os.environ['PATH']}",
            "PYTHON": sys.executable,
            "CALLS": str(checkout.parent / "calls.log"),
            **(env or {}),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def run(checkout: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """Run a script of the copy, which must succeed; returns the installers' calls it made."""
    calls = checkout.parent / "calls.log"
    calls.unlink(missing_ok=True)
    done = execute(checkout, *args, env=env)
    assert done.returncode == 0, done.stderr
    return calls.read_text().splitlines() if calls.exists() else []


def installs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("uv pip install")]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_script_parses(script: Path) -> None:
    # the shell scripts, and the contract check's Node module (scripts/lib/contract-check.mjs)
    check = ["node", "--check"] if script.suffix == ".mjs" else ["bash", "-n"]
    done = subprocess.run([*check, str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_run_sets_up_the_runtime_only() -> None:
    run_script = (ROOT / "scripts/run").read_text()
    assert "bash scripts/setup --runtime" in run_script
    assert "npm" not in run_script.replace("no npm", "")


def runtime_requirements(*extras: str) -> str:
    """pyproject.toml's requirements (`dependencies`, then the extras'), as the set-up lists them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return " ".join(
        project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    )


def test_the_runtime_set_up_installs_no_dev_extras_and_runs_no_npm(checkout: Path) -> None:
    calls = run(checkout, "scripts/setup", "--runtime")
    assert installs(calls) == [
        # the dependencies, then the documentation site's tools (scripts/run serves the site
        # it builds), then the project (mypyc) while the site is built
        f"uv pip install -q --python .venv/bin/python {runtime_requirements()}",
        "uv pip install -q --python .venv/bin/python -r docs/requirements.txt",
        "uv pip install -q --python .venv/bin/python -e .",
    ]
    assert not [c for c in calls if c.startswith("npm")]
    # uv itself, into .venv (by the interpreter's pip, --python .venv/bin/python: the call
    # is the venv's python's)
    assert any(c.startswith("python ") and "uv==" in c for c in calls)


def test_a_runtime_venv_gets_the_dev_extras_when_the_tests_need_them(checkout: Path) -> None:
    run(checkout, "scripts/setup", "--runtime")
    calls = run(checkout, "scripts/setup")
    assert installs(calls) == [
        f"uv pip install -q --python .venv/bin/python {runtime_requirements('dev')}",
        "uv pip install -q --python .venv/bin/python -e .[dev]",
    ]
    npm = [c for c in calls if c.startswith("npm")]
    assert len(npm) == 2
    assert all(c.startswith("npm ci --prefix clients/") for c in npm)


def test_a_dev_venv_serves_without_reinstalling(checkout: Path) -> None:
    run(checkout, "scripts/setup")
    assert run(checkout, "scripts/setup", "--runtime") == []


def test_a_changed_dependency_list_reinstalls(checkout: Path) -> None:
    run(checkout, "scripts/setup", "--runtime")
    assert run(checkout, "scripts/setup", "--runtime") == []
    with (checkout / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a changed dependency list\n")
    assert installs(run(checkout, "scripts/setup", "--runtime"))[-1].endswith(" -e .")


def test_a_changed_compiled_module_reinstalls(checkout: Path) -> None:
    """A module setup.py compiles (next to its source) is built again when it changes."""
    run(checkout, "scripts/setup")
    assert run(checkout, "scripts/setup") == []
    with (checkout / "domain/game/scoring.py").open("a") as source:
        source.write("\n# a changed rule\n")
    assert installs(run(checkout, "scripts/setup"))[-1].endswith(" -e .[dev]")


def test_apt_get_is_called_only_through_the_lock_waiting_helper() -> None:
    for script in SCRIPTS:
        if script.name == "apt.sh":
            continue
        for line in script.read_text().splitlines():
            code = line.split("#", 1)[0]
            assert "apt-get " not in code.replace("command -v apt-get", ""), (script, line)


def test_every_apt_get_call_waits_for_a_held_lock(checkout: Path) -> None:
    calls = run(
        checkout,
        "-c",
        "source scripts/lib/apt.sh && apt_install scripts/test chromium",
        env={"TEN_APT_LOCK_TIMEOUT": "7"},
    )
    assert len(calls) == 2
    assert calls[0].split()[-2:] == ["update", "-qq"]
    assert calls[1].split()[-1] == "chromium"
    assert all("-o DPkg::Lock::Timeout=7" in c for c in calls)


def test_a_lock_held_too_long_fails_with_a_clear_message(checkout: Path) -> None:
    # apt-get's own words when the timeout passes
    recorder(
        checkout.parent / "bin/apt-get",
        'echo "E: Could not get lock /var/lib/apt/lists/lock" >&2; exit 100',
    )
    done = execute(
        checkout,
        "-c",
        "source scripts/lib/apt.sh && apt_install scripts/test chromium",
        env={"TEN_APT_LOCK_TIMEOUT": "2"},
    )
    assert done.returncode == 1
    assert "scripts/test: could not install chromium" in done.stderr
    assert "more than 2 s" in done.stderr
    assert "TEN_APT_LOCK_TIMEOUT" in done.stderr
