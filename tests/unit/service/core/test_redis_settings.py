"""Redis settings (`service.core.settings`): Sentinel addresses and acknowledgement on WAIT."""

from __future__ import annotations

import pytest

from service.core.settings import Settings


def test_sentinels_are_read_with_their_default_port_and_stand_for_the_url() -> None:
    settings = Settings.from_env(
        {"TEN_REDIS_SENTINELS": "10.0.0.1:26380, sentinel-b ,[fd00::3]:5000,sentinel-b"}
    )
    assert settings.redis.sentinels == (
        ("10.0.0.1", 26380),
        ("sentinel-b", 26379),
        ("fd00::3", 5000),
    )
    assert settings.redis.sentinel_master == "mymaster"
    assert settings.redis.url == "redis://mymaster/0"  # Redis is on (not the embedded store)


def test_the_url_beside_sentinels_keeps_its_database_and_credentials() -> None:
    settings = Settings.from_env(
        {
            "TEN_REDIS_SENTINELS": "s1:26379",
            "TEN_REDIS_SENTINEL_MASTER": "ten",
            "TEN_REDIS_URL": "redis://:secret@ignored/3",
        }
    )
    assert settings.redis.sentinel_master == "ten"
    assert settings.redis.url == "redis://:secret@ignored/3"


@pytest.mark.parametrize("item", ["s1:", "s1:port", ":26379", "s1:70000", "s1:0"])
def test_a_sentinel_that_is_not_host_port_is_refused(item: str) -> None:
    with pytest.raises(ValueError, match="TEN_REDIS_SENTINELS"):
        Settings.from_env({"TEN_REDIS_SENTINELS": item})


def test_waiting_for_replicas_is_off_by_default_and_read() -> None:
    assert Settings.from_env({"TEN_REDIS_URL": "redis://r/0"}).redis.wait_replicas == 0
    settings = Settings.from_env(
        {
            "TEN_REDIS_URL": "redis://r/0",
            "TEN_REDIS_WAIT_REPLICAS": "2",
            "TEN_REDIS_WAIT_TIMEOUT": "0.25",
        }
    )
    assert (settings.redis.wait_replicas, settings.redis.wait_timeout) == (2, 0.25)


def test_the_pools_cap_is_unset_by_default_and_read() -> None:
    assert Settings.from_env({"TEN_REDIS_URL": "redis://r/0"}).redis.max_connections is None
    environ = {"TEN_REDIS_URL": "redis://r/0", "TEN_REDIS_MAX_CONNECTIONS": "8"}
    assert Settings.from_env(environ).redis.max_connections == 8


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"TEN_REDIS_SENTINELS": "s1", "TEN_REDIS_CLUSTER": "true"}, "not both"),
        (
            {
                "TEN_REDIS_URL": "redis://c/0",
                "TEN_REDIS_CLUSTER": "1",
                "TEN_REDIS_WAIT_REPLICAS": "1",
            },
            "not supported on a Redis Cluster",
        ),
        ({"TEN_REDIS_WAIT_REPLICAS": "1"}, "needs Redis"),
        ({"TEN_REDIS_URL": "redis://r/0", "TEN_REDIS_WAIT_REPLICAS": "one"}, "whole number"),
        ({"TEN_REDIS_URL": "redis://r/0", "TEN_REDIS_WAIT_TIMEOUT": "0"}, "positive"),
        ({"TEN_REDIS_URL": "redis://r/0", "TEN_REDIS_MAX_CONNECTIONS": "0"}, "at least 1"),
        ({"TEN_REDIS_URL": "redis://r/0", "TEN_REDIS_MAX_CONNECTIONS": "-2"}, "whole number"),
    ],
)
def test_redis_settings_that_cannot_work_are_refused(environ: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_env(environ)
