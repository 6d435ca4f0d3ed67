"""The keyset cursors of the archive's listing of games: (finished_at, id) of a page's
last game, versioned, as an opaque URL-safe token."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime, timedelta

import msgspec

from service.history.archive import InvalidCursor

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_cursor_decoder = msgspec.json.Decoder(tuple[int, int, str])
_CURSOR_VERSION = 1


def _micros(at: datetime) -> int:
    return (at - _EPOCH) // _MICROSECOND


def encode_cursor(finished_at: datetime, game_id: str) -> str:
    raw = msgspec.json.encode((_CURSOR_VERSION, _micros(finished_at), game_id))
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, micros, game_id = _cursor_decoder.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError) as exc:
        raise InvalidCursor("not a cursor of this listing") from exc
    if version != _CURSOR_VERSION or not isinstance(game_id, str) or "\x00" in game_id:
        raise InvalidCursor("not a cursor of this listing")
    try:
        return _EPOCH + micros * _MICROSECOND, game_id
    except OverflowError as exc:
        raise InvalidCursor("not a cursor of this listing") from exc
