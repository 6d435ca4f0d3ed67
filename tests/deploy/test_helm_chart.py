"""The Helm chart in helm/ten, rendered by the real Helm engine and checked against Kubernetes.

Rendering uses `helm-python-sdk` (Helm v4's Go SDK as a library: the same template engine,
values coalescing and values.schema.json validation as `helm template`, offline, no binary).
Every rendered manifest is validated with `kubernetes-validate` in strict mode (unknown
fields are errors) against the oldest Kubernetes the chart claims and the newest the package
ships, for the default values and for helm/ten/ci/production-values.yaml. Then the properties
that matter are asserted on the rendered objects, and bad values must fail to render with a
clear message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import helm_python as helm
import pytest
import yaml

from service.core.settings import HttpLimits, Settings
from tests.servers import ROOT
from tests.support.helm import (
    CHART,
    Manifests,
    configmap_env,
    env_of,
    one,
    production_values,
    render,
    validate_all,
)

REDIS = {"redis": {"url": "redis://:pw@redis.data:6379/0"}}


def kinds(objects: Manifests) -> set[str]:
    return {kind for kind, _ in objects}


def check_server_pod(deployment: dict[str, Any]) -> dict[str, Any]:
    """The invariants of the service's pod, whatever the values; returns its container."""
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["runAsUser"] == 10001
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["automountServiceAccountToken"] is False
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert "emptyDir" in volumes[mounts["/data"]]  # the image's WORKDIR
    # drain: the pod keeps serving while endpoints are removed, then uvicorn gets SIGTERM and
    # has its graceful-shutdown time before the kubelet's SIGKILL
    (sleep_cmd, seconds) = container["lifecycle"]["preStop"]["exec"]["command"]
    assert sleep_cmd == "sleep"
    assert int(seconds) > 0
    return container


# ---------------------------------------------------------------- default values


def test_default_values_render_valid_manifests() -> None:
    objects = render()
    assert kinds(objects) == {"ConfigMap", "Deployment", "Service", "ServiceAccount"}
    validate_all(objects)
    deployment = one(objects, "Deployment")
    container = check_server_pod(deployment)
    assert deployment["spec"]["replicas"] == 1
    env = configmap_env(objects)
    # the embedded store: one pod, one worker, no Redis URL anywhere
    assert env["WEB_CONCURRENCY"] == "1"
    assert "TEN_REDIS_URL" not in env_of(container)
    assert "TEN_DATABASE_URL" not in env_of(container)
    graceful = int(env["UVICORN_TIMEOUT_GRACEFUL_SHUTDOWN"])
    prestop = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > prestop + graceful
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == "8000"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert one(objects, "ServiceAccount")["automountServiceAccountToken"] is False


def test_the_configmap_is_settings_the_service_accepts() -> None:
    """Every TEN_* the chart renders parses with the service's own Settings."""
    for values in ({}, production_values()):
        env = configmap_env(render(values))
        settings = Settings.from_env(env)
        assert settings.games.finished_ttl == int(env["TEN_FINISHED_TTL"])
        assert settings.redis.cluster is (env["TEN_REDIS_CLUSTER"] == "true")
    production = Settings.from_env(configmap_env(render(production_values())))
    assert production.http.rate_limit == (600, "minute")
    assert production.games.allow_custom_deck is False
    assert production.archive.migrate_on_start is False  # the hook Job migrates, not the pods


def test_the_chart_lints_clean() -> None:
    report = helm.lint(CHART, strict=True)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []
    report = helm.lint(CHART, production_values(), strict=True)
    assert report["errors"] == []


# ---------------------------------------------------------------- production values


