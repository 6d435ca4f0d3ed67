"""A served process that verifies identities (a platform's setup) refuses to start without
its own TEN_PRIVACY_KEY; the open embedded default keeps the development key."""

from __future__ import annotations

import pytest

from service.bootstrap import refuse_jobs_nobody_works, refuse_privacy_without_key
from service.core.settings import Settings

JWT = {"TEN_JWT_SECRET": "s" * 32, "TEN_JWT_ISSUER": "p", "TEN_JWT_AUDIENCE": "ten"}


@pytest.mark.parametrize("env", [{"TEN_API_KEYS": "k" * 32}, JWT])
def test_identities_without_a_privacy_key_are_refused(env: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="TEN_PRIVACY_KEY is not set"):
        refuse_privacy_without_key(Settings.from_env(env))
    refuse_privacy_without_key(Settings.from_env({**env, "TEN_PRIVACY_KEY": "a-secret"}))


def test_the_open_default_keeps_the_development_key() -> None:
    refuse_privacy_without_key(Settings.from_env({}))


def test_only_the_served_app_refuses() -> None:
    """`create_app(serving=True)` (`service.app:app`) checks it; apps built in process (the
    tests', the tools') do not."""
    settings = Settings.from_env({"TEN_API_KEYS": "k" * 32})
    refuse_jobs_nobody_works(settings)
    with pytest.raises(ValueError, match="TEN_PRIVACY_KEY is not set"):
        refuse_jobs_nobody_works(settings, serving=True)
