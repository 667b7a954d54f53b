"""The chart renders, lints and validates offline, and its wiring matches the code.

Profiles: `minimal` is the chart's defaults plus what a user must set (the README's
`helm install`); `scaled` is a production-like install (autoscaled gateway and webhook
dispatchers, ingress with custom domains, an existing Secret).
"""

from __future__ import annotations

import importlib.metadata
import re

import helm_python
import kubernetes_validate
import pytest

from .chartkit import (CHART, KUBERNETES_VERSION, RELEASE, REPO, REQUIRED, chart_with_stub_dependencies, load_values_yaml,
                      merged, render)
from common.app import OPEN_PATHS

FULLNAME = f"{RELEASE}-feedback"
SECRET_KEYS = ("FEEDBACK_ADMIN_TOKEN", "INTERNAL_SECRET", "MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS")
SHARED_ENV = (*SECRET_KEYS, "MONGODB_DB_PREFIX", "KAFKA_PARTITIONS", "PUBLIC_BASE_URL", "MAX_BODY_BYTES",
              "PROXY_CONNECT_TIMEOUT", "PROXY_READ_TIMEOUT", "AUTH_CACHE_SECONDS", "LOG_LEVEL")

MINIMAL = REQUIRED
SCALED = merged(REQUIRED, {
    "secrets": {"adminToken": "operator-token-0123456789", "internalSecret": "internal-secret-0123456789"},
    "config": {"publicBaseUrl": "https://feedback.example.com", "logLevel": "WARNING"},
    "gateway": {"autoscaling": {"enabled": True, "minReplicas": 3, "maxReplicas": 20}},
    "defaults": {"api": {"replicas": 3, "webConcurrency": 4}},
    "services": {"webhooks": {"env": {"LOG_LEVEL": "DEBUG"}, "workers": {"dispatcher": {
        "autoscaling": {"enabled": True, "minReplicas": 4, "maxReplicas": 12, "targetCPUUtilizationPercentage": 50,
                        "extraMetrics": [{"type": "External", "external": {
                            "metric": {"name": "kafka_consumergroup_lag", "selector": {"matchLabels": {"topic": "feedback.posts"}}},
                            "target": {"type": "AverageValue", "averageValue": "100"}}}]}}}}},
    "ingress": {"enabled": True, "className": "nginx", "hosts": ["feedback.example.com"],
                "customDomains": ["feedback.acme.com", "ideas.globex.io"],
                "tls": [{"secretName": "feedback-tls", "hosts": ["feedback.example.com", "feedback.acme.com"]}]},
    "networkPolicy": {"gatewayFrom": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}]},
})


@pytest.fixture(scope="module")
def minimal():
    return render(MINIMAL)


@pytest.fixture(scope="module")
def scaled():
    return render(SCALED)


@pytest.fixture(scope="module", params=["minimal", "scaled"])
def profile(request):
    return request.getfixturevalue(request.param)


def chart_components(values: dict) -> dict[str, tuple[str, str, str]]:
    """{deployment name: (role, service, worker)} that the values ask for, by their meaning."""
    wanted = {f"{FULLNAME}-gateway": ("gateway", "", "")}
    for service, spec in values["services"].items():
        if spec.get("enabled", True) is False:
            continue
        if (spec.get("api") or {}).get("enabled", True) is not False:
            wanted[f"{FULLNAME}-{service}"] = ("api", service, "")
        for worker, w in (spec.get("workers") or {}).items():
            if (w or {}).get("enabled", True) is not False:
                wanted[f"{FULLNAME}-{service}-{worker}"] = ("worker", service, worker)
    return wanted


def container(workload: dict) -> dict:
    (c,) = workload["spec"]["template"]["spec"]["containers"]
    return c


# -- the chart as Helm sees it ---------------------------------------------------------------


