"""Request bodies, converted as strictly as the OpenAPI schema reads them."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request

from service.entrypoints.api.boundary import policed
from service.entrypoints.api.problems import foreign, problem

_strict_decoders: dict[Any, msgspec.json.Decoder] = {}


async def strictly(request: Request, body_type: Any) -> Any:
    """The JSON body converted as strictly as the schema reads it.

    Litestar converts the decoded JSON to the handler's `data` type in msgspec's lax mode,
    where a number sent as a string (`"starting_seat": "0"`) passes; the contract answers 400
    for values that fail the schema, so the handlers convert the body again, strictly. JSON
    Schema counts `4.0` as an integer, and so does this.

    First with a decoder built once per type (strict, the fast path); a body it
    refuses takes the slower path below, which also accepts `4.0` as 4 and words the error."""
    body = await request.body()
    decoder = _strict_decoders.get(body_type)
    if decoder is None:
        decoder = _strict_decoders[body_type] = msgspec.json.Decoder(body_type)
    try:
        return policed(decoder.decode(body), body_type)  # the text policy: one boundary
    except msgspec.DecodeError:
        pass
    try:
        value = _integral_floats_as_ints(msgspec.json.decode(body))
        return policed(msgspec.convert(value, type=body_type, strict=True), body_type)
    except msgspec.DecodeError as exc:  # ValidationError included
        raise problem(
            400,
            "invalid_request",
            foreign(str(exc)),
            errors=[{"message": str(exc), "source": "body"}],
        ) from None


def _integral_floats_as_ints(value: Any) -> Any:
    """The API has no fractional fields: `4.0` is the integer 4 (as in JSON Schema).

    Recursive, but only ever given bodies Litestar already converted to the handler's type,
    so as deep as those types (a few levels), never as deep as a hostile body."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    return value
