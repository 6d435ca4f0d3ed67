"""The archive's Alembic migrations on real PostgreSQL and SQLite, each test on a fresh
throwaway database: up, down and up again; the migrations create exactly what the models
declare (autogenerate finds no difference); the CLIs; concurrent upgrades at start-up."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, Integer, MetaData, inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from infra.archive import DEFAULT_URL, database_url, downgrade, make_engine, upgrade
from infra.archive.migrate import alembic_config, current, head, upgrade_async
from infra.archive.models import metadata
from tests.support.scratch import scratch_database

ROOT = Path(__file__).resolve().parents[2]
PG_SERVER = os.environ.get("TEN_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
SERVERS = {"sqlite": "sqlite+aiosqlite:///migrations.sqlite3", "postgresql": PG_SERVER}
TABLES = {
    "games",
    "seats",
    "results",
    "events",
    "rated_games",
    "ratings",
    "rating_history",
    "game_reviews",
    "erasures",
    "erasures_applied",
}


@pytest.fixture(params=list(SERVERS))
def fresh(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a new, empty database (dropped after the test)."""
    runner = asyncio.Runner()
    scratch = scratch_database(SERVERS[request.param], prefix="ten_migrations")
    try:
        try:
            url = runner.run(scratch.__aenter__())
        except OSError as exc:
            pytest.fail(f"{request.param} is not reachable ({exc}); see scripts/services")
        try:
            yield url
        finally:
            runner.run(scratch.__aexit__(None, None, None))
    finally:
        runner.close()


def inspect_db(url: str, fn: Any) -> Any:
    """Run `fn(sync_connection)` on the database."""

    async def body() -> Any:
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(fn)
        finally:
            await engine.dispose()

    return asyncio.run(body())


def tables(url: str) -> set[str]:
    return inspect_db(url, lambda conn: set(inspect(conn).get_table_names()))


def differences(url: str, target: MetaData = metadata) -> list[Any]:
    def compare(conn: Connection) -> list[Any]:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        return compare_metadata(context, target)

    return inspect_db(url, compare)


def test_upgrade_downgrade_upgrade(fresh: str) -> None:
    assert current(fresh) is None
    upgrade(fresh)
    assert tables(fresh) == TABLES | {"alembic_version"}
    assert current(fresh) == head() == "0011_reviews_luck_fitted"
    upgrade(fresh)  # idempotent: nothing to do
    downgrade(fresh, "base")
    assert tables(fresh) == {"alembic_version"}
    assert current(fresh) is None
    upgrade(fresh)
    assert tables(fresh) == TABLES | {"alembic_version"}
    assert current(fresh) == head()
    assert differences(fresh) == []


def test_autogenerate_finds_no_difference(fresh: str) -> None:
    upgrade(fresh)
    assert differences(fresh) == []


def test_the_comparison_would_see_a_difference(fresh: str) -> None:
    """Control: the same comparison reports a model the migrations do not match."""
    upgrade(fresh)
    changed = MetaData(naming_convention=metadata.naming_convention)
    for table in metadata.sorted_tables:
        copy = table.to_metadata(changed)
        if table.name == "games":
            copy.append_column(Column("extra", Integer, nullable=True))
            copy.indexes.clear()
    kinds = sorted(diff[0] for diff in differences(fresh, changed))
    assert kinds == ["add_column", *["remove_index"] * 3]  # ix_games_*: three


def test_indexes_exist(fresh: str) -> None:
    upgrade(fresh)

    def indexes(conn: Connection) -> dict[str, list[Any]]:
        inspector = inspect(conn)
        return {
            ix["name"]: ix["column_names"] for name in TABLES for ix in inspector.get_indexes(name)
        }

    found = inspect_db(fresh, indexes)
    assert found["ix_games_finished"] == ["finished_at", "id"]
    assert found["ix_seats_player_history"] == ["player_id", "finished_at", "game_id"]
    assert found["ix_results_player_stats"][:2] == ["player_id", "ranked"]
    assert found["ix_games_ranked_finished"] == ["ranked", "finished_at", "id"]
    assert found["ix_games_tournament_id"] == ["tournament_id"]
    assert found["ix_results_ranked_board"] == ["ranked", "player_id", "winner", "score"]


