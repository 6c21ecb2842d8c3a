"""The deployment files set only real settings, and everything a Pinecone deployment needs.

PyYAML is not a dependency, so the files are read with patterns for the few shapes they
use: ``NAME: value`` maps (compose environment, ConfigMap data), ``- name: NAME`` lists
(Deployment env), ``ENV NAME=value`` and ``NAME=value`` lines.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Metric

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.domain.tenants import grants_from_json
from retrieval.grpc.access import check_exposure
from retrieval.grpc.server import LIVENESS_SERVICE
from retrieval.grpc.settings import GrpcSettings
from retrieval.observability.metrics import ServiceMetrics
from retrieval.settings import SEARCH_VARIABLES, Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
MAPPING = re.compile(r"^\s+(RETRIEVAL_[A-Z0-9_]+):\s*(.*?)\s*$", re.MULTILINE)
ASSIGNED = re.compile(r"^#?\s*(RETRIEVAL_[A-Z0-9_]+)=(.*)$", re.MULTILINE)
DOCKER_ENV = re.compile(r"(RETRIEVAL_[A-Z0-9_]+)=(\S+)")
SECRET_REF = re.compile(r"-\s+name:\s+(RETRIEVAL_[A-Z0-9_]+)\s+valueFrom:\s+secretKeyRef:")

SETTINGS = {f"RETRIEVAL_{name.upper()}": name for name in Settings.model_fields.keys() - {"search"}}
SEARCH = {f"RETRIEVAL_{variable.upper()}": option for option, variable in SEARCH_VARIABLES.items()}
GRPC_SETTINGS = {f"RETRIEVAL_GRPC_{name.upper()}": name for name in GrpcSettings.model_fields}
REAL = SETTINGS.keys() | SEARCH.keys() | GRPC_SETTINGS.keys()
PINECONE_REQUIRED = {
    "RETRIEVAL_INDEX_BACKEND",
    "RETRIEVAL_EMBEDDER_BACKEND",
    "RETRIEVAL_PINECONE_API_KEY",
    "RETRIEVAL_PINECONE_INDEX_HOST",
    "RETRIEVAL_PINECONE_SPARSE_INDEX_HOST",
    "RETRIEVAL_MONGODB_URI",
}
SECRETS = {"RETRIEVAL_PINECONE_API_KEY", "RETRIEVAL_MONGODB_URI"}


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def mapping(path: Path) -> dict[str, str]:
    return {name: value.strip("\"'") for name, value in MAPPING.findall(read(path))}


def service_environment(compose: str) -> dict[str, str]:
    service = compose.split("\n  retrieval:\n", 1)[1].split("\nvolumes:", 1)[0]
    return {name: value.strip("\"'") for name, value in MAPPING.findall(service)}


def settings_from(environment: dict[str, str]) -> Settings:
    values = {SETTINGS[name]: value for name, value in environment.items() if name in SETTINGS}
    search = {SEARCH[name]: value for name, value in environment.items() if name in SEARCH}
    return Settings(_env_file=None, search=search, **values)


def grpc_settings_from(environment: dict[str, str]) -> GrpcSettings:
    values = {
        GRPC_SETTINGS[name]: value for name, value in environment.items() if name in GRPC_SETTINGS
    }
    return GrpcSettings(_env_file=None, **values)


def check_grpc_exposure(settings: GrpcSettings) -> None:
    """The server listens beyond loopback, with tokens, and so starts."""
    assert settings.host in ("[::]", "0.0.0.0")
    assert not settings.allow_unauthenticated
    check_exposure(settings.address, settings.authenticates, settings.allow_unauthenticated)


def check_pinecone_deployment(environment: dict[str, str]) -> None:
    assert environment.keys() >= PINECONE_REQUIRED
    settings = settings_from(environment)
    assert (settings.index_backend, settings.embedder_backend) == ("pinecone", "pinecone")
    connection = PineconeConnection(api_key="key", index_host=settings.pinecone_index_host)
    assert connection.open_index().host.startswith(("https://", "http://localhost"))


@pytest.mark.parametrize(
    "path",
    [
        DEPLOY / "compose.yaml",
        DEPLOY / "k8s" / "configmap.yaml",
        DEPLOY / "k8s" / "deployment.yaml",
        DEPLOY / "Dockerfile",
        ROOT / ".env.example",
    ],
    ids=lambda path: path.name,
)
def test_every_variable_set_is_a_real_setting(path: Path) -> None:
    named = set(re.findall(r"RETRIEVAL_[A-Z0-9_]+", read(path)))
    assert named, f"{path.name} sets no settings"
    assert named <= REAL, f"not settings: {sorted(named - REAL)}"


def test_compose_runs_the_service_on_pinecone_and_mongodb() -> None:
    compose = read(DEPLOY / "compose.yaml")
    environment = service_environment(compose)
    environment["RETRIEVAL_PINECONE_API_KEY"] = "key"
    check_pinecone_deployment(environment)
    assert environment["RETRIEVAL_MONGODB_URI"].startswith("mongodb://mongodb:")
    assert "image: mongo:7" in compose
    assert "image: ghcr.io/pinecone-io/pinecone-local" in compose
    assert compose.count('network_mode: "service:pinecone"') == 2


def test_kubernetes_takes_settings_from_the_configmap_and_secrets_from_a_secret() -> None:
    deployment = read(DEPLOY / "k8s" / "deployment.yaml")
    config = mapping(DEPLOY / "k8s" / "configmap.yaml")
    from_secrets = set(SECRET_REF.findall(deployment))
    assert from_secrets >= SECRETS
    assert not SECRETS & config.keys()
    check_pinecone_deployment(config | dict.fromkeys(from_secrets, "secret"))
    assert "name: retrieval-config" in deployment


def test_compose_serves_the_published_port_with_a_required_token() -> None:
    environment = service_environment(read(DEPLOY / "compose.yaml"))
    assert environment["RETRIEVAL_GRPC_AUTH_TOKEN"].startswith("${RETRIEVAL_GRPC_AUTH_TOKEN:?")
    check_grpc_exposure(grpc_settings_from(environment))


def test_kubernetes_serves_the_pod_network_with_the_mounted_tokens_file() -> None:
    deployment = read(DEPLOY / "k8s" / "deployment.yaml")
    settings = grpc_settings_from(mapping(DEPLOY / "k8s" / "configmap.yaml"))
    check_grpc_exposure(settings)
    assert settings.tokens_file is not None
    mount = re.search(r"- name: tokens\s+mountPath: (\S+)", deployment)
    assert mount
    assert settings.tokens_file.parent == Path(mount.group(1))
    assert re.search(r"- name: tokens\s+configMap:\s+name: retrieval-tokens\n", deployment)
    tokens = read(DEPLOY / "k8s" / "tokens.yaml")
    assert "name: retrieval-tokens" in tokens
    assert "- tokens.yaml" in read(DEPLOY / "k8s" / "kustomization.yaml")
    listed = tokens.split(f"  {settings.tokens_file.name}: |\n", 1)[1]
    grants_from_json(textwrap.dedent(listed), "tokens.yaml")


@pytest.mark.parametrize(
    ("probe", "service"), [("readinessProbe", None), ("livenessProbe", LIVENESS_SERVICE)]
)
def test_kubernetes_probes_use_the_grpc_health_service(probe: str, service: str | None) -> None:
    deployment = read(DEPLOY / "k8s" / "deployment.yaml")
    asked = re.search(rf"{probe}:\s+grpc:\s+port: 50051\n(\s+service: (\S+)\n)?", deployment)
    assert asked
    assert asked.group(2) == service
    assert "containerPort: 50051" in deployment
    assert "port: 50051" in read(DEPLOY / "k8s" / "service.yaml")


def test_the_image_is_multi_stage_non_root_without_the_embedded_extra() -> None:
    dockerfile = read(DEPLOY / "Dockerfile")
    assert len(re.findall(r"^FROM ", dockerfile, re.MULTILINE)) >= 2
    assert re.search(r"^USER (?!root|0\b)\S+", dockerfile, re.MULTILINE)
    assert 'ENTRYPOINT ["retrieval"]' in dockerfile
    assert 'CMD ["serve"]' in dockerfile
    installs = re.findall(r"^RUN uv sync .*$", dockerfile, re.MULTILINE)
    assert installs
    assert all("--no-dev" in line and "embedded" not in line for line in installs)
    assert "--all-extras" not in dockerfile
    environment = dict(DOCKER_ENV.findall(dockerfile))
    assert settings_from(environment).index_backend == "pinecone"


def test_env_example_lists_every_setting_once() -> None:
    listed = [name for name, _ in ASSIGNED.findall(read(ROOT / ".env.example"))]
    assert sorted(listed) == sorted(REAL)


def test_env_example_makes_a_pinecone_deployment() -> None:
    active = dict(
        re.findall(r"^(RETRIEVAL_[A-Z0-9_]+)=(.*)$", read(ROOT / ".env.example"), re.MULTILINE)
    )
    assert active.keys() == PINECONE_REQUIRED | {
        "RETRIEVAL_PINECONE_INDEX_NAME",
        "RETRIEVAL_PINECONE_SPARSE_INDEX_NAME",
    }
    check_pinecone_deployment(active | {"RETRIEVAL_PINECONE_API_KEY": "key"})


def test_the_readme_documents_every_setting() -> None:
    readme = read(DEPLOY / "README.md")
    missing = sorted(name for name in REAL if name not in readme)
    assert not missing, f"undocumented: {missing}"


def test_kubernetes_scrapes_the_metrics_port_the_service_serves() -> None:
    deployment = read(DEPLOY / "k8s" / "deployment.yaml")
    config = mapping(DEPLOY / "k8s" / "configmap.yaml")
    settings = settings_from(config)
    assert settings.metrics_port is not None
    assert settings.metrics_host == "0.0.0.0"
    port = str(settings.metrics_port)
    assert f'prometheus.io/port: "{port}"' in deployment
    assert 'prometheus.io/scrape: "true"' in deployment
    assert re.search(rf"- name: metrics\s+containerPort: {port}\b", deployment)
    assert re.search(rf"- name: metrics\s+port: {port}\b", read(DEPLOY / "k8s" / "service.yaml"))
    assert "port: metrics" in read(DEPLOY / "k8s" / "servicemonitor.yaml")


def test_the_dashboard_charts_every_metric_the_service_exports_and_no_other() -> None:
    dashboard = json.loads(read(DEPLOY / "grafana" / "retrieval-dashboard.json"))
    charted = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bretrieval_[a-z0-9_]+", target["expr"])
    }
    families = list(ServiceMetrics(CollectorRegistry()).registry.collect())
    exported = {name for family in families for name in sample_names(family)}
    assert charted <= exported, f"not exported: {sorted(charted - exported)}"
    uncharted = {family.name for family in families} - {
        re.sub(r"_(bucket|count|sum|total)$", "", name) for name in charted
    }
    assert not uncharted, f"exported but not charted: {sorted(uncharted)}"


def sample_names(family: Metric) -> set[str]:
    suffixes = {
        "counter": ("_total",),
        "gauge": ("",),
        "histogram": ("_bucket", "_count", "_sum"),
    }[family.type]
    return {family.name + suffix for suffix in suffixes}
