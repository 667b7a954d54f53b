"""A budget a route declares of its own (``Route.budgets``), through a gateway with its limits
on (tests/test_budgets.py starts it): a triage save rescores every post of its workspace, so a
workspace's team saves a handful of times a minute, however many manager keys it holds, where a
manager key's own budget would let it save 1,200 times; callers outside the team spend none of
it, and other workspaces have their own (docs/reliability.md, threats)."""

from __future__ import annotations

import pytest

from common.plugins import Budget, Route
from gateway.config import Limit, load_config
from posts.plugin import TRIAGE_SAVES
from testkit import assert_error, create_workspace

from tests.test_budgets import address, start_gateway

SETTINGS = {"tags": [{"slug": "ux", "name": "UX", "color": "#2563eb"}], "fields": [], "scoreFormula": "votes"}


@pytest.fixture(scope="module")
def limited(stack):
    api, process = start_gateway(stack, "gateway-triage-budget")
    yield api
    process.stop()


def save(api, ws, **who):
    return api.put(f"{ws.path}/triage", json=SETTINGS, **who)


def test_a_workspaces_team_saves_triage_a_handful_of_times_a_minute(limited, admin_token):
    ws = create_workspace(limited, admin_token)
    other_key = limited.post(f"{ws.path}/api-keys", key=ws.key, json={"name": "second manager key"}).json()["key"]
    # Callers outside the team are refused by the service and spend none of the team's budget.
    for _ in range(TRIAGE_SAVES.quota + 2):
        assert_error(save(limited, ws, user=ws.user_token("end-user"), headers=address()), 403)
        assert_error(save(limited, ws, headers=address()), 401)

    first = save(limited, ws, key=ws.key)
    assert first.status_code == 200, first.text
    assert first.headers["RateLimit-Policy"] == f'"triage-saves";q={TRIAGE_SAVES.quota};w=60'
    keys = ([other_key, ws.key] * TRIAGE_SAVES.quota)[: TRIAGE_SAVES.quota]
    codes = [save(limited, ws, key=key).status_code for key in keys]
    assert codes == [200] * (TRIAGE_SAVES.quota - 1) + [429], "one budget for the workspace, whichever key saves"
    refused = save(limited, ws, key=other_key)
    assert "'triage-saves' budget is spent" in assert_error(refused, 429)
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.headers["RateLimit"].startswith('"triage-saves";r=0;')
    assert limited.get(f"{ws.path}/triage", key=ws.key).status_code == 200, "reads are not saves"
    assert limited.patch(f"{ws.path}/settings", key=ws.key, json={"anonVote": True}).status_code == 200, "nor other writes"

    other = create_workspace(limited, admin_token)
    assert save(limited, other, key=other.key).status_code == 200, "another workspace has its own budget"


def test_the_operator_changes_or_turns_route_budgets_off():
    assert load_config({}).route_limit("triage-saves", 6, 60) == Limit(6, 60)
    config = load_config({"RATE_LIMIT_ROUTES": "0/60, triage-saves=3/30"})
    assert config.route_limit("triage-saves", 6, 60) == Limit(3, 30)
    assert config.route_limit("another", 6, 60) == Limit(0, 60), "an entry without a name: every other budget"


def test_a_route_budget_is_declared_for_methods_the_route_serves():
    with pytest.raises(ValueError, match="budgets name its methods"):
        Route("/x", "x:X", ("GET",), budgets={"PUT": TRIAGE_SAVES})
    with pytest.raises(ValueError):
        Budget("Triage Saves", 6)
