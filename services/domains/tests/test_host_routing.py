"""The gateway serves a workspace's public API on its verified custom domain."""

from .helpers import publish_records, put_domain, verify

from testkit import assert_error, wait_for


def on(host):
    return {"Host": host}


def test_verified_domain_serves_the_workspace_without_the_slug(api, workspace, zone, domain):
    publish_records(zone, put_domain(workspace, domain))
    assert verify(workspace)["status"] == "verified"

    r = api.get("/branding", headers=on(domain))
    assert r.status_code == 200, r.text
    assert r.json()["workspace"]["slug"] == workspace.slug
    assert api.get("", headers=on(f"{domain.upper()}:8443")).json()["slug"] == workspace.slug, "/v1 is the workspace"
    r = api.get("/settings", headers=on(domain), key=workspace.key)
    assert r.status_code == 200, "credentials work as on the slug path"
    assert_error(api.get("/settings", headers=on(domain)), 401)
    r = api.get(f"{workspace.path}/branding", headers=on(domain))
    assert r.status_code == 200 and r.json()["workspace"]["slug"] == workspace.slug, "the slug form works too"
    assert api.get("/openapi.json", headers=on(domain)).status_code == 200

    # Removed: the gateway stops serving it once its cached answer expires.
    workspace.api.delete(f"{workspace.path}/domain", key=workspace.key)
    wait_for(lambda: api.get("/branding", headers=on(domain)).status_code == 404, timeout=30, what="routing to stop")


def test_unverified_and_unknown_hosts_are_not_routed(api, workspace, domain):
    put_domain(workspace, domain)  # pending
    for host in (domain, "unknown." + domain):
        message = assert_error(api.get("/branding", headers=on(host)), 404)
        assert "not a verified custom domain" in message
    r = api.get(f"{workspace.path}/branding", headers=on(domain))
    assert r.status_code == 200, "workspace paths are served on any host"


def test_a_custom_domain_serves_its_own_workspace_only(api, workspace, other_workspace, admin_token, zone, domain):
    publish_records(zone, put_domain(workspace, domain))
    assert verify(workspace)["status"] == "verified"
    assert api.get(f"{workspace.path}/branding", headers=on(domain)).status_code == 200
    message = assert_error(api.get(f"{other_workspace.path}/branding", headers=on(domain)), 404)
    assert f"serves workspace '{workspace.slug}' only" in message
    assert_error(api.post("/workspaces", key=admin_token, headers=on(domain), json={"slug": "via-domain", "name": "X"}), 404)
    assert api.get(f"{other_workspace.path}/branding").status_code == 200, "served on the platform's own host"