def test_production_values_render_valid_manifests() -> None:
    objects = render(production_values())
    assert kinds(objects) == {
        "ConfigMap", "Deployment", "Service", "ServiceAccount", "Ingress",
        "HorizontalPodAutoscaler", "PodDisruptionBudget", "Job", "ServiceMonitor",
    }  # fmt: skip
    # every credential comes from the operator's secrets: the chart renders none
    assert "Secret" not in kinds(objects)
    validate_all(objects)

    deployment = one(objects, "Deployment")
    container = check_server_pod(deployment)
    assert "replicas" not in deployment["spec"]  # the HPA owns it
    hpa = one(objects, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 12)
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    pdb = one(objects, "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"] == {
        "minAvailable": 2,
        "selector": {"matchLabels": deployment["spec"]["selector"]["matchLabels"]},
    }

    env = env_of(container)
    assert env["TEN_REDIS_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "ten-credentials",
        "key": "redis-url",
    }
    assert env["TEN_DATABASE_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "ten-credentials",
        "key": "database-password",
    }
    # Kubernetes expands $(VAR) from the variables defined before it
    names = [e["name"] for e in container["env"]]
    assert names.index("TEN_DATABASE_PASSWORD") < names.index("TEN_DATABASE_URL")
    assert env["TEN_DATABASE_URL"]["value"] == (
        "postgresql+asyncpg://ten:$(TEN_DATABASE_PASSWORD)"
        "@postgres.data.svc.cluster.local:5432/ten?ssl=require"
    )
    config = configmap_env(objects)
    assert config["TEN_REDIS_CLUSTER"] == "true"
    assert config["WEB_CONCURRENCY"] == "2"
    assert config["TEN_OTEL_ENABLED"] == "true"
    # the Redis CA is mounted where the URL's ssl_ca_certs points
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["redis-tls"]["mountPath"] == "/etc/ten/redis-tls"
    assert mounts["redis-tls"]["readOnly"] is True
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["redis-tls"]["secret"]["secretName"] == "redis-ca"

    ingress = one(objects, "Ingress")
    assert ingress["spec"]["tls"] == [
        {"secretName": "ten-example-com-tls", "hosts": ["ten.example.com"]}
    ]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    service = one(objects, "Service")
    assert backend == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]

    # the ServiceMonitor (no schema shipped for the CRD): scrapes the Service's port at /metrics
    monitor = one(objects, "ServiceMonitor")
    labels = service["metadata"]["labels"]
    assert all(labels[k] == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())
    assert monitor["spec"]["endpoints"][0]["port"] == "http"
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"


def test_connection_bounds_reach_the_server() -> None:
    """The head and body limits parse with the service's own HttpLimits; uvicorn's limits are set."""
    env = configmap_env(render())
    assert HttpLimits.from_env(env) == HttpLimits()  # the chart's defaults are the service's
    assert int(env["UVICORN_LIMIT_CONCURRENCY"]) == 512
    assert int(env["UVICORN_TIMEOUT_KEEP_ALIVE"]) == 5
    values = {
        "connections": {
            "headerTimeout": 2.5, "bodyTimeout": 4, "maxHeaderBytes": 8192, "maxHeaders": 40,
            "limitConcurrency": 64, "keepAliveTimeout": 30,
        }
    }  # fmt: skip
    env = configmap_env(render(values))
    assert HttpLimits.from_env(env) == HttpLimits(
        header_timeout=2.5, body_timeout=4.0, max_header_bytes=8192, max_headers=40
    )
    assert (env["UVICORN_LIMIT_CONCURRENCY"], env["UVICORN_TIMEOUT_KEEP_ALIVE"]) == ("64", "30")


def ingress_annotations(values: dict[str, Any]) -> dict[str, str]:
    objects = render(values)
    validate_all(objects)
    return one(objects, "Ingress")["metadata"].get("annotations", {})


