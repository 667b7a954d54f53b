def test_create_workspace_and_branding(api, workspace):
    r = api.get(f"{workspace.path}/branding")
    assert r.status_code == 200, r.text
    assert r.json()["workspace"]["slug"] == workspace.slug