def test_lint_reports_no_errors():
    report = helm_python.lint(CHART, REQUIRED, kube_version=f"v{KUBERNETES_VERSION}", namespace="feedback")
    assert report["errors"] == []
    warnings = [m["error"] for m in report["messages"] if m["severity"] >= 2]
    # The bundled MongoDB/Kafka charts are declared but cannot be downloaded here.
    assert warnings == ["chart directory is missing these dependencies: mongodb,kafka"], warnings


def test_dependencies_are_declared_behind_conditions():
    deps = {d["name"]: d for d in helm_python.Chart.load(CHART).metadata["dependencies"]}
    assert deps["mongodb"]["condition"] == "mongodb.enabled"
    assert deps["kafka"]["condition"] == "kafka.enabled"
    assert {d["status"] for d in helm_python.dependency_list(CHART)} == {"missing"}


@pytest.mark.parametrize("profile_name", ["minimal", "scaled"])
def test_every_manifest_is_valid_kubernetes(profile_name, request):
    rendered = request.getfixturevalue(profile_name)
    assert len(rendered.manifests) > 20
    for manifest in rendered.manifests:
        try:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as ex:
            pytest.fail(f"{manifest['kind']}/{manifest['metadata']['name']}: {'.'.join(map(str, ex.path))}: {ex.message}")


@pytest.mark.parametrize("typo", [
    {"gateway": {"replica": 3}},
    {"services": {"webhooks": {"workers": {"dispatcher": {"replcias": 4}}}}},
    {"ingres": {"enabled": True}},
    {"secrets": {"mongoUri": "mongodb://m"}},
    {"services": {"Posts": {"api": {}}}},
    {"gateway": {"replicas": "three"}},
])
def test_schema_rejects_typos(typo):
    with pytest.raises(helm_python.HelmValuesError):
        render(merged(REQUIRED, typo))


def test_external_mongodb_and_kafka_are_required():
    with pytest.raises(helm_python.HelmRenderError, match="secrets.mongodbUri is required"):
        render({"secrets": {"kafkaBootstrapServers": "kafka:9092"}})
    with pytest.raises(helm_python.HelmRenderError, match="secrets.kafkaBootstrapServers is required"):
        render({"secrets": {"mongodbUri": "mongodb://m:27017/?replicaSet=rs0"}})


def test_bundled_dependencies_need_helm_dependency_build():
    with pytest.raises(helm_python.HelmRenderError, match="helm dependency build"):
        render(merged(REQUIRED, {"mongodb": {"enabled": True}}))


# -- components and the commands that run them --------------------------------------------------


def test_every_component_in_values_gets_a_deployment(profile):
    values = merged(load_values_yaml(), MINIMAL)
    assert profile.names("Deployment") == set(chart_components(values))


def test_every_discovered_service_and_worker_is_deployed(minimal):
    """What `feedback services` lists in this environment must all run in the cluster, and
    every worker the chart runs for a discovered service must exist in its code."""
    from common.plugins import load_services

    values = load_values_yaml()
    deployed = chart_components(values)
    for name, spec in load_services().items():
        assert name in values["services"], f"service '{name}' is discovered but not in values.yaml"
        assert f"{FULLNAME}-{name}" in deployed
        chart_workers = set(values["services"][name].get("workers") or {})
        assert chart_workers == set(spec.worker_names()), f"{name}: chart {sorted(chart_workers)} vs code {spec.worker_names()}"


def test_commands_are_the_platforms_entry_points(profile):
    scripts = {ep.name for ep in importlib.metadata.entry_points(group="console_scripts")}
    components = chart_components(load_values_yaml())
    for deployment in profile.of_kind("Deployment"):
        role, service, worker = components[deployment["metadata"]["name"]]
        c = container(deployment)
        assert c["command"][0] in scripts
        argv = c["command"] + c["args"]
        if role == "gateway":
            assert argv == ["feedback-gateway", "--bind", "0.0.0.0:8080"]
        elif role == "api":
            assert argv == ["feedback", "serve", service, "--bind", "0.0.0.0:8000"]
        else:
            assert argv == ["feedback", "worker", service, worker]
    (job,) = profile.of_kind("Job")
    assert container(job)["command"] + container(job)["args"] == ["feedback", "init"]


