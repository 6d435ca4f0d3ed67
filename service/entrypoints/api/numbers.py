"""The numbers of a path and a query, read as `service.core.numbers` reads any number: ASCII
digits only, within the declared bounds, else 400 `invalid_request`.

Litestar converts a declared integer parameter laxly (msgspec's `strict=False`: `1e3` is
1000, `1.0` is 1, `-0` is 0). `strict_numbers`, a middleware around every handler, reads
each integer parameter of the handler's signature from the raw path or query first and
refuses anything else before Litestar converts it. A header carries no declared integer:
a handler reads its own with `paging.number_in`."""

from __future__ import annotations

import functools
from typing import NamedTuple
from urllib.parse import parse_qsl

from litestar.handlers import BaseRouteHandler
from litestar.params import ParameterKwarg
from litestar.types import ASGIApp, Receive, Scope, Send
from litestar.typing import FieldDefinition

from service.entrypoints.api.paging import number_in

HIGHEST = 10**18  # an integer parameter that states no bound of its own


class Number(NamedTuple):
    name: str  # in the path, if the route's path names it, else in the query as `key`
    key: str
    low: int
    high: int


def _is_integer(field: FieldDefinition) -> bool:
    types = [t for t in field.inner_types if not t.is_none_type] if field.is_optional else [field]
    return any(t.annotation is int for t in types)


@functools.lru_cache(maxsize=1024)  # the handlers of an app, of a few apps in a test run
def numbers_of(handler: BaseRouteHandler) -> tuple[Number, ...]:
    """The integer parameters of a handler's path and query, read once per handler."""
    numbers = []
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if not _is_integer(field) or (
            isinstance(kwarg, ParameterKwarg) and (kwarg.header or kwarg.cookie)
        ):
            continue
        bounds = kwarg if isinstance(kwarg, ParameterKwarg) else None
        low = int(bounds.ge) if bounds is not None and bounds.ge is not None else 0
        high = int(bounds.le) if bounds is not None and bounds.le is not None else HIGHEST
        key = bounds.query if bounds is not None and bounds.query else name
        numbers.append(Number(name, key, low, high))
    return tuple(numbers)


def strict_numbers(app: ASGIApp) -> ASGIApp:
    """The middleware: every integer parameter of the handler, ASCII digits within bounds."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        handler = scope.get("route_handler")
        if scope["type"] == "http" and handler is not None:
            numbers = numbers_of(handler)
            if numbers:
                query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), True)
                path = scope.get("path_params", {})
                for number in numbers:
                    raw = path.get(number.name)
                    values = (
                        [raw] if isinstance(raw, str) else [v for k, v in query if k == number.key]
                    )
                    for value in values:
                        number_in(number.key, value, low=number.low, high=number.high, spaces=False)
        await app(scope, receive, send)

    return checked
