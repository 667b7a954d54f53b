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
from common.config import MIN_SECRET_LENGTH
from cryptography.fernet import Fernet

FULLNAME = f"{RELEASE}-feedback"
# One secret per purpose; each Deployment gets only those it uses (common.config.ROLE_SECRETS,
# and the services' own: the board site's cookie key, the keys of secrets at rest).
PURPOSE_SECRETS = ("FEEDBACK_ADMIN_TOKEN", "INTERNAL_SECRET", "GATEWAY_SECRET", "WEB_COOKIE_SECRET", "SECRETS_KEYS")
SECRET_KEYS = (*PURPOSE_SECRETS, "SMTP_URL", "MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS")
SHARED_ENV = ("MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS", "MONGODB_DB_PREFIX", "KAFKA_PARTITIONS", "PUBLIC_BASE_URL",
              "MAX_BODY_BYTES", "PROXY_CONNECT_TIMEOUT", "PROXY_READ_TIMEOUT", "AUTH_CACHE_SECONDS", "LOG_LEVEL")
# Which pods get which secret, beyond INTERNAL_SECRET for every service component.
SERVICE_SECRETS = {"web": {"WEB_COOKIE_SECRET"}, "workspaces": {"SECRETS_KEYS"}, "webhooks": {"SECRETS_KEYS"},
                   "people": {"SECRETS_KEYS"}}
# Settings that are secret without being a purpose key (a URL with a password), by service.
SERVICE_CONFIG_SECRETS = {"people": {"SMTP_URL"}, "notifications": {"SMTP_URL"}}
GATEWAY_SECRETS = {"FEEDBACK_ADMIN_TOKEN", "INTERNAL_SECRET", "GATEWAY_SECRET"}

