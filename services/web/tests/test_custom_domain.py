"""A verified custom domain serves the workspace's board site at its root (``site_root``)."""

from __future__ import annotations

import uuid

import requests

from services.domains.tests.helpers import publish_records, put_domain, verify

from .helpers import create_post


def test_custom_domain_root_is_the_board(stack, workspace, dns_zone):
    workspace.board("features", "Feature requests")
    post = create_post(workspace, "Served on our own domain")
    domain = f"fb-{uuid.uuid4().hex[:10]}.customer.test"
    publish_records(dns_zone, put_domain(workspace, domain))
    assert verify(workspace)["status"] == "verified"
    http = requests.Session()
    board = http.get(stack.url + "/", headers={"Host": domain}, timeout=30)
    assert board.status_code == 200 and "Served on our own domain" in board.text
    assert "Content-Security-Policy" in board.headers
    # the page's links (/b/<slug>/...) work on the custom domain too
    page = http.get(f"{stack.url}/b/{workspace.slug}/p/{post['id']}", headers={"Host": domain}, timeout=30)
    assert page.status_code == 200 and "<h1>Served on our own domain</h1>" in page.text
    short = http.get(f"{stack.url}/p/{post['id']}", headers={"Host": domain}, timeout=30)
    assert short.status_code == 200 and "<h1>Served on our own domain</h1>" in short.text
