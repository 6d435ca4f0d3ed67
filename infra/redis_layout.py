"""Where the Redis game store (`infra.redis_store`) keeps what, and how it is encoded.

Keys of one game share the hash tag `{game:<id>}`, so every script touches one slot:
- `{game:<id>}`       hash: `v` (the record's stamp), `rec` (the msgpack-encoded GameRecord)
  and `r` (the relay cursor, `service.reactions.relay`: the last seq relayed; absent: none)
- `{game:<id>}:log`   stream: one entry per event, id `0-<seq>`, field `d` (the event JSON)
- `{game:<id>}:idem`  hash: idempotency entry (`service.core.idempotency.entry_key`) -> the outcome
  of the act, join or create that wrote it (msgpack `IdempotentResponse`)
Every key of a game expires together after the configured time.

Outside the games' slots (each key in its own slot, written in pipelines, never a scan):
- `ten:index:{<name>}` sorted set per listing (`GameRecord.indexes`: "open",
  "player:<id>"): member the game id, score its created_at. Kept in step by create and by
  the saves that change a game's listings (one more round trip, only then); entries of
  games that expired are dropped by `list_games` when it meets them. A host's listing
  ("host:<caller>") is never listed over the API.
- `ten:live-games` sorted set: the games in play, for the `ten_live_games` metric, scored
  by when each was last seen stored (`infra.redis_listings`).
- `ten:quota:{<kind>:<owner>}` sorted set per quota and owner (`service.core.quotas`, the
  scripts of `infra.quotas`): the items held, scored by when each was held.
- `ten:wait-mark` a counter written before a WAIT that confirms earlier writes (a replay).

The due index (`GameStore.due_games`), three keys under one hash tag (one slot: its
scripts run on a Cluster too):
- `{ten:due}`         sorted set: game id -> when it is due (unix seconds)
- `{ten:due}:stamp`   hash: game id -> the stamp (GameRecord.stamp) its entry was written from
- `{ten:due}:claims`  sorted set: game id -> when the claim of a poller lapses
Written by `DUE_WRITE` (stamp-gated set or remove; before a create, and in the round trip
after a save that moved a game's due earlier or ended it, never otherwise), `DUE_CLAIM` and
`DUE_SETTLE` (`infra.redis_scripts`); read by one ZRANGE BYSCORE.
"""

from __future__ import annotations

import msgspec

from service.core.errors import ServiceError
from service.core.model import GameRecord
from service.core.ports import IdempotentResponse, StoredEvent

LIVE_KEY = "ten:live-games"
INDEX_PREFIX = "ten:index:"
DUE_TAG = "ten:due"  # the due index's hash tag: `{ten:due}`, `{ten:due}:stamp`, ...
WAIT_MARK = "ten:wait-mark"  # written before a WAIT that confirms earlier writes (a replay)


def game_keys(game_id: str) -> tuple[str, str, str]:
    """A game's keys: its hash, its log, its idempotency entries."""
    tag = f"{{game:{game_id}}}"
    return tag, f"{tag}:log", f"{tag}:idem"


record_encoder = msgspec.msgpack.Encoder()
record_decoder = msgspec.msgpack.Decoder(GameRecord)
_idem_decoder = msgspec.msgpack.Decoder(IdempotentResponse)


def decode_remembered(blob: bytes) -> IdempotentResponse:
    """An idempotent response. An entry of another form (an old release's) cannot be told to
    answer this request: its key counts as reused, never as new (that could apply twice)."""
    try:
        return _idem_decoder.decode(blob)
    except msgspec.ValidationError:
        raise ServiceError("idempotency_key_reused") from None


def stream_events(entries) -> list[StoredEvent]:
    """The events of a log's entries as XRANGE answers them."""
    return [
        StoredEvent(int(entry_id.split(b"-", 1)[1]), fields[b"d"]) for entry_id, fields in entries
    ]
