"""The one boundary of untrusted text: every request body is decoded by `bodies.strictly`,
which hands it here, and every text field of it (a string whose schema states the text
policy's pattern: `schemas.Name`, and any text field added later the same way) is kept as
the policy keeps it (`service.core.text.clean_text`: NFC, trimmed, visible, bounded) or the
request is refused with 400 `invalid_text`, before any use case sees it.

Which fields are text is read once per body type from its schema (msgspec's type info):
structs, their optional fields, lists and tuples of them, unions. A string field of a
request schema is either text, or bounded by a pattern, a format or a set of values
(`tests/unit/service/entrypoints/api/test_text_boundary.py` enumerates them)."""

from __future__ import annotations

import functools
from typing import Any

import msgspec
import msgspec.inspect as mi

from service.core import text

# (field name, its text limit, or the nested fields' plan) per field to visit
Plan = tuple[tuple[str, Any], ...]


def text_limit(info: mi.Type) -> int | None:
    """The limit of a text field's string (None: `info` is not a text field)."""
    if not isinstance(info, mi.Metadata) or not isinstance(info.type, mi.StrType):
        return None
    if (info.extra_json_schema or {}).get("pattern") != text.PATTERN:
        return None
    limit = info.type.max_length
    assert limit is not None, "a text field states its max_length"
    return limit


def _plan_of(info: mi.Type) -> Any:
    """What to visit in a value of this type: an int (a text field's limit), a Plan (a
    struct's fields), ("each", plan) for lists and tuples, or None (nothing)."""
    limit = text_limit(info)
    if limit is not None:
        return limit
    if isinstance(info, mi.Metadata):
        return _plan_of(info.type)
    if isinstance(info, mi.StructType):
        return plan(info.cls)
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        inner = _plan_of(info.item_type)
        return None if inner is None else ("each", inner)
    if isinstance(info, mi.UnionType):
        found = [p for p in (_plan_of(t) for t in info.types) if p is not None]
        if len(found) > 1:
            return ("any", tuple(found))
        return found[0] if found else None
    return None


@functools.cache
def plan(body_type: type) -> Plan | None:
    """The text fields of a struct type, by name (None: it has none)."""
    info = mi.type_info(body_type)
    if not isinstance(info, mi.StructType):
        return None
    fields = tuple(
        (field.name, found) for field in info.fields if (found := _plan_of(field.type)) is not None
    )
    return fields or None


def policed(value: Any, body_type: Any) -> Any:
    """The decoded body with each text field as the policy keeps it (see the docstring)."""
    visit = plan(body_type) if isinstance(body_type, type) else None
    return value if visit is None else _apply(value, visit, "")


def _apply(value: Any, how: Any, field: str) -> Any:
    if value is None:
        return None
    if isinstance(how, int):
        return text.clean_text(value, field=field, limit=how) if isinstance(value, str) else value
    if isinstance(how, tuple) and how and how[0] == "each":
        if not isinstance(value, list | tuple | set | frozenset):
            return value
        items = [_apply(item, how[1], field) for item in value]
        return type(value)(items) if not isinstance(value, list) else items
    if isinstance(how, tuple) and how and how[0] == "any":
        for option in how[1]:
            value = _apply(value, option, field)
        return value
    if not isinstance(value, msgspec.Struct):
        return value
    changes = {}
    for name, inner in how:
        if not hasattr(value, name):
            continue
        before = getattr(value, name)
        after = _apply(before, inner, name)
        if after is not before:
            changes[name] = after
    return msgspec.structs.replace(value, **changes) if changes else value
