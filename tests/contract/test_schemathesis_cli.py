"""The stock Schemathesis CLI with the committed `schemathesis.toml`, against a service process
on the embedded default: what contract testers run (`schemathesis run
http://HOST/schema/openapi.json` from the checkout), with fewer examples and a fixed seed.

Every phase and every check the file enables, over real HTTP; the run must end with exit code 0
(no failure, no error). The CLI runs in a temporary directory and is given the file
(`--config-file`), so that its cache (`.schemathesis/`) stays out of the checkout; that a
plain run from the checkout root finds the same file is checked apart.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from schemathesis.config import SchemathesisConfig

from tests.servers import ROOT, ServiceProcess

CONFIG = ROOT / "schemathesis.toml"
CLI = Path(sys.executable).with_name("schemathesis")  # installed next to this Python (.venv/bin)
# Budget: 20-30 s on 2 cores. `--max-examples` bounds the fuzzing phase's examples per
# operation and the stateful phase's scenarios (the coverage phase runs in full). A fixed
# seed: the same inputs on every run (the games' shuffles still vary).
MAX_EXAMPLES = 15
SEED = 20261201
HUNG = 600  # seconds: a bound for a run that hangs, not a timing


def test_a_run_from_the_checkout_root_finds_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert SchemathesisConfig.discover().config_path == str(CONFIG)


def run_stock_cli(tmp_path: Path, env: dict[str, str], *options: str) -> None:
    """The stock CLI with the committed toml against a service process with `env` (its
    SQLite archive and its log in tmp_path); exit code 0 asserted, its summary printed."""
    server = ServiceProcess(env, cwd=tmp_path, stdout=tmp_path / "service.log")
    try:
        run = subprocess.run(
            [
                str(CLI), "--config-file", str(CONFIG), "run", f"{server.base}/schema/openapi.json",
                "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED),
                "--generation-database", "none", "--no-color", *options,
            ],
            cwd=tmp_path, capture_output=True, text=True, timeout=HUNG, check=False,
        )  # fmt: skip
    finally:
        server.stop()
    output = run.stdout + run.stderr
    start = output.rfind("= SUMMARY =")
    print(output[output.rfind("\n", 0, start) + 1 :] if start >= 0 else output[-3000:])
    assert f"Configuration:    {CONFIG}" in output, output[:2000]
    assert run.returncode == 0, f"{output[-20000:]}\n--- the service's log:\n{server.log()[-5000:]}"


def test_the_stock_cli_passes_on_the_embedded_default(tmp_path: Path) -> None:
    run_stock_cli(tmp_path, {})  # no TEN_* at all


def test_the_stock_cli_passes_with_identities_verified(tmp_path: Path) -> None:
    """API keys configured: the platform's key sent on every request (creating and joining
    need it); what an anonymous caller may no longer do is refused with 401."""
    key = "platform-key-" + "k" * 24
    run_stock_cli(tmp_path, {"TEN_API_KEYS": key}, "-H", f"X-API-Key: {key}")