def test_the_ingress_carries_the_services_limits() -> None:
    """ingress-nginx refuses a body over settings.maxBodyBytes itself; limit-connections only
    when asked; the operator's own annotations win."""
    production = ingress_annotations(production_values())
    assert production["nginx.ingress.kubernetes.io/proxy-body-size"] == "65536"
    assert production["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert "nginx.ingress.kubernetes.io/limit-connections" not in production
    ingress = {"enabled": True, "nginxLimitConnections": 50}
    ingress["annotations"] = {"nginx.ingress.kubernetes.io/proxy-body-size": "1m"}
    annotations = ingress_annotations({"ingress": ingress, "settings": {"maxBodyBytes": 4096}})
    assert annotations["nginx.ingress.kubernetes.io/limit-connections"] == "50"
    assert annotations["nginx.ingress.kubernetes.io/proxy-body-size"] == "1m"
    assert ingress_annotations({"ingress": {"enabled": True, "nginxLimits": False}}) == {}


def test_the_migration_is_a_pre_install_pre_upgrade_hook_job() -> None:
    objects = render(production_values())
    job = one(objects, "Job")
    annotations = job["metadata"]["annotations"]
    assert set(annotations["helm.sh/hook"].split(",")) == {"pre-install", "pre-upgrade"}
    assert "before-hook-creation" in annotations["helm.sh/hook-delete-policy"]
    spec = job["spec"]
    assert spec["backoffLimit"] == 3
    assert spec["activeDeadlineSeconds"] > 0
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    deployment = one(objects, "Deployment")
    server = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == server["image"]
    assert container["securityContext"] == server["securityContext"]
    assert pod["securityContext"] == deployment["spec"]["template"]["spec"]["securityContext"]
    assert container["args"] == ["python", "-m", "infra.archive.migrate", "upgrade"]
    assert "command" not in container  # the image's tini entrypoint stays
    assert env_of(container)["TEN_DATABASE_URL"] == env_of(server)["TEN_DATABASE_URL"]
    # its pod is not one of the server's: no traffic, not counted by the PDB
    selector = deployment["spec"]["selector"]["matchLabels"]
    labels = spec["template"]["metadata"]["labels"]
    assert not all(labels.get(k) == v for k, v in selector.items())
    # a hook runs before the release's own resources exist: it must use none of them
    assert "serviceAccountName" not in pod
    assert "envFrom" not in container


def test_credentials_given_as_values_reach_the_hook_before_the_release_exists() -> None:
    """The Helm trap: a pre-install hook runs before the chart's regular Secret is created.
    With credentials in values, the Job reads a hook Secret of lower weight instead."""
    values = {
        **REDIS,
        "database": {"url": "postgresql+asyncpg://ten:pw@pg:5432/ten"},
    }
    objects = render(values)
    validate_all(objects)
    secret = objects[("Secret", "ten")]
    assert set(secret["data"]) == {"redis-url", "database-url"}
    assert "helm.sh/hook" not in secret["metadata"].get("annotations", {})
    hook_secret = objects[("Secret", "ten-migration")]
    assert set(hook_secret["data"]) == {"database-url"}  # only what the Job needs
    job = one(objects, "Job")
    weight = int(job["metadata"]["annotations"]["helm.sh/hook-weight"])
    hook = hook_secret["metadata"]["annotations"]
    assert set(hook["helm.sh/hook"].split(",")) == {"pre-install", "pre-upgrade"}
    assert int(hook["helm.sh/hook-weight"]) < weight
    assert "hook-succeeded" in hook["helm.sh/hook-delete-policy"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    ref = env_of(container)["TEN_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "ten-migration", "key": "database-url"}
    deployment = one(objects, "Deployment")
    server = env_of(deployment["spec"]["template"]["spec"]["containers"][0])
    assert server["TEN_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "ten"
    assert server["TEN_REDIS_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "ten",
        "key": "redis-url",
    }
    # secrets are base64 in data, never in the ConfigMap
    assert "pw" not in str(one(objects, "ConfigMap")["data"])


def test_existing_secrets_render_no_secret_and_no_hook_secret() -> None:
    values = {
        "redis": {"existingSecret": "mine", "existingSecretKey": "url"},
        "database": {"existingSecret": "mine", "existingSecretKey": "db"},
        "replicaCount": 2,
    }
    objects = render(values)
    validate_all(objects)
    assert "Secret" not in kinds(objects)
    (container,) = one(objects, "Job")["spec"]["template"]["spec"]["containers"]
    assert env_of(container)["TEN_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "mine",
        "key": "db",
    }


def test_no_database_means_no_migration_job() -> None:
    objects = render(REDIS)
    assert "Job" not in kinds(objects)
    assert "TEN_MIGRATE_ON_START" not in configmap_env(objects)  # the service's default
    disabled = render(
        {"database": {"url": "postgresql://x@pg/ten"}, "migration": {"enabled": False}}
    )
    assert "Job" not in kinds(disabled)
    assert configmap_env(disabled)["TEN_MIGRATE_ON_START"] == "true"  # each pod, advisory lock


def test_a_changed_setting_or_secret_rolls_the_pods() -> None:
    def checksums(values: dict[str, Any]) -> dict[str, str]:
        annotations = one(render(values), "Deployment")["spec"]["template"]["metadata"][
            "annotations"
        ]
        return {k: v for k, v in annotations.items() if k.startswith("checksum/")}

    base = checksums(REDIS)
    assert set(base) == {"checksum/config", "checksum/secret"}
    setting = checksums({**REDIS, "settings": {"idleTtl": 3600}})
    assert setting["checksum/config"] != base["checksum/config"]
    assert setting["checksum/secret"] == base["checksum/secret"]
    secret = checksums({"redis": {"url": "redis://:other@redis.data:6379/0"}})
    assert secret["checksum/secret"] != base["checksum/secret"]


def test_redis_enables_replicas_and_workers() -> None:
    objects = render({**REDIS, "replicaCount": 4, "podDisruptionBudget": {"enabled": True}})
    validate_all(objects)
    assert one(objects, "Deployment")["spec"]["replicas"] == 4
    assert one(objects, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    assert configmap_env(objects)["WEB_CONCURRENCY"] == "2"  # the default on Redis
    objects = render({**REDIS, "workers": 5})
    assert configmap_env(objects)["WEB_CONCURRENCY"] == "5"


def test_job_workers_run_in_a_deployment_of_their_own() -> None:
    """jobWorkers.enabled: the queues' workers in `<fullname>-jobs` (`service.entrypoints.cli work`, no
    HTTP, its own component: neither the Service nor the PDB selects its pods), and the
    serving pods told to run none."""
    assert configmap_env(render(REDIS))["TEN_JOB_WORKERS"] == "true"
    objects = render(
        {
            **REDIS,
            "jobWorkers": {"enabled": True, "replicas": 3},
            "podDisruptionBudget": {"enabled": True},
        }
    )
    validate_all(objects)
    deployments = {name: body for (kind, name), body in objects.items() if kind == "Deployment"}
    server = deployments.pop("ten")
    ((name, jobs),) = deployments.items()
    assert name == "ten-jobs"
    assert jobs["spec"]["replicas"] == 3
    (container,) = jobs["spec"]["template"]["spec"]["containers"]
    assert container["command"][-4:] == ["python", "-m", "service.cli", "work"]
    assert "ports" not in container
    assert "livenessProbe" not in container
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {e["name"] for e in container["env"]} == {
        e["name"] for e in check_server_pod(server)["env"]
    } - {"PORT"}
    assert container["envFrom"] == check_server_pod(server)["envFrom"]
    assert configmap_env(objects)["TEN_JOB_WORKERS"] == "false"
    job_labels = jobs["spec"]["template"]["metadata"]["labels"]
    assert jobs["spec"]["selector"]["matchLabels"].items() <= job_labels.items()
    for selector in (
        one(objects, "Service")["spec"]["selector"],
        one(objects, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
        server["spec"]["selector"]["matchLabels"],
    ):
        assert not selector.items() <= job_labels.items()


def test_sentinels_and_wait_reach_the_service() -> None:
    """Through sentinels the URL is optional (replicas and workers are allowed); WAIT is
    rendered as settings the service reads back."""
    values = {
        "redis": {
            "sentinels": ["redis-node-0.redis:26379", "redis-node-1.redis:26379"],
            "sentinelMaster": "games",
            "waitReplicas": 1,
            "waitTimeout": 0.5,
            "maxConnections": 12,
        },
        "replicaCount": 3,
    }
    objects = render(values)
    validate_all(objects)
    env = configmap_env(objects)
    assert env["WEB_CONCURRENCY"] == "2"  # on Redis
    assert "TEN_REDIS_URL" not in env_of(
        one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    )
    settings = Settings.from_env(env)
    assert settings.redis.sentinels == (
        ("redis-node-0.redis", 26379),
        ("redis-node-1.redis", 26379),
    )
    assert settings.redis.sentinel_master == "games"
    assert (settings.redis.wait_replicas, settings.redis.wait_timeout) == (1, 0.5)
    assert settings.redis.url is not None  # the service is on Redis, not the embedded store
    assert settings.redis.max_connections == 12
    defaults = Settings.from_env(configmap_env(render({}))).redis
    assert (defaults.wait_replicas, defaults.max_connections) == (0, None)


# ---------------------------------------------------------------- refused values


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replicaCount": 3}, "replicaCount > 1 or autoscaling.enabled needs Redis"),
        ({"autoscaling": {"enabled": True}}, "replicaCount > 1 or autoscaling.enabled needs Redis"),
        ({"workers": 2}, "workers > 1 needs Redis"),
        (
            {**REDIS, "autoscaling": {"enabled": True, "minReplicas": 5, "maxReplicas": 2}},
            "minReplicas must not exceed",
        ),
        (
            {**REDIS, "podDisruptionBudget": {"enabled": True, "maxUnavailable": None}},
            "podDisruptionBudget.enabled needs minAvailable or maxUnavailable",
        ),
        ({"database": {"host": "pg"}}, "database.host is set but no password"),
        (
            {"redis": {"sentinels": ["s:26379"], "cluster": True, "url": "redis://c:6379"}},
            "redis.sentinels or redis.cluster, not both",
        ),
        ({"redis": {"waitReplicas": 1}}, "redis.waitReplicas needs Redis"),
        ({"jobWorkers": {"enabled": True}}, "jobWorkers.enabled needs Redis"),
        (
            {"redis": {"url": "redis://c:6379", "cluster": True, "waitReplicas": 1}},
            "redis.waitReplicas needs Redis",
        ),
    ],
)
def test_values_that_would_lose_games_fail_to_render(values: dict[str, Any], message: str) -> None:
    with pytest.raises(helm.HelmRenderError) as caught:
        render(values)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("values", "where"),
    [
        ({"replicaCount": "three"}, "/replicaCount"),
        ({"replicas": 3}, "'replicas' not allowed"),
        ({"settings": {"rateLimit": "600 per minute"}}, "/settings/rateLimit"),
        ({"settings": {"finishedTtl": 0}}, "/settings/finishedTtl"),
        ({"redis": {"url": "http://redis:6379"}}, "/redis/url"),
        ({"redis": {"sentinels": ["s1:26379,s2:26379"]}}, "/redis/sentinels/0"),
        ({"redis": {"waitReplicas": -1}}, "/redis/waitReplicas"),
        ({"database": {"url": "mysql://db/ten"}}, "/database/url"),
        ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
        ({"ingress": {"hosts": [{"host": "x", "paths": [{"path": "/"}]}]}}, "pathType"),
        ({"workers": 0}, "/workers"),
        ({"jobWorkers": {"replicas": 0}}, "/jobWorkers/replicas"),
    ],
)
def test_bad_values_fail_against_the_schema(values: dict[str, Any], where: str) -> None:
    with pytest.raises(helm.HelmValuesError) as caught:
        render(values)
    assert "values don't meet the specifications of the schema" in str(caught.value)
    assert where in str(caught.value)


# ---------------------------------------------------------------- documentation

OPAQUE_VALUES = {"resources", "annotations", "labels", "podAnnotations", "podLabels"} | {
    "nodeSelector", "affinity", "probes", "passwordSecret",
}  # fmt: skip


def value_paths(values: dict[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in values.items():
        if isinstance(value, dict) and value and key not in OPAQUE_VALUES:
            yield from value_paths(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def test_every_value_is_documented_in_the_chart_readme() -> None:
    readme = (ROOT / "helm" / "README.md").read_text()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    missing = []
    for path in value_paths(values):
        parent, _, leaf = path.rpartition(".")
        documented = f"`{path}`" in readme or f"`{path}." in readme
        documented |= bool(parent) and f"`{parent}." in readme and f"`.{leaf}`" in readme
        if not documented:
            missing.append(path)
    assert missing == []
    # and the schema knows every value (additionalProperties: false does the rest)
    with helm.Chart.load(CHART) as chart:
        assert set(chart.schema["properties"]) == set(values) | {"global"}  # for parent charts
