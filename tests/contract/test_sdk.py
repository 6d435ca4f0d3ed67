"""The typed TypeScript client (`clients/ts`) follows the committed OpenAPI document: its
generated types are the document's (drift), the SDK type-checks against them, and the check
catches a wrong call or a contract change the SDK did not follow.

Uses the build tools `bash scripts/setup` installs into `clients/ts/node_modules`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.servers import ROOT
from tests.support.typescript import BIN, CLIENT, ERROR, OPENAPI, generate_command, run

SCHEMA = CLIENT / "src" / "schema.d.ts"


@pytest.fixture(scope="module")
def tools() -> Path:
    """The client's node_modules/.bin, as `bash scripts/setup` installs it."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed: the client's checks need Node 20+ and npm")
    for tool in ("tsc", "openapi-typescript"):
        if not (BIN / tool).exists():
            pytest.fail(f"{BIN / tool} is missing: run `bash scripts/setup` (it runs npm ci)")
    return BIN


def tsc_errors(project: Path) -> tuple[set[tuple[str, str]], str]:
    """tsc's errors in `project` as (file, code) pairs, and its whole output."""
    result = run([str(BIN / "tsc"), "--noEmit", "-p", "tsconfig.json"], cwd=project)
    output = result.stdout + result.stderr
    errors = {(m["file"], m["code"]) for m in ERROR.finditer(output)}
    assert (result.returncode != 0) == bool(errors), output
    return errors, output


def copy_client(tmp_path: Path) -> Path:
    """The client's sources in a temporary project using the installed node_modules."""
    project = tmp_path / "ts"
    project.mkdir()
    shutil.copytree(CLIENT / "src", project / "src")
    shutil.copy(CLIENT / "tsconfig.json", project)
    shutil.copy(CLIENT / "package.json", project)
    (project / "node_modules").symlink_to(CLIENT / "node_modules", target_is_directory=True)
    return project


def test_committed_types_are_generated_from_the_committed_document(
    tools: Path, tmp_path: Path
) -> None:
    assert SCHEMA.exists(), f"{SCHEMA} is missing: run `npm run generate --prefix clients/ts`"
    fresh = tmp_path / "schema.d.ts"
    result = run(generate_command(fresh), cwd=CLIENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert fresh.read_text(encoding="utf-8") == SCHEMA.read_text(encoding="utf-8"), (
        f"{SCHEMA.relative_to(ROOT)} is stale: run `npm run generate --prefix clients/ts` "
        "and commit the result"
    )
    assert '"/v1/games/{game_id}/actions"' in fresh.read_text(encoding="utf-8")


def test_the_client_type_checks(tools: Path) -> None:
    result = run(["npm", "run", "--silent", "check"], cwd=CLIENT)
    assert result.returncode == 0, result.stdout + result.stderr


# each a call the contract forbids, and the error tsc must give for it
WRONG_CALLS = {
    "unknown_action": ('await ten.act("g", { type: "fly" }, { token: "t" });', "TS2322"),
    "bid_without_amount": ('await ten.act("g", { type: "bid" }, { token: "t" });', "TS2345"),
    "buy_of_a_card_not_in_the_deck": (
        'await ten.act("g", { type: "buy", card: "X1", payment: null }, { token: "t" });',
        "TS2322",
    ),
    "create_without_players": ('await ten.createGame({ fill: "bots" });', "TS2345"),
    "act_without_authorization": (
        'await ten.raw.POST("/v1/games/{game_id}/actions", '
        '{ params: { path: { game_id: "g" }, header: {} }, body: { type: "draw" } });',
        "TS2741",
    ),
    "unknown_path": (
        'await ten.raw.GET("/v1/game/{game_id}", { params: { path: { game_id: "g" } } });',
        "TS2345",
    ),
    "game_field_that_does_not_exist": (
        'const { game } = await ten.getGame("g"); if ("phase" in game) game.deck_order;',
        "TS2339",
    ),
}
RIGHT_CALL = """const { game, etag } = await ten.getGame("g", { token: "t" });
  if ("phase" in game && game.seat_actions?.[0]) {
    await ten.act("g", game.seat_actions[0], { token: "t", ifMatch: versionOf(etag) ?? "*" });
  }
  await ten.act("g", { type: "bid", amount: 3 }, { token: "t" });"""


def call_module(body: str) -> str:
    return (
        'import { createTenClient, versionOf } from "./client";\n'
        "export async function call(): Promise<void> {\n"
        '  const ten = createTenClient({ baseUrl: "http://localhost:8000" });\n'
        f"  {body}\n"
        "  void versionOf;\n"
        "}\n"
    )


def test_the_type_check_rejects_wrong_calls(tools: Path, tmp_path: Path) -> None:
    project = copy_client(tmp_path)
    calls = {name: body for name, (body, _) in WRONG_CALLS.items()} | {"right_call": RIGHT_CALL}
    for name, body in calls.items():
        (project / "src" / f"{name}.ts").write_text(call_module(body), encoding="utf-8")
    errors, output = tsc_errors(project)
    expected = {(f"src/{name}.ts", code) for name, (_, code) in WRONG_CALLS.items()}
    assert errors == expected, output


def test_the_type_check_fails_when_the_contract_changes(tools: Path, tmp_path: Path) -> None:
    """A contract change the SDK did not follow (the actions path renamed, a field the SDK
    reads removed), regenerated into a copy of the client: tsc fails in client.ts."""
    project = copy_client(tmp_path)
    document = json.loads(OPENAPI.read_text(encoding="utf-8"))
    document["paths"]["/v1/games/{game_id}/moves"] = document["paths"].pop(
        "/v1/games/{game_id}/actions"
    )
    del document["components"]["schemas"]["GameOut"]["properties"]["seat_actions"]
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(document), encoding="utf-8")
    command = generate_command(project / "src" / "schema.d.ts")
    command[command.index("../../openapi/openapi.json")] = str(changed)
    result = run(command, cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    errors, output = tsc_errors(project)
    assert {file for file, _ in errors} == {"src/client.ts", "src/example.ts"}, output
    assert "/v1/games/{game_id}/actions" in output, output
    assert "seat_actions" in output, output