def test_probes_point_at_the_apps_open_health_paths(profile):
    """APIs and the gateway are probed on /healthz and /readyz, which every app serves without
    a gateway signature; workers serve no HTTP and get no HTTP probe."""
    for deployment in profile.of_kind("Deployment"):
        c = container(deployment)
        if not c.get("ports"):
            assert not any(k in c for k in ("livenessProbe", "readinessProbe", "startupProbe")), deployment["metadata"]["name"]
            continue
        assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert c["startupProbe"]["httpGet"]["path"] == "/healthz"
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            assert c[probe]["httpGet"]["path"] in OPEN_PATHS
            assert c[probe]["httpGet"]["port"] == c["ports"][0]["name"]


# -- configuration and secrets -------------------------------------------------------------------


def known_settings() -> set[str]:
    """Environment variables the code reads: every config module's names."""
    names = set()
    for path in [REPO / "libs/common/common/config.py", *REPO.glob("services/*/*/config.py"), *REPO.glob("gateway/gateway/config.py")]:
        names |= set(re.findall(r"\"([A-Z][A-Z0-9_]{2,})\"", path.read_text()))
    return names


def test_every_component_gets_the_shared_settings(profile):
    for workload in profile.workloads():
        env = profile.env_of(workload)
        missing = [k for k in SHARED_ENV if not env.get(k)]
        assert not missing, f"{workload['metadata']['name']} lacks {missing}"
        if container(workload).get("ports"):
            assert env["WEB_CONCURRENCY"] and env["WEB_THREADS"]


def test_every_variable_the_chart_sets_is_read_by_the_code(profile):
    known = known_settings()
    for workload in profile.workloads():
        for name in profile.env_of(workload):
            assert name in known or name.startswith("SERVICE_URL_"), f"{workload['metadata']['name']} sets unknown {name}"


