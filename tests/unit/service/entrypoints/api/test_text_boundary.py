"""The one boundary of untrusted text (`service.entrypoints.api.boundary`): every request body is decoded
by `strictly`, which applies the text policy to each of its text fields; every string field
of every request schema is either text (so policed) or bounded by a pattern, a format or a
set of values. A new request schema, or a new string field, that bypasses it fails here."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest

from service.core.errors import ServiceError
from service.entrypoints.api import boundary, lobby_routes, routes, tournament_routes
from service.entrypoints.api.schemas import CreateGameIn, JoinIn, TournamentIn

API = Path(routes.__file__).parent
MODULES = (routes, lobby_routes, tournament_routes)


def request_bodies() -> dict[str, Any]:
    """Every handler's body type (`data: JSONBody[X]`), by handler, from the API's sources;
    and each handler is checked to decode it with `strictly(request, X)`."""
    found: dict[str, Any] = {}
    for path in sorted(API.glob("*.py")):
        tree = ast.parse(path.read_text())
        module = __import__(f"service.entrypoints.api.{path.stem}", fromlist=["_"])
        for node in ast.walk(tree):
            if not isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef):
                continue
            for arg in node.args.args + node.args.kwonlyargs:
                note = arg.annotation
                if arg.arg != "data" or not isinstance(note, ast.Subscript):
                    continue
                name = ast.unparse(note.slice)
                calls = {
                    ast.unparse(call)
                    for call in ast.walk(node)
                    if isinstance(call, ast.Call) and ast.unparse(call.func) == "strictly"
                }
                assert f"strictly(request, {name})" in calls, f"{path.name}:{node.name}"
                found[f"{path.stem}.{node.name}"] = eval(name, vars(module))
    return found


def string_fields(info: mi.Type, where: str, seen: set) -> list[tuple[str, mi.Type]]:
    """Every string-typed place of a schema, with its path."""
    if isinstance(info, mi.Metadata):
        if isinstance(info.type, mi.StrType):
            return [(where, info)]
        return string_fields(info.type, where, seen)
    if isinstance(info, mi.StrType):
        return [(where, info)]
    if isinstance(info, mi.StructType):
        if info.cls in seen:
            return []
        seen.add(info.cls)
        out = []
        for field in info.fields:
            out += string_fields(field.type, f"{where}.{field.name}", seen)
        return out
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return string_fields(info.item_type, f"{where}[]", seen)
    if isinstance(info, mi.TupleType):
        return [f for t in info.item_types for f in string_fields(t, f"{where}[]", seen)]
    if isinstance(info, mi.UnionType):
        return [f for t in info.types for f in string_fields(t, where, seen)]
    if isinstance(info, mi.DictType):
        return string_fields(info.key_type, f"{where}{{}}", seen) + string_fields(
            info.value_type, f"{where}{{}}", seen
        )
    return []


def test_every_request_body_goes_through_strictly_and_every_string_field_is_bounded():
    bodies = request_bodies()
    assert {"routes.create_game", "lobby_routes.join", "tournament_routes.create"} <= set(bodies)
    texts, loose = [], []
    for handler, body in bodies.items():
        for where, info in string_fields(mi.type_info(body), handler, set()):
            if boundary.text_limit(info) is not None:
                texts.append(where)
                continue
            bare = info.type if isinstance(info, mi.Metadata) else info
            if bare.pattern is None:
                loose.append(where)
    assert loose == []  # a free string outside the text policy
    assert {
        "routes.create_game.players[].name",
        "lobby_routes.join.name",
        "tournament_routes.create.name",
    } <= set(texts)


def test_the_boundary_polices_every_text_field_it_finds():
    body = msgspec.json.encode({"players": [{"name": " Ann "}, {"name": "Bo\u0301b"}]})
    created = boundary.policed(msgspec.json.decode(body, type=CreateGameIn), CreateGameIn)
    assert [p.name for p in created.players] == ["Ann", "B\u00f3b"]
    joined = boundary.policed(msgspec.json.decode(b'{"name":" Cy "}', type=JoinIn), JoinIn)
    assert joined.name == "Cy"
    for name in ("Ann\x00", "\u202eAnn", "a\nb", "\x1b[31m", " "):
        body = msgspec.json.encode({"name": name})
        with pytest.raises(ServiceError) as refused:
            boundary.policed(msgspec.json.decode(body, type=TournamentIn), TournamentIn)
        assert refused.value.code == "invalid_text"
