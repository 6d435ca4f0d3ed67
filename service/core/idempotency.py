"""`Idempotency-Key`: one mechanism for every command that takes one (act, join, create).

The outcome of a command sent with a key is stored atomically with the command's effect, in
the game's own idempotency hash (`GameStore.save` for act and join, `GameStore.create` for a
create), so nothing is ever claimed ahead of the work: a request cut by a store failure or
a dead process either stored its effect and its outcome together, or stored nothing, and
its retry then gets the first outcome or runs afresh.

- The entry's key names the operation and the caller's scope (`key_scope`: `Caller.scope`,
  and for an anonymous caller its address), so the keys of different operations and callers
  never meet: two anonymous clients sending one key are two callers. An action's entry is keyed on the key
  alone, as every release stored it (the seat is in its fingerprint); the other entries'
  keys are hashed with their scope (bounded length, and no client key spells one).
- The fingerprint is taken from the decoded command (msgpack of its fields), not from the
  request's bytes: the same command spelled with other whitespace or field order is the
  same request; another command with the same key is `idempotency_key_reused`.
- A create with a key makes the game whose id is derived from (scope, key): two copies of
  one create collide on the id, and the store's no-overwrite create hands the second one
  the first one's outcome.
"""

from __future__ import annotations

import hashlib
import hmac

import msgspec

from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.ports import IdempotentResponse
from service.core.quotas import owner_of

_encoder = msgspec.msgpack.Encoder()
# a fingerprint: its form's mark, the operation, then the digest of the decoded command
_MARK = "c1:"


def fingerprint(operation: str, *command: object) -> str:
    """What identifies a command beyond its key: the operation and the command's decoded
    fields (structs, numbers, strings, lists), hashed."""
    digest = hashlib.sha256(_encoder.encode(command)).hexdigest()
    return f"{_MARK}{operation}:{digest}"


def key_scope(caller: Caller, address: str | None) -> str:
    """Whose Idempotency-Keys a request's are: the caller's scope; an anonymous caller's
    address (as its quota counts it), so that one anonymous client's key never answers
    another's request with the first one's credentials. No address (tools, tests): the
    scope alone."""
    return owner_of(caller, address) or caller.scope


def _scoped(scope: str, key: str) -> str:
    return hashlib.sha256(f"{len(scope)}:{scope}|{key}".encode()).hexdigest()


def entry_key(operation: str, scope: str, key: str) -> str:
    """Where the outcome of `operation` with this key lives in the game's idempotency hash;
    an action's entry is the key itself (see the module's docstring)."""
    if operation == "act":
        return key
    return f"{operation}:{_scoped(scope, key)}"


def created_game_id(scope: str, key: str) -> str:
    """The id of the game a create with this key makes (`service.games.use_cases.GAME_ID`'s form)."""
    return hashlib.sha256(f"create|{_scoped(scope, key)}".encode()).hexdigest()[:20]


def check_same(prior: IdempotentResponse, fingerprint: str) -> None:
    """Refuse (`idempotency_key_reused`) a remembered outcome that is another request's."""
    if not hmac.compare_digest(prior.fingerprint, fingerprint):
        raise ServiceError("idempotency_key_reused")
