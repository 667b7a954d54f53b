"""The plugin contract where plugins meet: what only one service may declare is refused when
two declare it, at load and by the gateway, naming both; a new plugin needs no gateway edit
(tests/test_gateway.py); every service's context derives from the kit's."""

import typing

import pytest

from common.config import Settings
from common.plugins import SOLE, Route, ServiceContext, ServiceSpec, hookimpl, load_services, make_plugin_manager, resolve
from gateway.app import create_app
from gateway.config import GatewayConfig

ALONE = GatewayConfig(rate_limit_storage="memory://")  # budgets in the app's own memory
DECLARATIONS = {"identity_path": "/internal/{name}/identity", "host_resolver_path": "/internal/{name}/resolve",
                "site_root": "/{name}/{{slug}}"}


class Declaring:
    """A plugin whose service declares ``field`` (one of ``SOLE``)."""

    def __init__(self, name: str, field: str):
        self.name, self.field = name, field

    @hookimpl
    def register_service(self):
        page = Route(f"/{self.name}/{{slug}}", f"{self.name}.resources:Page", ("GET",))
        return ServiceSpec(name=self.name, context=f"{self.name}.plugin:create_context", pages=[page],
                           **{self.field: DECLARATIONS[self.field].format(name=self.name)})


def test_every_sole_field_is_covered():
    assert set(SOLE) == set(DECLARATIONS)


@pytest.mark.parametrize("field", SOLE)
def test_two_services_declaring_what_one_may_are_refused_at_load(field):
    pm = make_plugin_manager(load_entry_points=False, plugins=[Declaring("alpha", field), Declaring("beta", field)])
    with pytest.raises(RuntimeError, match=f"^{field} is declared by alpha and beta; only one service may declare it$"):
        load_services(pm)
    alone = load_services(make_plugin_manager(load_entry_points=False, plugins=[Declaring("alpha", field)]))
    assert getattr(alone["alpha"], field)


@pytest.mark.parametrize("field", SOLE)
def test_the_gateway_refuses_to_start_when_two_services_declare_one(field):
    """Whatever built the mapping: the gateway picks no service by the order of their names."""
    services = {name: Declaring(name, field).register_service() for name in ("alpha", "beta")}
    with pytest.raises(RuntimeError, match=f"{field} is declared by alpha and beta"):
        create_app(Settings(), services, config=ALONE)


@pytest.mark.parametrize("service", sorted(load_services()))
def test_every_context_derives_from_the_kits(service):
    create_context = resolve(load_services()[service].context)
    context_class = typing.get_type_hints(create_context)["return"]
    assert issubclass(context_class, ServiceContext)


def test_the_kits_context_starts_nothing_and_is_always_ready():
    context = ServiceContext(settings=Settings(), store=None)
    assert context.start_api() is None and context.readiness() == {}