def write_db(url: str, *statements: str) -> None:
    """Run SQL statements in one committed transaction."""

    async def body() -> None:
        engine = make_engine(url)
        try:
            async with engine.begin() as conn:
                for statement in statements:
                    await conn.execute(text(statement))
        finally:
            await engine.dispose()

    asyncio.run(body())


def read_db(url: str, query: str) -> list[tuple[Any, ...]]:
    return inspect_db(url, lambda conn: [tuple(r) for r in conn.execute(text(query))])


T0 = "'2025-03-01 10:00:00+00:00'"


SEAT_COLUMNS = "game_id, seat, name, bot, player_id, finished_at"


def game_rows(game_id: str, *, extra: str = "", values: str = "") -> list[str]:
    """The rows of a 2-seat game (one result), as revision 0001 (or with `extra` columns)."""
    return [
        "INSERT INTO games (id, player_count, rules, seed, deck, schema_version, created_at,"
        f" finished_at, version, event_count{extra}) VALUES ('{game_id}', 2, '{{}}', 's',"
        f" '[]', 1, {T0}, {T0}, 3, 1{values})",
        f"INSERT INTO seats ({SEAT_COLUMNS}) VALUES ('{game_id}', 0, 'Ann', NULL, 'ann', {T0})",
        f"INSERT INTO seats ({SEAT_COLUMNS}) VALUES ('{game_id}', 1, 'Bob', NULL, 'bob', {T0})",
        f"INSERT INTO events VALUES ('{game_id}', 1, 'game_started', '{{}}')",
    ]


def result_row(
    game_id: str, seat: int = 0, *, extra: str = "", values: str = "", lost: bool = False
) -> str:
    """Seat 0's result (ann wins with 40), or seat 1's (`lost`: bob second with 30), as
    revision 0001 (or with `extra` columns)."""
    player, score, rank, winner = ("bob", 30, 2, "false") if lost else ("ann", 40, 1, "true")
    return (
        "INSERT INTO results (game_id, seat, player_id, score, colors, rank, winner,"
        f" currency, bust, cards, perfect_colors, busts{extra}) VALUES ('{game_id}', {seat},"
        f" '{player}', {score}, '{{}}', {rank}, {winner}, 0, 0, 5, 0, 0{values})"
    )


def test_games_archived_before_ranking_are_legacy(fresh: str) -> None:
    """Rows of revision 0001 (self-asserted player ids) become unranked, reason "legacy",
    status finished; their results are unranked too."""
    upgrade(fresh, "0001_archive")
    write_db(fresh, *game_rows("old"), result_row("old"))
    upgrade(fresh)
    [game] = read_db(fresh, "SELECT status, ranked, unranked_reason, unranked_reasons FROM games")
    status, ranked, reason, reasons = game
    assert (status, bool(ranked), reason) == ("finished", False, "legacy")
    assert (json.loads(reasons) if isinstance(reasons, str) else reasons) == ["legacy"]
    assert [bool(r) for (r,) in read_db(fresh, "SELECT ranked FROM results")] == [False]
    seats_now = read_db(fresh, "SELECT ranked, unranked_reason FROM seats ORDER BY seat")
    assert [(bool(r), why) for r, why in seats_now] == [(False, None), (False, None)]
    assert differences(fresh) == []


@pytest.mark.parametrize(
    "values",
    [
        ", 'finished', true, 'custom_deck'",  # ranked, yet a reason
        ", 'finished', false, NULL",  # unranked without a reason
        ", 'aborted', true, NULL",  # an aborted game ranked
        ", 'abandoned', true, NULL",  # an abandoned game ranked
        ", 'lost', false, 'aborted'",  # no such status
    ],
)
def test_the_database_refuses_an_inconsistent_ranking(fresh: str, values: str) -> None:
    upgrade(fresh)
    extra = ", status, ranked, unranked_reason"
    write_db(fresh, *game_rows("fine", extra=extra, values=", 'finished', true, NULL"))
    with pytest.raises(IntegrityError):
        write_db(fresh, game_rows("bad", extra=extra, values=values)[0])
    assert read_db(fresh, "SELECT id FROM games") == [("fine",)]