def test_service_urls_reach_each_api_through_its_service(profile):
    deployments = {d["metadata"]["name"]: d for d in profile.of_kind("Deployment")}
    env = profile.env_of(deployments[f"{FULLNAME}-gateway"])
    urls = {k[len("SERVICE_URL_"):].lower(): v for k, v in env.items() if k.startswith("SERVICE_URL_")}
    apis = {n[len(FULLNAME) + 1:] for n, d in deployments.items() if container(d).get("ports") and not n.endswith("-gateway")}
    assert set(urls) == apis
    for name, url in urls.items():
        host, port = re.fullmatch(r"http://([a-z0-9-]+):(\d+)", url).groups()
        service = profile.get("Service", host)
        pod_labels = deployments[f"{FULLNAME}-{name}"]["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= pod_labels.items()
        (port_spec,) = service["spec"]["ports"]
        assert port_spec["port"] == int(port) and port_spec["targetPort"] == "http"
        assert container(deployments[f"{FULLNAME}-{name}"])["ports"][0]["containerPort"] == 8000


def test_secrets_never_appear_in_configmaps_or_plain_env():
    rendered = render(SCALED)  # a chart-managed Secret with known values
    secret_values = [v for k, v in rendered._data("Secret", FULLNAME).items()]
    assert len(secret_values) == 4
    for cm in rendered.of_kind("ConfigMap"):
        assert not set(cm["data"]) & set(SECRET_KEYS), cm["metadata"]["name"]
        for value in cm["data"].values():
            assert not any(s in value for s in secret_values), cm["metadata"]["name"]
    for workload in rendered.workloads():
        for var in container(workload).get("env", []):
            if var["name"] in SECRET_KEYS:
                assert "secretKeyRef" in var["valueFrom"], var
            else:
                assert not any(s in str(var.get("value", "")) for s in secret_values), var


def test_generated_secrets_are_the_same_for_the_release_and_the_init_job(minimal):
    release, init = minimal._data("Secret", FULLNAME), minimal._data("Secret", f"{FULLNAME}-init")
    assert release == init
    assert len(release["FEEDBACK_ADMIN_TOKEN"]) >= 32 and release["FEEDBACK_ADMIN_TOKEN"] != release["INTERNAL_SECRET"]


def test_existing_secret_replaces_the_charts():
    rendered = render(merged(REQUIRED, {"secrets": {"existingSecret": "feedback-prod"}}))
    assert rendered.of_kind("Secret") == []
    for workload in rendered.workloads():
        refs = {v["valueFrom"]["secretKeyRef"]["name"] for v in container(workload)["env"] if "valueFrom" in v}
        assert refs == {"feedback-prod"}, workload["metadata"]["name"]
        assert {v["name"] for v in container(workload)["env"]} >= set(SECRET_KEYS)


def test_component_env_overrides_service_env_which_extends_the_shared(scaled):
    env = scaled.env_of(scaled.get("Deployment", f"{FULLNAME}-webhooks-dispatcher"))
    assert env["LOG_LEVEL"] == "DEBUG"  # services.webhooks.env wins over config.logLevel
    assert scaled.env_of(scaled.get("Deployment", f"{FULLNAME}-posts"))["LOG_LEVEL"] == "WARNING"
    assert scaled.env_of(scaled.get("Deployment", f"{FULLNAME}-posts"))["WEB_CONCURRENCY"] == "4"


def test_public_base_url_follows_the_ingress_host():
    rendered = render(merged(REQUIRED, {"ingress": {"enabled": True, "hosts": ["api.feedback.example"]}}))
    assert rendered._data("ConfigMap", FULLNAME)["PUBLIC_BASE_URL"] == "https://api.feedback.example"


# -- scaling --------------------------------------------------------------------------------------


def test_dispatcher_replicas_follow_values(minimal):
    dispatcher = minimal.get("Deployment", f"{FULLNAME}-webhooks-dispatcher")
    assert dispatcher["spec"]["replicas"] == 2
    assert f"{FULLNAME}-webhooks-dispatcher" not in minimal.names("HorizontalPodAutoscaler")
    rendered = render(merged(REQUIRED, {"services": {"webhooks": {"workers": {"dispatcher": {"replicas": 7}}}}}))
    assert rendered.get("Deployment", f"{FULLNAME}-webhooks-dispatcher")["spec"]["replicas"] == 7
    assert rendered.get("Deployment", f"{FULLNAME}-webhooks-relay")["spec"]["replicas"] == 1


def test_dispatcher_hpa_follows_values(scaled):
    dispatcher = scaled.get("Deployment", f"{FULLNAME}-webhooks-dispatcher")
    assert "replicas" not in dispatcher["spec"]  # the HPA owns it
    hpa = scaled.get("HorizontalPodAutoscaler", f"{FULLNAME}-webhooks-dispatcher")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": dispatcher["metadata"]["name"]}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (4, 12)
    metrics = hpa["spec"]["metrics"]
    assert metrics[0]["resource"] == {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}
    assert metrics[1]["external"]["metric"]["name"] == "kafka_consumergroup_lag"


def test_gateway_has_pdb_and_optional_hpa(minimal, scaled):
    for rendered in (minimal, scaled):
        pdb = rendered.get("PodDisruptionBudget", f"{FULLNAME}-gateway")
        pods = rendered.get("Deployment", f"{FULLNAME}-gateway")["spec"]["template"]["metadata"]["labels"]
        assert pdb["spec"]["selector"]["matchLabels"].items() <= pods.items()
        assert pdb["spec"]["maxUnavailable"] == 1
    assert minimal.names("HorizontalPodAutoscaler") == set()
    assert scaled.names("HorizontalPodAutoscaler") == {f"{FULLNAME}-gateway", f"{FULLNAME}-webhooks-dispatcher"}
    assert scaled.get("HorizontalPodAutoscaler", f"{FULLNAME}-gateway")["spec"]["minReplicas"] == 3


def test_adding_a_service_or_worker_is_a_values_change():
    rendered = render(merged(REQUIRED, {"services": {
        "search": {"api": {"replicas": 1}, "workers": {"indexer": {"replicas": 3}}},
        "domains": {"enabled": False},
        "posts": {"workers": {"consumer": {"enabled": False}}},
    }}))
    names = rendered.names("Deployment")
    assert {f"{FULLNAME}-search", f"{FULLNAME}-search-indexer"} <= names
    assert container(rendered.get("Deployment", f"{FULLNAME}-search-indexer"))["args"] == ["worker", "search", "indexer"]
    assert not any(n.startswith(f"{FULLNAME}-domains") for n in names)
    assert f"{FULLNAME}-posts-consumer" not in names and f"{FULLNAME}-posts-relay" in names
    config = rendered._data("ConfigMap", FULLNAME)
    assert config["SERVICE_URL_SEARCH"] == f"http://{FULLNAME}-search:8000" and "SERVICE_URL_DOMAINS" not in config


# -- security and reachability --------------------------------------------------------------------


def test_every_pod_runs_restricted(profile):
    dockerfile = (REPO / "Dockerfile").read_text()
    image_user = re.search(r"^USER (\d+)", dockerfile, re.M).group(1)
    for workload in profile.workloads():
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert str(pod["securityContext"]["runAsUser"]) == image_user
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        c = container(workload)
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        assert {"name": "tmp", "mountPath": "/tmp"} in c["volumeMounts"]
        assert any(v["name"] == "tmp" and "emptyDir" in v for v in pod["volumes"])
        assert c["resources"]["requests"] and c["resources"]["limits"]


def test_network_policies_expose_only_the_gateway(profile):
    policies = {p["metadata"]["name"]: p for p in profile.of_kind("NetworkPolicy")}
    assert set(policies) == profile.names("Deployment")
    for name, policy in policies.items():
        pods = profile.get("Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert policy["spec"]["podSelector"]["matchLabels"] == pods
        rules = policy["spec"]["ingress"]
        if name.endswith("-gateway"):
            assert rules[0]["ports"] == [{"port": "http", "protocol": "TCP"}]
        elif container(profile.get("Deployment", name)).get("ports"):
            (rule,) = rules
            peers = rule["from"]
            assert peers[0] == {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "feedback", "app.kubernetes.io/instance": RELEASE}}}
        else:
            assert rules == [], f"{name} is a worker and takes no traffic"


