"""The plugin contract, checked against every discovered service: declared routes match the
resources that serve them, event schemas are JSON Schema, and the gateway loads no service code."""

import subprocess
import sys

import falcon
import jsonschema
import pytest

from common.plugins import event_catalog, load_services, resolve

SERVICES = load_services()
ROUTES = [(name, route) for name, spec in SERVICES.items() for route in (*spec.routes, *spec.internal_routes)]


@pytest.mark.parametrize(("service", "route"), ROUTES, ids=[f"{n}:{r.template}" for n, r in ROUTES])
def test_declared_methods_are_the_resources_responders(service, route):
    resource = resolve(route.resource)
    served = {m for m in falcon.constants.COMBINED_METHODS if callable(getattr(resource, f"on_{m.lower()}", None))}
    assert served == set(route.methods), f"{route.resource} serves {sorted(served)}, the spec says {route.methods}"


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_event_schemas_are_json_schemas(service):
    spec = SERVICES[service]
    for type_, schema in spec.events.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert type_.split(".")[0] and "." in type_, f"event type {type_} is not <noun>.<verb>"


def test_every_event_type_has_one_owner():
    catalog = event_catalog(SERVICES)
    assert {"post.created", "workspace.updated", "domain.verified", "webhook.disabled"} <= set(catalog)
    assert all(topic.startswith("feedback.") for topic in catalog.values())


def test_loading_the_gateway_imports_no_service_code():
    # A service's package is where its context lives (the mcp service's is feedback_mcp: ``mcp``
    # is the SDK's); the SDKs a service uses must not load either.
    packages = sorted({spec.context.split(".")[0] for spec in SERVICES.values()} | {"mcp", "starlette"})
    probe = (
        "import sys; from gateway.app import get_app; get_app(); "
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in %r))" % (packages,)
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert loaded, "the probe found not even the plugin modules"
    # A service's declarative modules are data the gateway reads: its spec, its contract and its
    # request schemas (the OpenAPI document is built from the schemas the service validates with).
    code = [m for m in loaded if m.split(".")[-1] not in ("plugin", "contract", "schemas") and ("." in m or m in ("mcp", "starlette"))]
    assert code == [], f"the gateway imported service modules: {code}"


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_every_model_names_the_collection_mongoengine_uses(service):
    """``Store.collection`` reads ``COLLECTION``; mongoengine (indexes) reads ``meta``: one name."""
    for model in SERVICES[service].model_classes():
        assert model.COLLECTION == model._get_collection_name(), model.__name__
