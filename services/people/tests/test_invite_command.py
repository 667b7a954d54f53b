"""``feedback invite``: it finds the running platform (``--base-url``, ``GATEWAY_PORT``, or the
address ``make run`` keeps in ``.data/``), and the link it prints, which is also the one mailed,
leads where the operator asked, as long as that is one of the platform's own addresses (issue 36).

The command runs in this process against the suite's platform, which listens on a free port,
never the default 8080: a command that cannot find it fails."""

from __future__ import annotations

import pytest

from people.cli import DEFAULT_URL, invite, platform_url
from testkit.mail import link_in, wait_for_mail

from .helpers import address


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A shell where nothing says where the platform is: no GATEWAY_PORT, no .data/ here."""
    monkeypatch.chdir(tmp_path)
    for name in ("GATEWAY_PORT", "FEEDBACK_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def printed_link(out: str) -> str:
    [line] = [line for line in out.splitlines() if line.startswith("Invitation link: ")]
    return line.removeprefix("Invitation link: ")


def test_where_the_command_looks_for_the_platform(tmp_path):
    data = tmp_path / ".data"
    assert platform_url(None, {}, data) == (DEFAULT_URL, "make run's default address") == ("http://127.0.0.1:8080", "make run's default address")
    data.mkdir()
    (data / "gateway-url").write_text("http://127.0.0.1:8082\n")
    assert platform_url(None, {}, data) == ("http://127.0.0.1:8082", f"{data / 'gateway-url'}")
    assert platform_url(None, {"GATEWAY_PORT": "8081"}, data) == ("http://127.0.0.1:8081", "GATEWAY_PORT")
    assert platform_url("http://localhost:8083/", {"GATEWAY_PORT": "8081"}, data) == ("http://localhost:8083", "--base-url")
    with pytest.raises(SystemExit, match="GATEWAY_PORT"):
        platform_url(None, {"GATEWAY_PORT": "eighty"}, data)
    with pytest.raises(SystemExit, match="--base-url"):
        platform_url("127.0.0.1:8080", {}, data)


def test_it_finds_a_platform_on_another_port_by_gateway_port(elsewhere, monkeypatch, stack, workspace, maildir, capsys):
    monkeypatch.setenv("GATEWAY_PORT", str(stack.gateway_port))
    monkeypatch.setenv("FEEDBACK_ADMIN_TOKEN", stack.admin_token)
    email = address("owner")
    invite(["--workspace", workspace.slug, "--email", email])
    link = printed_link(capsys.readouterr().out)
    assert link.startswith(f"{stack.url}/b/{workspace.slug}/join?token=")
    assert link_in(wait_for_mail(maildir, to=email), "http") == link


def test_it_finds_the_platform_make_run_keeps_in_its_data_folder(elsewhere, stack, workspace, capsys):
    data = elsewhere / ".data"
    data.mkdir()
    (data / "gateway-url").write_text(stack.url + "\n")
    (data / "admin-token").write_text(stack.admin_token + "\n")
    invite(["--workspace", workspace.slug, "--email", address("owner")])
    assert printed_link(capsys.readouterr().out).startswith(f"{stack.url}/b/{workspace.slug}/join?token=")


def test_a_platform_it_cannot_reach_is_named_with_what_pointed_there(elsewhere, monkeypatch):
    monkeypatch.setenv("FEEDBACK_ADMIN_TOKEN", "t" * 32)
    monkeypatch.setenv("GATEWAY_PORT", "1")
    with pytest.raises(SystemExit, match=r"cannot reach the platform at http://127\.0\.0\.1:1 \(GATEWAY_PORT; --base-url"):
        invite(["--workspace", "acme", "--email", address()])


def test_the_link_leads_to_the_address_the_operator_called(elsewhere, stack, workspace, maildir, capsys):
    # make run's platform is on 127.0.0.1; http://localhost:<same port> is its own address too
    # (the one browsers accept passkeys on).
    local = f"http://localhost:{stack.gateway_port}"
    email = address("owner")
    invite(["--workspace", workspace.slug, "--email", email, "--base-url", local, f"--admin-token={stack.admin_token}"])
    out = capsys.readouterr().out
    link = printed_link(out)
    assert link.startswith(f"{local}/b/{workspace.slug}/join?token="), out
    assert link_in(wait_for_mail(maildir, to=email), "http") == link, "the mail's link is the printed one"
    # The very same platform called at its other spelling: its own address again.
    email = address("owner")
    invite(["--workspace", workspace.slug, "--email", email, "--base-url", stack.url, f"--admin-token={stack.admin_token}"])
    out = capsys.readouterr().out
    assert printed_link(out).startswith(f"{stack.url}/b/{workspace.slug}/join?token=") and "(It leads" not in out
    # Called at an address that reaches it but is none of its own (127.1 is 127.0.0.1 to the
    # resolver): the link leads to its public address, and the command says so.
    odd = f"http://127.1:{stack.gateway_port}"
    invite(["--workspace", workspace.slug, "--email", address(), "--base-url", odd, f"--admin-token={stack.admin_token}"])
    out = capsys.readouterr().out
    assert printed_link(out).startswith(f"{stack.url}/b/{workspace.slug}/join?token=")
    assert f"(It leads to the platform's public address: {odd} is not one of its own.)" in out


def test_a_link_leads_only_to_one_of_the_platforms_own_addresses(workspace, stack, api, maildir):
    """The invitation's ``origin`` is taken only when it is one of the platform's own public
    addresses; any other (or a request header saying where the caller is) leaves the link at
    PUBLIC_BASE_URL: an invitation never leads anyone to another site."""
    local = f"http://localhost:{stack.gateway_port}"

    def link_for(origin: str | None = None, headers: dict | None = None) -> str:
        email = address()
        r = api.post(f"{workspace.path}/members", key=stack.admin_token, headers=headers,
                      json={"email": email, "role": "manager", **({"origin": origin} if origin else {})})
        assert r.status_code == 201, r.text
        link = r.json()["link"]
        assert link_in(wait_for_mail(maildir, to=email), "http") == link
        return link

    assert link_for(local).startswith(f"{local}/b/{workspace.slug}/join?token=")
    for origin in ("https://evil.example", f"http://localhost:{stack.gateway_port + 1}", f"https://localhost:{stack.gateway_port}",
                   f"http://127.0.0.2:{stack.gateway_port}"):
        assert link_for(origin).startswith(f"{stack.url}/b/{workspace.slug}/join?token="), origin
    forged = {"Host": "evil.example", "Origin": "https://evil.example", "X-Forwarded-Host": "evil.example",
              "X-Forwarded-Proto": "https", "Forwarded": "host=evil.example;proto=https"}
    assert link_for(headers=forged).startswith(f"{stack.url}/b/{workspace.slug}/join?token=")
    r = api.post(f"{workspace.path}/members", key=stack.admin_token, json={"email": address(), "role": "manager",
                                                                          "origin": "javascript:alert(1)"})
    assert r.status_code == 400 and "origin" in r.text
