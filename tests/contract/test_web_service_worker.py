"""The web client's service worker (`clients/web/src/sw.ts`, built by `npm run build`'s
`postbuild` into `service/static/app/sw.js`, committed) is what its sources build to, and the
service serves it at `/sw.js`, whose scope covers the whole client, beside the page at `/app/`
(where the service's links to a game point)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from litestar.testing import TestClient

from tests.support.typescript import WEB, run, web_tools

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "service" / "static" / "app" / "sw.js"


def worker_build(outfile: Path) -> list[str]:
    """`postbuild` as package.json has it, writing to `outfile` instead."""
    script = json.loads((WEB / "package.json").read_text(encoding="utf-8"))["scripts"]["postbuild"]
    args = shlex.split(script)
    assert args[0] == "esbuild", script
    assert "--outfile=../../service/static/app/sw.js" in args, script
    return [
        str(web_tools() / "esbuild"),
        *(f"--outfile={outfile}" if a.startswith("--outfile=") else a for a in args[1:]),
    ]


def test_the_committed_service_worker_is_built_from_its_sources(tmp_path: Path) -> None:
    fresh = tmp_path / "sw.js"
    result = run(worker_build(fresh), cwd=WEB)
    assert result.returncode == 0, result.stdout + result.stderr
    stale = (
        "service/static/app/sw.js is stale: run `npm run build --prefix clients/web` and commit it"
    )
    assert fresh.read_bytes() == WORKER.read_bytes(), stale


def test_the_worker_is_served_at_the_root_and_the_page_at_app() -> None:
    from service.entrypoints.api.app import create_app

    with TestClient(create_app()) as client:
        worker = client.get("/sw.js")
        assert worker.status_code == 200
        assert worker.headers["content-type"].startswith("text/javascript")
        assert worker.headers["cache-control"] == "no-cache"
        assert worker.content == WORKER.read_bytes()
        page, root = client.get("/app/"), client.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert page.text == root.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
