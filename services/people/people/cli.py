"""``feedback invite``: get the first owner into a workspace (or anyone into its team).

    feedback invite --workspace acme --email you@example.com [--role owner]
                    [--base-url http://127.0.0.1:8080] [--admin-token TOKEN]

It asks the running platform, as the operator, to invite the address: the invitation is mailed
and its link printed. The operator's token is FEEDBACK_ADMIN_TOKEN, or the one ``make run``
keeps in .data/admin-token.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import requests

from people.contract import ROLES


def invite(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="feedback invite", description="Invite someone to a workspace's team (mailed; the link is printed).")
    parser.add_argument("--workspace", required=True, help="the workspace's slug")
    parser.add_argument("--email", required=True)
    parser.add_argument("--role", choices=ROLES, default="owner")
    parser.add_argument("--base-url", default=f"http://127.0.0.1:{os.environ.get('GATEWAY_PORT') or 8080}")
    parser.add_argument("--admin-token", default=None, help="default: FEEDBACK_ADMIN_TOKEN, else .data/admin-token")
    args = parser.parse_args(argv)
    token = args.admin_token or os.environ.get("FEEDBACK_ADMIN_TOKEN") or _kept_token()
    if not token:
        raise SystemExit("feedback invite: no operator token (set FEEDBACK_ADMIN_TOKEN or run it where make run keeps .data/)")
    url = f"{args.base_url.rstrip('/')}/v1/workspaces/{args.workspace}/members"
    try:
        r = requests.post(url, json={"email": args.email, "role": args.role},
                          headers={"Authorization": f"Bearer {token}"}, timeout=30)
    except requests.RequestException as ex:
        raise SystemExit(f"feedback invite: cannot reach the platform at {args.base_url}: {ex}") from None
    if r.status_code != 201:
        try:
            message = r.json().get("error")
        except ValueError:
            message = r.text[:200]
        raise SystemExit(f"feedback invite: {r.status_code}: {message}")
    invitation = r.json()
    print(f"Invited {invitation['email']} as {invitation['role']} of {args.workspace} (mailed; valid until {invitation['expiresAt']}).")
    print(f"Invitation link: {invitation['link']}")
    sys.stdout.flush()


def _kept_token() -> str | None:
    path = Path.cwd() / ".data" / "admin-token"
    return path.read_text().strip() if path.exists() else None