def test_downgrade_drops_aborted_games_and_keeps_finished_ones(fresh: str) -> None:
    """Revision 0001 holds finished games only: downgrading deletes the aborted ones (their
    seats and events too) and keeps the finished ones, which upgrade again as legacy."""
    upgrade(fresh)
    extra = ", status, ranked, unranked_reason"
    write_db(
        fresh,
        *game_rows("done", extra=extra, values=", 'finished', true, NULL"),
        result_row("done"),
        *game_rows("stopped", extra=extra, values=", 'aborted', false, 'aborted'"),
    )
    downgrade(fresh, "0001_archive")
    assert current(fresh) == "0001_archive"
    assert read_db(fresh, "SELECT id FROM games") == [("done",)]
    assert read_db(fresh, "SELECT DISTINCT game_id FROM seats") == [("done",)]
    assert read_db(fresh, "SELECT DISTINCT game_id FROM events") == [("done",)]
    assert read_db(fresh, "SELECT game_id FROM results") == [("done",)]

    def columns(conn: Connection) -> set[str]:
        inspector = inspect(conn)
        return {c["name"] for t in ("games", "results") for c in inspector.get_columns(t)}

    assert not {"status", "ranked", "unranked_reason"} & inspect_db(fresh, columns)
    upgrade(fresh)
    assert read_db(fresh, "SELECT id, unranked_reason FROM games") == [("done", "legacy")]
    assert differences(fresh) == []


def test_reviews_kept_by_the_earlier_judge_go(fresh: str) -> None:
    """Revision 0006 deletes the reviews kept before master's search became the judge (their
    `lost` was in points): each is computed again when next asked for."""
    upgrade(fresh, "0005_game_reviews")
    write_db(
        fresh,
        f"INSERT INTO game_reviews (game_id, review, reviewed_at) VALUES ('old', '{{}}', {T0})",
    )
    assert read_db(fresh, "SELECT game_id FROM game_reviews") == [("old",)]
    upgrade(fresh, "0006_reviews_rejudged")
    assert read_db(fresh, "SELECT game_id FROM game_reviews") == []
    upgrade(fresh)
    assert differences(fresh) == []


def test_the_erasure_ledger_comes_with_0007_and_goes_with_its_downgrade(fresh: str) -> None:
    """Revision 0007 adds the erasure ledger (`service.privacy`): digests and pseudonyms."""
    upgrade(fresh, "0006_reviews_rejudged")
    assert "erasures" not in tables(fresh)
    upgrade(fresh, "0007_erasures")
    write_db(
        fresh, "INSERT INTO erasures (digest, pseudonym, erased_at) VALUES ('d', 'erased-1', 1.5)"
    )
    assert read_db(fresh, "SELECT digest, pseudonym, erased_at FROM erasures") == [
        ("d", "erased-1", 1.5)
    ]
    downgrade(fresh, "0006_reviews_rejudged")
    assert "erasures" not in tables(fresh)


def test_the_reviews_kept_before_the_grades_changed_go(fresh: str) -> None:
    """Revision 0008 deletes the reviews kept before the grades and the margin's split
    changed (their meaning is not the served one); each game is reviewed again on request."""
    upgrade(fresh, "0007_erasures")
    write_db(
        fresh,
        f"INSERT INTO game_reviews (game_id, review, reviewed_at) VALUES ('old', '{{}}', {T0})",
    )
    assert read_db(fresh, "SELECT game_id FROM game_reviews") == [("old",)]
    upgrade(fresh, "0008_reviews_regraded")
    assert read_db(fresh, "SELECT game_id FROM game_reviews") == []


def test_games_archived_before_their_context_was_kept_have_none(fresh: str) -> None:
    """Revision 0009 adds a game's time control and tournament table: the games archived
    before keep nulls in all four; a table is whole or absent; the downgrade drops them and
    keeps the games."""
    upgrade(fresh, "0008_reviews_regraded")
    write_db(fresh, *game_rows("before", extra=RANKING, values=LEGACY))
    upgrade(fresh, "0009_game_context")
    context = "SELECT id, clock, tournament_id, tournament_round, tournament_table FROM games"
    assert read_db(fresh, context) == [("before", None, None, None, None)]
    write_db(
        fresh,
        *game_rows(
            "during",
            extra=RANKING + ", clock, tournament_id, tournament_round, tournament_table",
            values=LEGACY + """, '{"type": "deadline", "hours": 24}', 't1', 2, 3""",
        ),
    )
    assert ("during", "t1", 2, 3) in read_db(
        fresh, "SELECT id, tournament_id, tournament_round, tournament_table FROM games"
    )
    with pytest.raises(IntegrityError):
        write_db(
            fresh, *game_rows("torn", extra=RANKING + ", tournament_id", values=LEGACY + ", 't1'")
        )
    assert current(fresh) == "0009_game_context"
    downgrade(fresh, "0008_reviews_regraded")
    assert {r[0] for r in read_db(fresh, "SELECT id FROM games")} == {"before", "during"}


