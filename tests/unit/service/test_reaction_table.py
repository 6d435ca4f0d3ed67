"""The reaction table of the composition root (`service.bootstrap.reaction_table`): every
kind of change has its row (each event type of the domain, each fact of a record), and each
reaction is listed for the kinds it reacts to."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from infra.observability.metrics import _ACTION_OF_FIRST_EVENT
from service.bootstrap import CAPABILITY_FACTS, reaction_table
from service.correspondence.turns import TURN_WAITS
from service.reactions import relay as relay_module
from service.reactions.relay import (
    DUE_MOVED,
    EVENT_TYPES,
    GAME_CREATED,
    GAME_ENDED,
    RECORD_FACTS,
    Relay,
)
from service.reactions.webhooks import _TOLD


class Named:
    def __init__(self, name: str, durable: bool) -> None:
        self.name, self.durable = name, durable


ARCHIVE, HOOKS, TOURNAMENTS = (Named(n, True) for n in ("archive", "webhooks", "tournaments"))
DEADLINES, METRICS = Named("deadlines", False), Named("metrics", False)
NOTICES = Named("turn_notices", True)
TABLE = reaction_table(
    archive=ARCHIVE,
    webhooks=HOOKS,
    tournaments=TOURNAMENTS,
    deadlines=DEADLINES,
    metrics=METRICS,
    notices=NOTICES,
)


def kinds_of(reaction: Named) -> set[str]:
    return {kind for kind, listed in TABLE.items() if reaction in listed}


def test_every_event_type_of_the_domain_and_every_fact_of_a_record_has_its_row() -> None:
    assert len(EVENT_TYPES) >= 17
    assert set(TABLE) == {*EVENT_TYPES, *RECORD_FACTS, *CAPABILITY_FACTS}


def test_each_reaction_is_listed_for_what_it_reacts_to() -> None:
    assert kinds_of(ARCHIVE) == kinds_of(TOURNAMENTS) == {GAME_ENDED}
    assert kinds_of(HOOKS) == {GAME_ENDED, *_TOLD}
    assert kinds_of(DEADLINES) == {DUE_MOVED}
    assert kinds_of(NOTICES) == {TURN_WAITS}
    assert kinds_of(METRICS) == {GAME_CREATED, GAME_ENDED, *_ACTION_OF_FIRST_EVENT}


def test_a_change_calls_each_reaction_once_in_the_tables_order() -> None:
    relay = Relay(None, None, TABLE)  # type: ignore[arg-type]
    assert relay.reactions == (ARCHIVE, HOOKS, TOURNAMENTS, NOTICES)
    assert relay.local == (METRICS, DEADLINES)
    assert relay.durable_for(frozenset({GAME_ENDED, "game_started"})) == (
        ARCHIVE,
        HOOKS,
        TOURNAMENTS,
    )
    assert relay.durable_for(frozenset({"card_drawn", "turn_started"})) == ()
    assert relay.local_for(frozenset({"card_drawn", DUE_MOVED})) == (METRICS, DEADLINES)
    with pytest.raises(RuntimeError, match="once"):
        relay.register(TABLE)


def test_a_reaction_left_out_is_in_no_row() -> None:
    table = reaction_table(archive=ARCHIVE)
    assert set(table) == {*EVENT_TYPES, *RECORD_FACTS, *CAPABILITY_FACTS}
    assert [kind for kind, listed in table.items() if listed] == [GAME_ENDED]


def test_the_relay_imports_no_capability_whose_facts_the_composition_root_hands_it() -> None:
    tree = ast.parse(Path(relay_module.__file__).read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    generic = ("domain.", "service.core.", "service.jobs.")
    ours = {m for m in imported if m.startswith(("service.", "domain.", "infra."))}
    assert {m for m in ours if not m.startswith(generic)} == set()
    assert set(CAPABILITY_FACTS) == {TURN_WAITS}