def test_ingress_routes_api_host_and_custom_domains_to_the_gateway(scaled):
    ingress = scaled.get("Ingress", f"{FULLNAME}-gateway")
    hosts = [r["host"] for r in ingress["spec"]["rules"]]
    assert hosts == ["feedback.example.com", "feedback.acme.com", "ideas.globex.io"]
    gateway_ports = {p["name"] for p in scaled.get("Service", f"{FULLNAME}-gateway")["spec"]["ports"]}
    for rule in ingress["spec"]["rules"]:
        backend = rule["http"]["paths"][0]["backend"]["service"]
        assert backend["name"] == f"{FULLNAME}-gateway" and backend["port"]["name"] in gateway_ports
    assert ingress["spec"]["ingressClassName"] == "nginx" and ingress["spec"]["tls"][0]["secretName"] == "feedback-tls"


def test_init_job_is_a_hook_that_runs_before_the_services(minimal):
    job = minimal.get("Job", f"{FULLNAME}-init")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    # Its ConfigMap and Secret are hooks too, created before it (pre-install runs before
    # the release's own resources exist).
    for kind in ("ConfigMap", "Secret"):
        copy = minimal.get(kind, f"{FULLNAME}-init")
        assert copy["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
        assert int(copy["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(job["metadata"]["annotations"]["helm.sh/hook-weight"])
    refs = {s.get("configMapRef", {}).get("name") for s in container(job)["envFrom"]}
    assert refs == {f"{FULLNAME}-init"}
    assert "serviceAccountName" not in job["spec"]["template"]["spec"]


def test_bundled_mongodb_and_kafka_wiring(tmp_path):
    chart = chart_with_stub_dependencies(tmp_path)
    rendered = render({"mongodb": {"enabled": True}, "kafka": {"enabled": True}}, chart=chart)
    assert set(rendered._data("Secret", FULLNAME)) == {"FEEDBACK_ADMIN_TOKEN", "INTERNAL_SECRET"}
    for workload in rendered.workloads():
        env = container(workload)["env"]
        names = [v["name"] for v in env]
        assert names.index("MONGODB_ROOT_PASSWORD") < names.index("MONGODB_URI")  # $(VAR) needs it first
        uri = next(v["value"] for v in env if v["name"] == "MONGODB_URI")
        assert uri.startswith(f"mongodb://root:$(MONGODB_ROOT_PASSWORD)@{RELEASE}-mongodb-0.{RELEASE}-mongodb-headless.")
        assert "replicaSet=rs0" in uri and uri.count(",") == 2
        assert next(v["value"] for v in env if v["name"] == "KAFKA_BOOTSTRAP_SERVERS") == f"{RELEASE}-kafka:9092"
    # The subcharts' pods come with the release, so the init hook runs after install.
    assert rendered.get("Job", f"{FULLNAME}-init")["metadata"]["annotations"]["helm.sh/hook"] == "post-install,pre-upgrade"


def test_notes_say_how_to_reach_the_gateway_and_create_a_workspace(minimal, scaled):
    assert f"svc/{FULLNAME}-gateway" in minimal.notes and "/v1/workspaces" in minimal.notes
    assert "https://feedback.example.com/v1/openapi.json" in scaled.notes
    assert "FEEDBACK_ADMIN_TOKEN" in minimal.notes


def test_each_gateway_process_gets_its_share_of_the_rate_limits(minimal, scaled):
    """An Ingress spreads a client's requests over every gateway process, so each enforces
    the release-wide quota divided among them (pods x workers; minReplicas with autoscaling)."""
    for rendered, processes in ((minimal, 2 * 2), (scaled, 3 * 2)):
        (gateway,) = [w for w in rendered.workloads() if w["metadata"]["name"] == f"{FULLNAME}-gateway"]
        env = rendered.env_of(gateway)
        assert env["RATE_LIMIT_WRITES"] == f"{-(-30 // processes)}/60"
        assert env["RATE_LIMIT_WRITES_PER_ADDRESS"] == f"{-(-60 // processes)}/60"
        assert env["RATE_LIMIT_AUTH_FAILURES"] == f"{-(-20 // processes)}/300"
        assert env["TRUSTED_PROXIES"].startswith("10.0.0.0/8")
    off = render(merged(MINIMAL, {"gateway": {"rateLimits": {"writes": "0/60"}}}))
    (gateway,) = [w for w in off.workloads() if w["metadata"]["name"] == f"{FULLNAME}-gateway"]
    assert off.env_of(gateway)["RATE_LIMIT_WRITES"] == "0/60"


def test_the_board_site_and_the_mcp_server_call_the_api_through_the_gateways_service(minimal):
    (web,) = [w for w in minimal.workloads() if w["metadata"]["name"] == f"{FULLNAME}-web"]
    assert minimal.env_of(web)["WEB_API_URL"] == f"http://{FULLNAME}-gateway:80"
    (mcp,) = [w for w in minimal.workloads() if w["metadata"]["name"] == f"{FULLNAME}-mcp"]
    assert minimal.env_of(mcp)["MCP_API_URL"] == f"http://{FULLNAME}-gateway:80"
