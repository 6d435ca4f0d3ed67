"""The web client (`clients/web`, served at `/`) is built from its committed sources over the
SDK: it type-checks against the committed contract, its committed bundle is what its sources
build to (drift), a contract change it did not follow fails the check, and every language has
every text with the same placeholders.

Uses the build tools `bash scripts/setup` installs into `clients/*/node_modules`."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from litestar.testing import TestClient

from tests.support.typescript import ERROR, OPENAPI, WEB, generate_command, run, web_tools

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "ts"
BUNDLE = ROOT / "service" / "static" / "app" / "js"
CATALOGS = WEB / "src" / "i18n"
LANGUAGES = ("id", "hy", "es", "gu")
ENTRY = re.compile(r'^\s*"(?P<key>[\w.]+)":\s*(?P<text>"(?:[^"\\]|\\.)*"),?\s*$', re.MULTILINE)
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def build_command(outdir: Path) -> list[str]:
    """`npm run build` as package.json has it, writing to `outdir` instead."""
    script = json.loads((WEB / "package.json").read_text(encoding="utf-8"))["scripts"]["build"]
    clean, _, build = script.partition(" && ")
    assert clean == "rm -rf ../../service/static/app/js", script  # no stale chunk survives
    args = shlex.split(build)
    assert args[0] == "esbuild", script
    out = [a for a in args if a.startswith("--outdir=")]
    assert out == ["--outdir=../../service/static/app/js"], script
    return [
        str(web_tools() / "esbuild"),
        *(f"--outdir={outdir}" if a.startswith("--outdir=") else a for a in args[1:]),
    ]


def test_the_web_client_type_checks() -> None:
    web_tools()
    result = run(["npm", "run", "--silent", "check"], cwd=WEB)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_committed_bundle_is_built_from_the_sources(tmp_path: Path) -> None:
    fresh = tmp_path / "js"
    result = run(build_command(fresh), cwd=WEB)
    assert result.returncode == 0, result.stdout + result.stderr
    built = {p.name: p.read_bytes() for p in fresh.iterdir()}
    committed = {p.name: p.read_bytes() for p in BUNDLE.iterdir()}
    assert "main.js" in built
    stale = "service/static/app/js is stale: run `npm run build --prefix clients/web` and commit it"
    assert built.keys() == committed.keys(), stale
    assert built == committed, stale


def test_the_check_fails_when_the_contract_changes(tmp_path: Path) -> None:
    """The draw pile's size removed from the game views, regenerated into a copy of the SDK:
    the web client, which shows it, no longer type-checks."""
    sdk, web = tmp_path / "ts", tmp_path / "web"
    for source, copy in ((SDK, sdk), (WEB, web)):
        copy.mkdir()
        shutil.copytree(source / "src", copy / "src")
        shutil.copy(source / "tsconfig.json", copy)
        (copy / "node_modules").symlink_to(source / "node_modules", target_is_directory=True)
    document = json.loads(OPENAPI.read_text(encoding="utf-8"))
    for schema in document["components"]["schemas"].values():
        if "draw_pile_size" in schema.get("properties", {}) and "players" in schema["properties"]:
            del schema["properties"]["draw_pile_size"]
            schema["required"] = [r for r in schema.get("required", []) if r != "draw_pile_size"]
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(document), encoding="utf-8")
    command = generate_command(sdk / "src" / "schema.d.ts")
    command[command.index("../../openapi/openapi.json")] = str(changed)
    assert run(command, cwd=sdk).returncode == 0
    result = run([str(web_tools() / "tsc"), "--noEmit", "-p", "tsconfig.json"], cwd=web)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert {m["file"] for m in ERROR.finditer(output)} == {"src/table.ts", "src/fold.ts"}, output
    assert "draw_pile_size" in output, output


def catalog(language: str) -> dict[str, str]:
    text = (CATALOGS / f"{language}.ts").read_text(encoding="utf-8")
    return {m["key"]: json.loads(m["text"]) for m in ENTRY.finditer(text)}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_every_text(language: str) -> None:
    english = catalog("en")
    assert len(english) > 150
    translated = catalog(language)
    assert translated.keys() == english.keys()
    for key, text in english.items():
        assert set(PLACEHOLDER.findall(translated[key])) == set(PLACEHOLDER.findall(text)), key
    # translated, not copied: only names and codes may stay as they are
    same = [
        k for k, text in english.items() if translated[k] == text and re.search("[a-z]{3}", text)
    ]
    assert len(same) <= 10, same


def test_the_page_is_served_at_the_root_with_everything_it_loads() -> None:
    from service.entrypoints.api.app import create_app

    with TestClient(create_app()) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
        assert "/static/app/js/main.js" in assets
        chunks = [f"/static/app/js/{p.name}" for p in BUNDLE.iterdir()]
        for path in assets + chunks:
            response = client.get(path)
            assert response.status_code == 200, path
            assert response.headers["cache-control"] == "no-cache", path
        # the entry's imports all resolve to committed chunks
        main = client.get("/static/app/js/main.js").text
        for name in re.findall(r'"\./([\w-]+\.js)"', main):
            assert (BUNDLE / name).exists(), name