def test_the_applied_mark_comes_with_0010_one_row_and_goes_with_its_downgrade(fresh: str) -> None:
    """Revision 0010 adds the archive's applied mark of the erasure ledger
    (`service.privacy`): empty at first (the first reconciliation scans the archive), one
    row at most; the downgrade drops it and keeps the ledger."""
    upgrade(fresh, "0009_game_context")
    assert "erasures_applied" not in tables(fresh)
    write_db(
        fresh, "INSERT INTO erasures (digest, pseudonym, erased_at) VALUES ('d', 'erased-1', 1.5)"
    )
    upgrade(fresh, "0010_erasures_applied")
    assert read_db(fresh, "SELECT * FROM erasures_applied") == []
    write_db(fresh, "INSERT INTO erasures_applied (id, mark, marked_at) VALUES (1, 'm', 2.5)")
    assert read_db(fresh, "SELECT id, mark, marked_at FROM erasures_applied") == [(1, "m", 2.5)]
    with pytest.raises(IntegrityError):  # a second row
        write_db(fresh, "INSERT INTO erasures_applied (id, mark, marked_at) VALUES (2, 'n', 3)")
    with pytest.raises(IntegrityError):  # a second mark
        write_db(fresh, "INSERT INTO erasures_applied (id, mark, marked_at) VALUES (1, 'n', 3)")
    assert current(fresh) == "0010_erasures_applied"
    downgrade(fresh, "0009_game_context")
    assert "erasures_applied" not in tables(fresh)
    assert read_db(fresh, "SELECT digest FROM erasures") == [("d",)]


def test_the_reviews_kept_before_the_luck_was_fitted_go(fresh: str) -> None:
    """Revision 0011 deletes the reviews kept before a card's luck became the fitted value's
    (their luck, skill and luck-adjusted results are not the served ones); each game is
    reviewed again on request."""
    upgrade(fresh, "0010_erasures_applied")
    write_db(
        fresh,
        f"INSERT INTO game_reviews (game_id, review, reviewed_at) VALUES ('old', '{{}}', {T0})",
    )
    assert read_db(fresh, "SELECT game_id FROM game_reviews") == [("old",)]
    upgrade(fresh, "0011_reviews_luck_fitted")
    assert read_db(fresh, "SELECT game_id FROM game_reviews") == []
    assert current(fresh) == head()


RANKING = ", status, ranked, unranked_reason"
LEGACY = ", 'finished', false, 'legacy'"  # an unranked game's values of RANKING


def test_an_abandoned_game_is_accepted_unranked(fresh: str) -> None:
    upgrade(fresh)
    write_db(fresh, *game_rows("idle", extra=RANKING, values=", 'abandoned', false, 'abandoned'"))
    assert read_db(fresh, "SELECT id, status FROM games") == [("idle", "abandoned")]


def test_the_database_refuses_a_seat_that_counts_with_a_reason(fresh: str) -> None:
    """A seat with a reason of its own (taken over) does not count."""
    upgrade(fresh)
    rows = game_rows("game", extra=RANKING, values=", 'finished', true, NULL")
    write_db(fresh, rows[0])
    insert = f"INSERT INTO seats ({SEAT_COLUMNS}, ranked, unranked_reason) VALUES ('game',"
    write_db(
        fresh,
        f"{insert} 0, 'Ann', NULL, 'ann', {T0}, true, NULL)",
        f"{insert} 1, 'Bob', NULL, 'bob', {T0}, false, 'taken_over')",
    )
    with pytest.raises(IntegrityError):
        write_db(fresh, f"{insert} 2, 'Cy', NULL, 'cy', {T0}, true, 'taken_over')")
    assert read_db(fresh, "SELECT seat FROM seats ORDER BY seat") == [(0,), (1,)]