MINIMAL = REQUIRED
SCALED = merged(REQUIRED, {
    "secrets": {"adminToken": "operator-token-0123456789-0123456789", "internalSecret": "internal-secret-0123456789-0123456789"},
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
    """Environment variables the code reads: every config module's names, and those a kit
    module reads by name (``env.get("NAME")``, e.g. the local launcher)."""
    names = set()
    for path in [REPO / "libs/common/common/config.py", *REPO.glob("services/*/*/config.py"), *REPO.glob("gateway/gateway/config.py")]:
        names |= set(re.findall(r"\"([A-Z][A-Z0-9_]{2,})\"", path.read_text()))
    for path in REPO.glob("libs/common/common/*.py"):
        names |= set(re.findall(r"\.get\(\s*\"([A-Z][A-Z0-9_]{2,})\"", path.read_text()))
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
    stored = rendered._data("Secret", FULLNAME)
    assert set(stored) == set(SECRET_KEYS)
    secret_values = [v for v in stored.values() if v]  # SMTP_URL is empty unless set
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


def test_generated_secrets_are_strong_distinct_and_the_init_job_gets_only_what_it_needs(minimal):
    release, init = minimal._data("Secret", FULLNAME), minimal._data("Secret", f"{FULLNAME}-init")
    assert init == {k: release[k] for k in ("MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS")}
    generated = [release[k] for k in PURPOSE_SECRETS]
    assert len(set(generated)) == len(generated), "one secret per purpose"
    assert all(len(v) >= MIN_SECRET_LENGTH for v in generated)
    keys = release["SECRETS_KEYS"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}=", keys), "one url-safe base64 key"
    assert Fernet(keys).decrypt(Fernet(keys).encrypt(b"sso")) == b"sso"
    other = render(MINIMAL)._data("Secret", FULLNAME)  # another install: other keys
    assert all(other[k] != release[k] for k in PURPOSE_SECRETS)


def test_each_pod_gets_only_the_secrets_it_uses(profile):
    """The operator token and the gateway's key reach the gateway alone; the internal secret every
    component that signs or verifies calls; the cookie key the board site; the keys of secrets at
    rest the workspaces and webhooks components; `feedback init` none of them."""
    components = chart_components(load_values_yaml())
    for workload in profile.workloads():
        name = workload["metadata"]["name"]
        refs = {v["valueFrom"]["secretKeyRef"]["key"] for v in container(workload)["env"]
                if "secretKeyRef" in v.get("valueFrom", {})}
        secrets = refs & set(PURPOSE_SECRETS)
        if workload["kind"] == "Job":
            assert secrets == set(), name
            continue
        role, service, _ = components[name]
        if role == "gateway":
            assert secrets == GATEWAY_SECRETS, name
        else:
            assert secrets == {"INTERNAL_SECRET", *SERVICE_SECRETS.get(service, ())}, name
        assert refs - secrets == {"MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS", *SERVICE_CONFIG_SECRETS.get(service, ())}, name
    gateway = profile.env_of(profile.get("Deployment", f"{FULLNAME}-gateway"))
    assert all(len(gateway[k]) >= MIN_SECRET_LENGTH for k in GATEWAY_SECRETS)


def test_user_given_secrets_must_be_long_enough():
    for value, setting in (("adminToken", "FEEDBACK_ADMIN_TOKEN"), ("gatewaySecret", "GATEWAY_SECRET"), ("webCookieSecret", "WEB_COOKIE_SECRET")):
        with pytest.raises(helm_python.HelmRenderError, match=rf"secrets.{value} \[{setting}\] must be at least 32 characters"):
            render(merged(REQUIRED, {"secrets": {value: "x" * 31}}))
        assert render(merged(REQUIRED, {"secrets": {value: "x" * 32}}))._data("Secret", FULLNAME)[setting] == "x" * 32
    with pytest.raises(helm_python.HelmValuesError):
        render(merged(REQUIRED, {"secrets": {"secretsKeys": "not-a-fernet-key"}}))
    two = f"{Fernet.generate_key().decode()},{Fernet.generate_key().decode()}"
    assert render(merged(REQUIRED, {"secrets": {"secretsKeys": two}}))._data("Secret", FULLNAME)["SECRETS_KEYS"] == two


def test_existing_secret_replaces_the_charts():
    rendered = render(merged(REQUIRED, {"secrets": {"existingSecret": "feedback-prod"}}))
    assert rendered.of_kind("Secret") == []
    used = set()
    for workload in rendered.workloads():
        refs = {v["valueFrom"]["secretKeyRef"]["name"] for v in container(workload)["env"] if "valueFrom" in v}
        assert refs == {"feedback-prod"}, workload["metadata"]["name"]
        used |= {v["valueFrom"]["secretKeyRef"]["key"] for v in container(workload)["env"] if "valueFrom" in v}
    assert used == set(SECRET_KEYS), "the keys docs/deployment.md says an existing Secret must hold"


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


# Egress: what every pod reaches, and the few that reach the outside (OpenID Connect providers,
# webhook receivers, SMTP servers), never the private, CGNAT or link-local ranges.
OUTSIDE = {"people", "people-mailer", "notifications-mailer", "webhooks-dispatcher"}
INSIDE_RANGES = {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"}
RELEASE_PODS = {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "feedback", "app.kubernetes.io/instance": RELEASE}}}


def egress_rules(rendered) -> dict[str, list[dict]]:
    return {p["metadata"]["name"].removeprefix(f"{FULLNAME}-"): p["spec"].get("egress")
            for p in rendered.of_kind("NetworkPolicy")}


def test_network_policies_restrict_egress(profile):
    reach_outside = set()
    for component, rules in egress_rules(profile).items():
        policy = profile.get("NetworkPolicy", f"{FULLNAME}-{component}")
        assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
        assert all(rule.get("to") or rule.get("ports") for rule in rules), "no rule opens everything"
        # Rules without peers are bounded by port: DNS, MongoDB and Kafka (wherever they run).
        unbounded = {(p["port"], p["protocol"]) for rule in rules if not rule.get("to") for p in rule["ports"]}
        assert unbounded == {(53, "UDP"), (53, "TCP"), (27017, "TCP"), (9092, "TCP")}, component
        # This release's pods: the service APIs and the gateway.
        assert {"to": [RELEASE_PODS], "ports": [{"port": 8000, "protocol": "TCP"}, {"port": 8080, "protocol": "TCP"}]} in rules
        blocks = [peer["ipBlock"] for rule in rules for peer in rule.get("to", []) if "ipBlock" in peer]
        if blocks:
            reach_outside.add(component)
            by_cidr = {b["cidr"]: set(b.get("except", [])) for b in blocks}
            assert set(by_cidr) == {"0.0.0.0/0", "::/0"}
            assert by_cidr["0.0.0.0/0"] >= INSIDE_RANGES and by_cidr["::/0"] >= {"fc00::/7", "fe80::/10"}
    assert reach_outside == OUTSIDE
    # Those are the components that call out: every mailer, the webhook sender, the people API.
    deployments = {d["metadata"]["name"].removeprefix(f"{FULLNAME}-"): container(d)["args"] for d in profile.of_kind("Deployment")}
    mailers = {name for name, args in deployments.items() if args[:1] == ["worker"] and args[-1] == "mailer"}
    assert mailers == {"people-mailer", "notifications-mailer"} and mailers <= OUTSIDE <= set(deployments)


def test_egress_follows_values(tmp_path):
    extra = {"to": [{"ipBlock": {"cidr": "10.0.5.10/32"}}], "ports": [{"port": 587, "protocol": "TCP"}]}
    everyone = {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]}
    mongo = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "mongo"}}}]
    rules = egress_rules(render(merged(REQUIRED, {"networkPolicy": {"egress": {
        "extra": {"people-mailer": [extra], "all": [everyone]}, "mongodbTo": mongo, "mongodbPorts": [27017, 27018],
        "internet": ["webhooks-dispatcher"]}}})))
    assert extra in rules["people-mailer"] and extra not in rules["notifications-mailer"]
    assert all(everyone in r for r in rules.values())
    assert {"to": mongo, "ports": [{"port": 27017, "protocol": "TCP"}, {"port": 27018, "protocol": "TCP"}]} in rules["posts"]
    outside = [c for c, r in rules.items() if any(p.get("ipBlock", {}).get("cidr") == "0.0.0.0/0" for rule in r for p in rule.get("to", []))]
    assert outside == ["webhooks-dispatcher"]

    # Bundled MongoDB and Kafka: their pods, by the subcharts' labels.
    bundled = egress_rules(render({"mongodb": {"enabled": True}, "kafka": {"enabled": True}},
                                  chart=chart_with_stub_dependencies(tmp_path)))
    for store, port in (("mongodb", 27017), ("kafka", 9092)):
        peer = {"podSelector": {"matchLabels": {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/name": store}}}
        assert {"ports": [{"port": port, "protocol": "TCP"}], "to": [peer]} in bundled["posts"]

    opened = render(merged(REQUIRED, {"networkPolicy": {"egress": {"enabled": False}}}))
    for policy in opened.of_kind("NetworkPolicy"):
        assert policy["spec"]["policyTypes"] == ["Ingress"] and "egress" not in policy["spec"]


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
    assert set(rendered._data("Secret", FULLNAME)) == {*PURPOSE_SECRETS, "SMTP_URL"}
    assert f"{FULLNAME}-init" not in rendered.names("Secret"), "init needs no secret then"
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


def gateway_env(rendered) -> dict:
    return rendered.env_of(rendered.get("Deployment", f"{FULLNAME}-gateway"))


def test_rate_limits_are_release_wide_quotas(minimal, scaled):
    """Every gateway process counts in one shared store, so each gets the quota as set, whatever
    the pod and worker count."""
    for rendered in (minimal, scaled):
        env = gateway_env(rendered)
        assert env["RATE_LIMIT_WRITES"] == "30/60" and env["RATE_LIMIT_WRITES_PER_ADDRESS"] == "60/60"
        assert env["RATE_LIMIT_AUTH_FAILURES"] == "20/300" and env["RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS"] == "100/300"
        reads = (env["RATE_LIMIT_READS"], env["RATE_LIMIT_READS_PER_ADDRESS"], env["RATE_LIMIT_READS_PER_WORKSPACE"])
        assert reads == ("600/60", "1200/60", "30000/60")
        assert "RATE_LIMIT_STORAGE" not in env, "empty: the platform's MongoDB"
    off = render(merged(MINIMAL, {"gateway": {"rateLimits": {"writes": "0/60"}}}))
    assert gateway_env(off)["RATE_LIMIT_WRITES"] == "0/60"
    redis = render(merged(MINIMAL, {"gateway": {"rateLimits": {"storage": "redis://limits-redis:6379/0"}}}))
    assert gateway_env(redis)["RATE_LIMIT_STORAGE"] == "redis://limits-redis:6379/0"
    with pytest.raises(helm_python.HelmValuesError):
        render(merged(MINIMAL, {"gateway": {"rateLimits": {"storage": "memory://"}}}))  # per process: not release-wide


def test_the_gateway_trusts_no_proxy_unless_named(minimal, scaled):
    """A forwarded address is believed only from proxies the operator names: not from private
    ranges (behind a LoadBalancer with the Cluster policy those are the nodes, which carry any
    client's X-Forwarded-For), not from the board site or the MCP server (they hand on a signed
    client token instead)."""
    assert gateway_env(minimal)["TRUSTED_PROXIES"] == ""
    assert gateway_env(scaled)["TRUSTED_PROXIES"] == "", "an ingress alone names no proxy"
    assert "gateway.trustedProxies is empty" in scaled.notes and "trustedProxies" not in minimal.notes
    named = render(merged(SCALED, {"gateway": {"trustedProxies": "10.42.0.0/16"}}))
    assert gateway_env(named)["TRUSTED_PROXIES"] == "10.42.0.0/16" and "WARNING" not in named.notes
    for rendered in (minimal, scaled, named):
        for workload in rendered.workloads():
            if not workload["metadata"]["name"].endswith("-gateway"):
                assert "TRUSTED_PROXIES" not in rendered.env_of(workload), workload["metadata"]["name"]
    values = (CHART / "values.yaml").read_text()
    assert not re.search(r"^\s*trustedProxies:.*(10\.0\.0\.0/8|172\.16|192\.168|fc00)", values, re.M)


def test_a_load_balancer_keeps_client_addresses_with_the_local_policy():
    cluster = render(merged(REQUIRED, {"gateway": {"service": {"type": "LoadBalancer"}}}))
    assert "externalTrafficPolicy" not in cluster.get("Service", f"{FULLNAME}-gateway")["spec"]
    assert "externalTrafficPolicy=Local" in cluster.notes
    local = render(merged(REQUIRED, {"gateway": {"service": {"type": "LoadBalancer", "externalTrafficPolicy": "Local"}}}))
    assert local.get("Service", f"{FULLNAME}-gateway")["spec"]["externalTrafficPolicy"] == "Local"
    assert "WARNING" not in local.notes
    assert gateway_env(local)["TRUSTED_PROXIES"] == ""


def test_the_front_services_call_the_api_through_the_gateways_service(minimal):
    for name, setting in (("web", "WEB_API_URL"), ("mcp", "MCP_API_URL"), ("widget", "WIDGET_API_URL")):
        (workload,) = [w for w in minimal.workloads() if w["metadata"]["name"] == f"{FULLNAME}-{name}"]
        assert minimal.env_of(workload)[setting] == f"http://{FULLNAME}-gateway:80", name
