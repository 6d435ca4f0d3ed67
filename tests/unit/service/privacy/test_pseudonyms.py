"""The pure rules of an erasure (`service.privacy.pseudonyms`): a game record, its events
and its idempotent answers rewritten at the player's seats only; any other record or
payload by its `player_id`s; the ledger's digest keyed; the access log without the id."""

from __future__ import annotations

import logging

import msgspec

from domain.tournaments.rules import Entrant, Settings
from infra.observability.logs import ACCESS_LOGGER, RequestContext
from service.core.model import GameRecord, Seat, Table, TournamentRecord
from service.core.ports import ArchiveJob, IdempotentResponse
from service.matchmaking.records import PartyMember, PartySeat, TicketRecord
from service.privacy import pseudonyms
from service.privacy.pseudonyms import Subject
from tests.support.player_data import OTHER, OTHER_NAME, SUBJECT, SUBJECT_NAME, game

ME = Subject(player_id=SUBJECT, pseudonym="erased-00ff")


def test_a_game_record_is_rewritten_at_the_players_seats_and_nowhere_else() -> None:
    record, _events = game(1)
    new = pseudonyms.game_record(record, ME)
    assert new is not None
    assert new.player_ids == ("erased-00ff", OTHER, None)
    assert [p.name for p in new.state.players] == ["erased-00ff", OTHER_NAME, "Bot"]
    assert new.stamp > record.stamp  # a save in flight from the old one loses its race
    assert new.state.draw_pile == record.state.draw_pile
    assert pseudonyms.game_record(new, ME) is None  # nothing left
    other = Subject(player_id="nobody", pseudonym="erased-11")
    assert pseudonyms.game_record(record, other) is None


def test_the_events_name_the_pseudonym_at_the_players_seats_only() -> None:
    _, events = game(2)
    rewritten = pseudonyms.stored_events(events, {0}, ME)
    started = msgspec.json.decode(rewritten[0].data)
    assert [p["name"] for p in started["players"]] == ["erased-00ff", OTHER_NAME, "Bot"]
    assert [e.data for e in rewritten[1:]] == [e.data for e in events[1:]]  # same bytes
    assert all(SUBJECT_NAME.encode() not in e.data for e in rewritten)


def test_an_open_tables_seats_host_and_remembered_answer_are_rewritten() -> None:
    record, events = game(3, finished=False)
    table = Table(seats=(Seat(name=SUBJECT_NAME, player_id=SUBJECT, verified=True),
                         Seat(name=OTHER_NAME, player_id=OTHER)))  # fmt: skip
    host = f"player:{SUBJECT}"
    opened = msgspec.structs.replace(record, state=None, table=table, host_id=SUBJECT, host=host)
    new = pseudonyms.game_record(opened, ME)
    assert new is not None
    assert new.table.seats[0] == Seat(name="erased-00ff", player_id="erased-00ff", verified=True)
    assert new.table.seats[1] == table.seats[1]
    assert (new.host_id, new.host) == ("erased-00ff", "player:erased-00ff")
    answer = IdempotentResponse(fingerprint="f", seat=0, record=record, events=events)
    kept = pseudonyms.remembered(answer, ME)
    assert kept is not None
    assert SUBJECT.encode() not in msgspec.msgpack.encode(kept)
    assert SUBJECT_NAME.encode() not in msgspec.msgpack.encode(kept)


def test_payloads_are_rewritten_by_their_player_ids_and_others_left_alone() -> None:
    record, events = game(4)
    job = msgspec.msgpack.encode(ArchiveJob(record=record, events=events))
    new = pseudonyms.payload(job, ME)
    assert new is not None
    assert SUBJECT.encode() not in new
    assert SUBJECT_NAME.encode() not in new
    assert OTHER.encode() in new
    hook = msgspec.json.encode({"seats": [{"name": SUBJECT_NAME, "player_id": SUBJECT},
                                          {"name": OTHER_NAME, "player_id": OTHER}]})  # fmt: skip
    assert msgspec.json.decode(pseudonyms.payload(hook, ME)) == {"seats": [
        {"name": "erased-00ff", "player_id": "erased-00ff"},
        {"name": OTHER_NAME, "player_id": OTHER}]}  # fmt: skip
    assert pseudonyms.payload(b'{"player_id": "someone"}', ME) is None