def test_seats_of_revision_0002_count_as_their_game(fresh: str) -> None:
    """Upgrading from 0002: every seat counts as its game did (ranked or not; 0002 copied
    games.ranked into results.ranked), none has a reason of its own, no result is resigned;
    results.ranked is unchanged."""
    upgrade(fresh, "0002_ranked")
    write_db(
        fresh,
        *game_rows("ranked", extra=RANKING, values=", 'finished', true, NULL"),
        result_row("ranked", extra=", ranked", values=", true"),
        *game_rows("custom", extra=RANKING, values=", 'finished', false, 'custom_deck'"),
        result_row("custom"),
        *game_rows("stopped", extra=RANKING, values=", 'aborted', false, 'aborted'"),
    )
    upgrade(fresh)
    assert current(fresh) == head()
    seats_now = read_db(
        fresh, "SELECT game_id, seat, ranked, unranked_reason FROM seats ORDER BY game_id, seat"
    )
    assert [(g, seat, bool(r), why) for g, seat, r, why in seats_now] == [
        ("custom", 0, False, None),
        ("custom", 1, False, None),
        ("ranked", 0, True, None),
        ("ranked", 1, True, None),
        ("stopped", 0, False, None),
        ("stopped", 1, False, None),
    ]
    got = read_db(fresh, "SELECT game_id, ranked, resigned FROM results ORDER BY game_id")
    assert [(g, bool(r), bool(res)) for g, r, res in got] == [
        ("custom", False, False),
        ("ranked", True, False),
    ]
    assert differences(fresh) == []


def test_downgrade_drops_abandoned_games_and_keeps_the_others(fresh: str) -> None:
    """Revision 0002 holds finished and aborted games only: downgrading deletes the
    abandoned ones (their seats and events too) and the per-seat columns; a seat taken over
    stays out of the ranked figures (results.ranked is kept), and is a seat taken over
    again after upgrading."""
    upgrade(fresh)
    counted = f"INSERT INTO seats ({SEAT_COLUMNS}, ranked, unranked_reason) VALUES ('done',"
    write_db(
        fresh,
        *game_rows("done", extra=RANKING, values=", 'finished', true, NULL")[:1],
        f"{counted} 0, 'Ann', NULL, 'ann', {T0}, true, NULL)",
        f"{counted} 1, 'Bob', NULL, 'bob', {T0}, false, 'taken_over')",
        "INSERT INTO events VALUES ('done', 1, 'game_started', '{}')",
        result_row("done", extra=", ranked", values=", true"),
        result_row("done", 1, lost=True, extra=", ranked", values=", false"),  # taken over
        *game_rows("stopped", extra=RANKING, values=", 'aborted', false, 'aborted'"),
        *game_rows("idle", extra=RANKING, values=", 'abandoned', false, 'abandoned'"),
    )
    downgrade(fresh, "0002_ranked")
    assert current(fresh) == "0002_ranked"
    assert read_db(fresh, "SELECT id FROM games ORDER BY id") == [("done",), ("stopped",)]
    assert read_db(fresh, "SELECT DISTINCT game_id FROM seats ORDER BY game_id") == [
        ("done",),
        ("stopped",),
    ]
    assert read_db(fresh, "SELECT DISTINCT game_id FROM events ORDER BY game_id") == [
        ("done",),
        ("stopped",),
    ]
    got = read_db(fresh, "SELECT player_id, ranked FROM results ORDER BY seat")
    assert [(pid, bool(r)) for pid, r in got] == [("ann", True), ("bob", False)]

    def columns(conn: Connection) -> dict[str, set[str]]:
        inspector = inspect(conn)
        return {t: {c["name"] for c in inspector.get_columns(t)} for t in ("seats", "results")}

    found = inspect_db(fresh, columns)
    assert not {"ranked", "unranked_reason"} & found["seats"]
    assert "resigned" not in found["results"]
    with pytest.raises(IntegrityError):  # 0002's statuses again
        write_db(
            fresh, game_rows("x", extra=RANKING, values=", 'abandoned', false, 'abandoned'")[0]
        )

    upgrade(fresh)
    seats_now = read_db(
        fresh, "SELECT seat, ranked, unranked_reason FROM seats WHERE game_id = 'done'"
    )
    assert sorted((seat, bool(r), why) for seat, r, why in seats_now) == [
        (0, True, None),
        (1, False, "taken_over"),  # read back from results.ranked
    ]
    assert differences(fresh) == []


