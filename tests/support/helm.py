"""The Helm chart rendered with `helm template` and validated against the Kubernetes schemas
(the deploy tier's chart and identity tests)."""

from __future__ import annotations

from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from tests.servers import ROOT

CHART = ROOT / "helm" / "ten"


PRODUCTION = CHART / "ci" / "production-values.yaml"


# the chart's kubeVersion floor (Chart.yaml) and the newest schemas kubernetes-validate ships
KUBE_VERSIONS = ("1.25.0", kubernetes_validate.utils.latest_version())


# kinds of CRDs whose schemas kubernetes-validate does not ship (checked field by field below)
CRD_KINDS = {("monitoring.coreos.com/v1", "ServiceMonitor")}


Manifests = dict[tuple[str, str], dict[str, Any]]


def render(values: dict[str, Any] | None = None, *, release: str = "ten") -> Manifests:
    """The chart's objects as {(kind, name): object}, as `helm install` would create them."""
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values or {}, name=release, namespace="games", is_install=True)
    objects: Manifests = {}
    for path, text in files.items():
        if path.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                key = (doc["kind"], doc["metadata"]["name"])
                assert key not in objects, f"{key} rendered twice"
                objects[key] = doc
    return objects


def production_values() -> dict[str, Any]:
    return yaml.safe_load(PRODUCTION.read_text())


def one(objects: Manifests, kind: str) -> dict[str, Any]:
    found = [obj for (k, _), obj in objects.items() if k == kind]
    assert len(found) == 1, (kind, sorted(objects))
    return found[0]


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def validate_all(objects: Manifests) -> None:
    for obj in objects.values():
        if (obj["apiVersion"], obj["kind"]) in CRD_KINDS:
            continue
        for version in KUBE_VERSIONS:
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{obj['kind']}/{obj['metadata']['name']} on {version}: {exc}")


def configmap_env(objects: Manifests) -> dict[str, str]:
    return one(objects, "ConfigMap")["data"]
