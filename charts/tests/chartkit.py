"""Render the chart offline and read what it gives each container.

Rendering uses Helm's own Go SDK through helm-python-sdk (no helm binary, no cluster);
validation uses kubernetes-validate's bundled schemas of one pinned Kubernetes version.
"""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path

import helm_python
import yaml

CHART = Path(__file__).resolve().parents[1] / "feedback"
REPO = CHART.parents[1]
# The Kubernetes version manifests are validated against (and the chart is linted for).
KUBERNETES_VERSION = "1.30.0"
RELEASE = "rel"
NAMESPACE = "feedback"

# What a user must set (the README's `helm install` snippet): external MongoDB and Kafka.
REQUIRED = {
    "secrets": {
        "mongodbUri": "mongodb://feedback:pw@mongo-0.mongo:27017,mongo-1.mongo:27017/?replicaSet=rs0",
        "kafkaBootstrapServers": "kafka-0.kafka:9092,kafka-1.kafka:9092",
    }
}


def merged(*layers: dict) -> dict:
    """Deep-merge values layers, later ones winning (as repeated `-f` files do)."""
    out: dict = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = merged(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
    return out


@dataclass
class Rendered:
    """Every manifest of one render, with lookups by kind and name."""

    manifests: list[dict]
    notes: str

    def of_kind(self, kind: str) -> list[dict]:
        return [m for m in self.manifests if m["kind"] == kind]

    def get(self, kind: str, name: str) -> dict:
        found = [m for m in self.of_kind(kind) if m["metadata"]["name"] == name]
        assert found, f"no {kind} named {name}; have {[m['metadata']['name'] for m in self.of_kind(kind)]}"
        return found[0]

    def names(self, kind: str) -> set[str]:
        return {m["metadata"]["name"] for m in self.of_kind(kind)}

    def workloads(self) -> list[dict]:
        """Deployments and Jobs: everything that runs a container."""
        return self.of_kind("Deployment") + self.of_kind("Job")

    def env_of(self, workload: dict) -> dict[str, str]:
        """The container's environment as Kubernetes would give it: envFrom ConfigMaps and
        Secrets, then env (values, configMapKeyRef, secretKeyRef; $(VAR) expanded)."""
        (container,) = workload["spec"]["template"]["spec"]["containers"]
        env: dict[str, str] = {}
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                env.update(self._data("ConfigMap", source["configMapRef"]["name"]))
            else:
                env.update(self._data("Secret", source["secretRef"]["name"]))
        for var in container.get("env", []):
            if "value" in var:
                env[var["name"]] = _expand(str(var["value"]), env)
            elif "secretKeyRef" in var["valueFrom"]:
                ref = var["valueFrom"]["secretKeyRef"]
                env[var["name"]] = self._data("Secret", ref["name"])[ref["key"]]
            elif "configMapKeyRef" in var["valueFrom"]:
                ref = var["valueFrom"]["configMapKeyRef"]
                env[var["name"]] = self._data("ConfigMap", ref["name"])[ref["key"]]
            else:
                raise AssertionError(f"cannot resolve env {var} offline")
        return env

    def _data(self, kind: str, name: str) -> dict[str, str]:
        obj = self.get(kind, name)
        return {**obj.get("data", {}), **obj.get("stringData", {})}


def _expand(value: str, env: dict[str, str]) -> str:
    for name, known in env.items():
        value = value.replace(f"$({name})", known)
    return value


def render(values: dict | None = None, chart: Path = CHART, release: str = RELEASE) -> Rendered:
    with helm_python.Chart.load(chart) as loaded:
        files = loaded.render(values or {}, name=release, namespace=NAMESPACE)
    manifests, notes = [], ""
    for path, text in sorted(files.items()):
        if path.endswith("NOTES.txt"):
            notes = text
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                doc.setdefault("metadata", {})["annotations"] = doc["metadata"].get("annotations") or {}
                manifests.append(doc)
    return Rendered(manifests, notes)


def chart_with_stub_dependencies(tmp: Path) -> Path:
    """A copy of the chart with empty stand-ins for the Bitnami subcharts (which cannot be
    downloaded here), so the bundled-mode wiring can be rendered."""
    copy_dir = tmp / "feedback"
    shutil.copytree(CHART, copy_dir)
    for dep in helm_python.Chart.load(CHART).metadata["dependencies"]:
        stub = copy_dir / "charts" / dep["name"]
        (stub / "templates").mkdir(parents=True)
        (stub / "Chart.yaml").write_text(
            f"apiVersion: v2\nname: {dep['name']}\nversion: {dep['version'].replace('x', '0')}\n"
        )
    return copy_dir


def load_values_yaml() -> dict:
    return yaml.safe_load((CHART / "values.yaml").read_text())
