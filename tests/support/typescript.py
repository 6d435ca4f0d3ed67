"""The TypeScript SDK (clients/ts): its generator command, the compiler's error format, and a
bounded subprocess run (the contract tier's SDK and web-client tests)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.servers import ROOT

CLIENT = ROOT / "clients" / "ts"
WEB = ROOT / "clients" / "web"  # the web client's sources and build tools


BIN = CLIENT / "node_modules" / ".bin"


OPENAPI = ROOT / "openapi" / "openapi.json"


# a hang's failsafe, not a speed goal: a type check takes 10-20 s on an idle machine and went
# past 60 s on a loaded one (tsc over the web client while other tests ran)
TIMEOUT = 600


ERROR = re.compile(r"^(?P<file>[^\s(]+)\(\d+,\d+\): error (?P<code>TS\d+):", re.MULTILINE)


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "npm_config_update_notifier": "false"}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def generate_command(output: Path) -> list[str]:
    """`npm run generate` as package.json has it, writing to `output` instead."""
    script = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))["scripts"]
    args = shlex.split(script["generate"])
    assert args[0] == "openapi-typescript", script["generate"]
    assert args[-2:] == ["--output", "src/schema.d.ts"], script["generate"]
    return [str(BIN / args[0]), *args[1:-1], str(output)]


def web_tools() -> Path:
    """The web client's build tools (tsc, esbuild), installed by `bash scripts/setup`."""
    binary = WEB / "node_modules" / ".bin"
    for tool in ("tsc", "esbuild"):
        if not (binary / tool).exists():
            pytest.fail(f"{binary / tool} is missing: run `bash scripts/setup` (it runs npm ci)")
    return binary