def test_upgrade_from_a_running_event_loop(fresh: str) -> None:
    """The service migrates at start-up, inside its event loop."""

    async def startup() -> None:
        await upgrade_async(fresh)
        await upgrade_async(fresh)

    asyncio.run(startup())
    assert current(fresh) == head()


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Any:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TEN_")}
    environ.update(env or {})
    return subprocess.run(
        args, cwd=cwd, env=environ, capture_output=True, text=True, timeout=60, check=False
    )


def test_command_lines(fresh: str) -> None:
    """`alembic` with `-x url=`, and `python -m infra.archive.migrate` with TEN_DATABASE_URL
    or --url."""
    alembic = str(Path(sys.executable).with_name("alembic"))
    migrate = (sys.executable, "-m", "infra.archive.migrate")
    done = run(alembic, "-x", f"url={fresh}", "upgrade", "head")
    assert done.returncode == 0, done.stderr
    done = run(*migrate, "check", env={"TEN_DATABASE_URL": fresh})
    assert done.returncode == 0, done.stderr
    assert "ok: at 0011_reviews_luck_fitted" in done.stdout
    done = run(*migrate, "--url", fresh, "downgrade", "base")
    assert done.returncode == 0, done.stderr
    done = run(*migrate, "--url", fresh, "check")
    assert done.returncode == 1
    assert "not up to date" in done.stderr
    assert tables(fresh) == {"alembic_version"}


def test_concurrent_upgrades(fresh: str) -> None:
    """Replicas starting together all migrate; one does the work, none fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEN_")}
    cmd = [sys.executable, "-m", "infra.archive.migrate", "--url", fresh, "upgrade"]
    procs = [
        subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    outcomes = []
    for proc in procs:  # communicate drains both pipes as it waits: a full one blocks no child
        _, err = proc.communicate(timeout=60)
        outcomes.append((proc.returncode, err))
    assert [rc for rc, _ in outcomes] == [0, 0, 0], outcomes
    assert current(fresh) == head()
    assert differences(fresh) == []


def test_offline_sql() -> None:
    """`alembic upgrade head --sql`: the DDL as a script, no database needed."""
    cfg = alembic_config("postgresql://nobody@127.0.0.1:1/none")
    cfg.output_buffer = io.StringIO()
    command.upgrade(cfg, "head", sql=True)
    sql = cfg.output_buffer.getvalue()
    for table in TABLES:
        assert f"CREATE TABLE {table}" in sql
    assert "JSONB" in sql
    assert 'COLLATE "C"' in sql


def test_embedded_default(tmp_path: Path) -> None:
    """No configuration: the archive is ./ten-archive.sqlite3, migrated on demand."""
    assert (
        database_url(None, environ={}) == DEFAULT_URL == "sqlite+aiosqlite:///./ten-archive.sqlite3"
    )
    done = run(sys.executable, "-m", "infra.archive.migrate", "upgrade", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ten-archive.sqlite3").exists()
    assert tables(f"sqlite:///{tmp_path / 'ten-archive.sqlite3'}") == TABLES | {"alembic_version"}


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("postgresql://u:p@db:5432/ten", "postgresql+asyncpg://u:p@db:5432/ten"),
        ("postgres://u@db/ten", "postgresql+asyncpg://u@db/ten"),
        ("postgresql+asyncpg://u@db/ten", "postgresql+asyncpg://u@db/ten"),
        ("sqlite:///archive.db", "sqlite+aiosqlite:///archive.db"),
        ("sqlite+aiosqlite:////var/lib/ten/a.db", "sqlite+aiosqlite:////var/lib/ten/a.db"),
    ],
)
def test_database_url(given: str, used: str) -> None:
    assert database_url(None, environ={"TEN_DATABASE_URL": given}) == used
    assert database_url(given, environ={"TEN_DATABASE_URL": "sqlite:///other"}) == used


def test_unsupported_database() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        database_url("mysql://u@db/ten")
