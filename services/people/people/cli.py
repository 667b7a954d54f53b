"""``feedback invite``: get the first owner into a workspace (or anyone into its team).

    feedback invite --workspace acme --email you@example.com [--role owner]
                    [--base-url http://127.0.0.1:8080] [--admin-token TOKEN]

It asks the running platform, as the operator, to invite the address: the invitation is mailed
and its link printed. The platform is at ``--base-url``, else on this machine's
``GATEWAY_PORT``, else where ``make run`` keeps its gateway's address (.data/gateway-url), else
at ``make run``'s default, http://127.0.0.1:8080. The link leads to the address the platform was
called at when that is one of its own (``--base-url http://localhost:8080`` for passkeys
locally), else to its ``PUBLIC_BASE_URL``: the platform decides. The operator's token is
FEEDBACK_ADMIN_TOKEN, or the one ``make run`` keeps in .data/admin-token.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit

import requests

from people.contract import ROLES

DEFAULT_URL = "http://127.0.0.1:8080"  # make run's gateway without GATEWAY_PORT
DATA = ".data"  # make run's data folder, in the folder it runs from
KEPT_URL = "gateway-url"  # the address of make run's gateway, in its data folder
KEPT_TOKEN = "admin-token"  # the operator's token, in its data folder


def invite(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="feedback invite", description="Invite someone to a workspace's team (mailed; the link is printed).")
    parser.add_argument("--workspace", required=True, help="the workspace's slug")
    parser.add_argument("--email", required=True)
    parser.add_argument("--role", choices=ROLES, default="owner")
    parser.add_argument("--base-url", default=None,
                        help=f"the platform's address; default: http://127.0.0.1:$GATEWAY_PORT, else the one make run keeps in "
                             f"{DATA}/{KEPT_URL}, else {DEFAULT_URL}")
    parser.add_argument("--admin-token", default=None, help=f"default: FEEDBACK_ADMIN_TOKEN, else {DATA}/{KEPT_TOKEN}")
    args = parser.parse_args(argv)
    data = Path.cwd() / DATA
    base_url, said_by = platform_url(args.base_url, os.environ, data)
    token = args.admin_token or os.environ.get("FEEDBACK_ADMIN_TOKEN") or _kept(data / KEPT_TOKEN)
    if not token:
        raise SystemExit("feedback invite: no operator token (set FEEDBACK_ADMIN_TOKEN or run it where make run keeps .data/)")
    url = f"{base_url}/v1/workspaces/{args.workspace}/members"
    try:
        # ``origin``: where the link should lead, the address called; the platform takes it only
        # if it is one of its own.
        r = requests.post(url, json={"email": args.email, "role": args.role, "origin": origin_of(base_url)},
                          headers={"Authorization": f"Bearer {token}"}, timeout=30)
    except requests.RequestException as ex:
        raise SystemExit(f"feedback invite: cannot reach the platform at {base_url} ({said_by}; "
                         f"--base-url names another): {ex}") from None
    if r.status_code != 201:
        try:
            message = r.json().get("error")
        except ValueError:
            message = r.text[:200]
        raise SystemExit(f"feedback invite: {r.status_code}: {message}")
    invitation = r.json()
    print(f"Invited {invitation['email']} as {invitation['role']} of {args.workspace} (mailed; valid until {invitation['expiresAt']}).")
    print(f"Invitation link: {invitation['link']}")
    if origin_of(invitation["link"]) != origin_of(base_url):
        print(f"(It leads to the platform's public address: {base_url} is not one of its own.)")
    sys.stdout.flush()


def platform_url(base_url: str | None, environ: Mapping[str, str], data: Path) -> tuple[str, str]:
    """Where the platform is, and what said so: ``base_url`` (``--base-url``), else
    ``GATEWAY_PORT`` on this machine, else the address ``make run`` keeps in ``data``, else
    ``make run``'s default. ``SystemExit`` for an address that is not one."""
    if base_url:
        if urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).hostname:
            raise SystemExit(f"feedback invite: --base-url must be http(s)://host[:port], not {base_url!r}")
        return base_url.rstrip("/"), "--base-url"
    if environ.get("GATEWAY_PORT"):
        port = environ["GATEWAY_PORT"].strip()
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise SystemExit(f"feedback invite: GATEWAY_PORT must be a port number, not {port!r}")
        return f"http://127.0.0.1:{int(port)}", "GATEWAY_PORT"
    kept = _kept(data / KEPT_URL)
    if kept:
        return kept.rstrip("/"), str(data / KEPT_URL)
    return DEFAULT_URL, "make run's default address"


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, as browsers spell an origin (lower case)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}{':' + str(parts.port) if parts.port else ''}"


def _kept(path: Path) -> str | None:
    return path.read_text().strip() or None if path.is_file() else None
