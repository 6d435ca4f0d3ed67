"""The Helm chart's identity settings: the API keys and the JWT secret or public key reach
the pods from a Kubernetes Secret (the chart's, or one the operator manages) through
`secretKeyRef`, never from the ConfigMap; the JWKS URL, issuer, audience and CORS origins are
plain settings; values the service would refuse fail to render."""

from __future__ import annotations

import base64
from typing import Any

import helm_python as helm
import pytest

from service.core.settings import Settings
from service.entrypoints.api.identity import Identity
from tests.support.helm import (
    configmap_env,
    env_of,
    one,
    production_values,
    render,
    validate_all,
)

KEYS = ["platform-key-old-0123456789", "platform-key-new-9876543210"]
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
JWT = {"issuer": "https://accounts.example.com", "audience": "ten"}


def server_env(objects: dict) -> dict[str, dict[str, Any]]:
    return env_of(one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0])


def test_credentials_given_as_values_are_kept_in_the_charts_secret() -> None:
    objects = render({"auth": {"apiKeys": KEYS, "jwtSecret": SECRET, **JWT}, "corsOrigins": ["*"]})
    validate_all(objects)
    secret = objects[("Secret", "ten")]
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert decoded == {"api-keys": ",".join(KEYS), "jwt-secret": SECRET}
    env = server_env(objects)
    assert env["TEN_API_KEYS"]["valueFrom"]["secretKeyRef"] == {"name": "ten", "key": "api-keys"}
    assert env["TEN_JWT_SECRET"]["valueFrom"]["secretKeyRef"] == {
        "name": "ten",
        "key": "jwt-secret",
    }
    assert "TEN_JWT_PUBLIC_KEY" not in env
    config = configmap_env(objects)
    assert "TEN_API_KEYS" not in config
    assert "TEN_JWT_SECRET" not in config
    for credential in (*KEYS, SECRET):
        assert credential not in str(config)
        assert credential not in str(one(objects, "Deployment"))
    # what the pod gets (ConfigMap + the Secret's values) is settings the service starts with
    settings = Settings.from_env(
        {**config, "TEN_API_KEYS": decoded["api-keys"], "TEN_JWT_SECRET": decoded["jwt-secret"]}
    )
    identity = Identity.from_settings(settings)
    assert identity.describe() == {"mode": "verified", "api_keys": True, "jwt": True, **JWT}
    assert settings.http.cors_origins == ("*",)


def test_the_erasure_ledgers_key_is_kept_in_the_charts_secret_or_read_from_yours() -> None:
    key = "an-erasure-ledger-key-of-32-bytes-or-more"
    objects = render({"auth": {"apiKeys": KEYS, "privacyKey": key}})
    validate_all(objects)
    secret = objects[("Secret", "ten")]
    assert base64.b64decode(secret["data"]["privacy-key"]).decode() == key
    ref = server_env(objects)["TEN_PRIVACY_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "ten", "key": "privacy-key"}
    assert key not in str(configmap_env(objects))
    assert key not in str(one(objects, "Deployment"))
    keys = {"apiKeys": "api-keys", "privacyKey": "ledger"}
    objects = render({"auth": {"existingSecret": "mine", "existingSecretKeys": keys}})
    ref = server_env(objects)["TEN_PRIVACY_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "mine", "key": "ledger"}
    assert "TEN_PRIVACY_KEY" not in server_env(render({}))


def test_a_changed_key_rolls_the_pods() -> None:
    def checksum(keys: list[str]) -> str:
        deployment = one(render({"auth": {"apiKeys": keys}}), "Deployment")
        return deployment["spec"]["template"]["metadata"]["annotations"]["checksum/secret"]

    assert checksum(KEYS) != checksum(KEYS[1:])


def test_an_existing_secret_is_read_key_by_key_and_the_chart_renders_none() -> None:
    values = {
        "auth": {
            "existingSecret": "platform-credentials",
            "existingSecretKeys": {"apiKeys": "keys", "jwtPublicKey": "jwt.pem"},
            "apiKeys": KEYS,  # ignored: the existing Secret wins
            **JWT,
        }
    }
    objects = render(values)
    validate_all(objects)
    assert ("Secret", "ten") not in objects
    env = server_env(objects)
    assert env["TEN_API_KEYS"]["valueFrom"]["secretKeyRef"] == {
        "name": "platform-credentials",
        "key": "keys",
    }
    assert env["TEN_JWT_PUBLIC_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "platform-credentials",
        "key": "jwt.pem",
    }
    assert "TEN_JWT_SECRET" not in env  # its key is empty: not read
    assert configmap_env(objects)["TEN_JWT_ISSUER"] == JWT["issuer"]


def test_nothing_configured_is_the_open_service() -> None:
    objects = render()
    env = server_env(objects)
    assert not {"TEN_API_KEYS", "TEN_JWT_SECRET", "TEN_JWT_PUBLIC_KEY"} & set(env)
    config = configmap_env(objects)
    assert not [name for name in config if name.startswith(("TEN_JWT", "TEN_CORS"))]
    assert Identity.from_settings(Settings.from_env(config)).open


def test_the_production_values_read_the_operators_secret_and_a_jwks() -> None:
    objects = render(production_values())
    env = server_env(objects)
    assert env["TEN_API_KEYS"]["valueFrom"]["secretKeyRef"] == {
        "name": "ten-credentials",
        "key": "api-keys",
    }
    config = configmap_env(objects)
    assert config["TEN_JWT_JWKS_URL"].startswith("https://")
    assert config["TEN_CORS_ORIGINS"] == "https://play.example.com"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"auth": {"jwtSecret": SECRET}}, "needs auth.issuer and auth.audience"),
        ({"auth": {"jwksUrl": "https://p/jwks", "issuer": "i"}}, "needs auth.issuer and"),
        (
            {"auth": {"jwtSecret": SECRET, "jwksUrl": "https://p/jwks", **JWT}},
            "give one JWT key",
        ),
        (
            {
                "auth": {
                    "existingSecret": "mine",
                    "existingSecretKeys": {"jwtSecret": "s", "jwtPublicKey": "p"},
                    **JWT,
                }
            },
            "give one JWT key",
        ),
    ],
)
def test_identity_values_the_service_would_refuse_fail_to_render(
    values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmRenderError) as caught:
        render(values)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("values", "where"),
    [
        ({"auth": {"apiKeys": ["short"]}}, "/auth/apiKeys/0"),
        ({"auth": {"apiKeys": ["a,b-0123456789abcdef"]}}, "/auth/apiKeys/0"),
        ({"auth": {"jwtSecret": "too-short"}}, "/auth/jwtSecret"),
        ({"auth": {"jwtPublicKey": "not a pem"}}, "/auth/jwtPublicKey"),
        ({"auth": {"jwksUrl": "file:///etc/jwks"}}, "/auth/jwksUrl"),
        ({"auth": {"leeway": 3600}}, "/auth/leeway"),
        ({"auth": {"token": "x"}}, "'token' not allowed"),
        ({"corsOrigins": ["https://a.example/path"]}, "/corsOrigins/0"),
    ],
)
def test_bad_identity_values_fail_against_the_schema(values: dict[str, Any], where: str) -> None:
    with pytest.raises(helm.HelmValuesError) as caught:
        render(values)
    assert where in str(caught.value)