def test_a_ticket_is_rewritten_in_its_holder_and_in_its_party() -> None:
    ticket = TicketRecord(
        id="m0", mode="live", rated=True, sizes=(2,), player_id=OTHER, name=OTHER_NAME,
        party=(PartyMember(player_id=SUBJECT, name=SUBJECT_NAME),),
        created_at=1.0, expires_at=2.0, updated_at=1.0, owner=f"player:{SUBJECT}",
        party_seats=(PartySeat(player_id=SUBJECT, seat=1, seat_token="g.1.secret"),),
    )  # fmt: skip
    new = pseudonyms.typed(ticket, ME)
    assert new is not None
    assert new.party == (PartyMember(player_id="erased-00ff", name="erased-00ff"),)
    # the seat handed to the holder in open mode: its player renamed, its token kept
    assert new.party_seats == (PartySeat(player_id="erased-00ff", seat=1, seat_token="g.1.secret"),)
    assert (new.player_id, new.name, new.owner) == (OTHER, OTHER_NAME, "player:erased-00ff")


def test_the_ledgers_digest_is_keyed_and_never_the_id() -> None:
    one = pseudonyms.ledger_digest(b"key-1", SUBJECT)
    assert one == pseudonyms.ledger_digest(b"key-1", SUBJECT)
    assert one != pseudonyms.ledger_digest(b"key-2", SUBJECT)
    assert SUBJECT not in one
    assert len(one) == 64
    first, second = pseudonyms.new_pseudonym(), pseudonyms.new_pseudonym()
    assert first.startswith("erased-")
    assert first != second


def test_the_access_log_writes_a_players_route_by_its_template(caplog) -> None:
    context = RequestContext(None, access_log=True)
    scope = {"method": "GET", "path": f"/v1/players/{SUBJECT}/data",
             "path_template": "/v1/players/{player_id:str}/data",
             "path_params": {"player_id": SUBJECT}}  # fmt: skip
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        context._access(scope, 200, 0.01)
    assert caplog.records
    assert all(SUBJECT not in r.getMessage() and SUBJECT not in str(r.__dict__)
               for r in caplog.records)  # fmt: skip


def test_a_record_without_the_player_is_none_whatever_its_kind() -> None:
    record = GameRecord(id="g", state=None, token_hashes=(), created_at=0.0, updated_at=0.0,
                        table=Table(seats=(Seat(),)))  # fmt: skip
    assert pseudonyms.game_record(record, ME) is None
    assert pseudonyms.rewritten({"a": [1, "x", {"b": None}]}, ME) is None


def test_only_the_keys_that_name_exactly_the_player_are_renamed() -> None:
    q = Subject(player_id="q", pseudonym="erased-1")
    renamed = pseudonyms.renamed_key
    assert renamed("{ten:q:archive}:jobs", q) is None  # an id that is a word of other keys
    assert renamed("ten:index:{player:q}", q) == "ten:index:{player:erased-1}"
    assert renamed("ten:index:{host:player:q}", q) == "ten:index:{host:player:erased-1}"
    assert renamed("ten:quota:{tables:player:q}", q) == "ten:quota:{tables:player:erased-1}"
    assert renamed("tables:player:q", q) == "tables:player:erased-1"  # the embedded quotas'
    assert renamed("{ten:mm:l}:holder:q", q) == "{ten:mm:l}:holder:erased-1"
    assert renamed("ten:index:{player:qq}", q) is None
    # an id with colons is never found inside another's (`acme:7` in `acme:7:eu`)
    acme = Subject(player_id="acme:7", pseudonym="erased-2")
    for other in ("ten:index:{player:acme:7:eu}", "ten:quota:{tables:player:acme:7:eu}",
                  "{ten:mm:live}:holder:acme:7:eu", "tables:player:acme:7:eu",
                  "ten:quota:{tables:player:x:player:acme:7}"):  # fmt: skip
        assert renamed(other, acme) is None, other
    assert renamed("ten:index:{player:acme:7}", acme) == "ten:index:{player:erased-2}"
    assert renamed("{ten:mm:live}:holder:acme:7", acme) == "{ten:mm:live}:holder:erased-2"
    eu = Subject(player_id="7:eu", pseudonym="erased-3")
    assert renamed("{ten:mm:live}:holder:acme:7:eu", eu) is None
    assert renamed("tables:player:acme:7:eu", eu) is None


def test_an_id_equal_to_another_fields_value_rewrites_only_the_fields_of_player_ids() -> None:
    live, basic = (Subject(player_id=p, pseudonym="erased-0e") for p in ("live", "basic"))
    ticket = TicketRecord(
        id="l0", mode="live", rated=True, sizes=(2,), player_id=OTHER, name=OTHER_NAME,
        bot="basic", created_at=1.0, expires_at=2.0, updated_at=1.0, version=3,
    )  # fmt: skip
    assert pseudonyms.typed(ticket, live) is None
    assert pseudonyms.typed(ticket, basic) is None
    mine = msgspec.structs.replace(ticket, player_id="live", name="Lee")
    new = pseudonyms.typed(mine, live)
    assert new is not None
    assert (new.mode, new.bot, new.player_id, new.name) == ("live", "basic", "erased-0e",
                                                            "erased-0e")  # fmt: skip
    assert new.version == 4  # a save in flight from version 3 loses its compare-and-set
    cup = TournamentRecord(
        id="t" * 20, name="basic", organiser="player:basic", settings=Settings(table_size=2),
        places=4, bot_level="basic", registered=("basic", OTHER),
        entrants=(Entrant(id="basic"), Entrant(id=OTHER), Entrant(id="bot:1", bot="basic")),
        created_at=0.0, updated_at=0.0, version=1,
    )  # fmt: skip
    new_cup = pseudonyms.typed(cup, basic)
    assert new_cup is not None
    assert (new_cup.name, new_cup.bot_level, new_cup.organiser) == ("basic", "basic",
                                                                    "player:erased-0e")  # fmt: skip
    assert new_cup.registered == ("erased-0e", OTHER)
    assert new_cup.entrants == (Entrant(id="erased-0e"), Entrant(id=OTHER),
                                Entrant(id="bot:1", bot="basic"))  # fmt: skip
    assert new_cup.version == 2
    taken = b'{"type":"seat_taken_over","seat":1,"bot":"basic","reason":"timeouts"}'
    assert pseudonyms.event_json(taken, set(), basic) == taken
    hook = msgspec.json.encode(
        {
            "type": "seat_taken_over",
            "data": {
                "game_id": "g",
                "seat": 1,
                "player_id": OTHER,
                "bot": "basic",
                "reason": "timeouts",
            },
        }
    )
    assert pseudonyms.payload(hook, basic) is None
    assert pseudonyms.payload(hook, Subject(player_id="timeouts", pseudonym="e")) is None


def test_a_reconciliations_candidates_are_the_ids_of_the_fields_the_erasure_rewrites() -> None:
    record, events = game(5)
    job = msgspec.msgpack.encode(ArchiveJob(record=record, events=events))
    assert {SUBJECT, OTHER} <= pseudonyms.payload_ids(job)
    hook = msgspec.json.encode(
        {
            "type": "tournament_started",
            "data": {
                "entrants": [{"entrant": SUBJECT}],
                "mode": "live",
                "owner": f"player:{OTHER}",
            },
        }
    )
    found = pseudonyms.payload_ids(hook)
    assert {SUBJECT, OTHER} <= found
    assert "live" not in found  # a mode is no player's id
    assert pseudonyms.ids_in({"entrants": [{"id": SUBJECT, "bot": None}]}) == {SUBJECT}
