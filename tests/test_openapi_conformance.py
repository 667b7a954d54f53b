"""The OpenAPI document and the API agree.

schemathesis reads the document the gateway serves and, for every operation, sends requests it
generates from it (as a manager of one workspace: every ``{slug}`` is pinned to it, so requests
reach real data): valid ones the API must accept, invalid ones it must refuse. Every check runs
on every answer (status codes, bodies, headers and content types as documented, no 5xx).
The platform's deliberate answers that a check would count as failures are in
``schemathesis.toml``, which this test runs with, each with its reason (and in
docs/architecture.md, "The OpenAPI document and the API").

Two rules live in a service's code rather than in the schema it validates with, and the document
shows them beside it as a form: a webhook URL's and a custom domain's. The tests at the end check
that each form and its code agree.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import hypothesis
import schemathesis
from hypothesis import strategies as st
from schemathesis.engine import Status, StopReason, events, from_schema

from testkit import assert_error, create_workspace

ROOT = Path(__file__).resolve().parents[1]
SEED = 4242
# Per operation and phase: 8 (30 until the admin area's routes, 20 until the board's and the
# portability service's, 12 until the widget's, the changelog subscriptions' and a person's data
# made the suite pass ten minutes; every operation is still run in every phase, with the same
# seed; docs/benchmarks.md, "The test suite").
EXAMPLES = 8


def pin_slug(doc: dict, slug: str) -> dict:
    """Point every ``{slug}`` at the test's workspace so requests reach real data."""

    def visit(node):
        if isinstance(node, dict):
            if node.get("in") == "path" and node.get("name") == "slug":
                node["schema"] = {"type": "string", "enum": [slug]}
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(doc)
    return doc


# The document's operations in five parts, each run by a test module of its own so parallel test
# processes share the run (docs/benchmarks.md, "The test suite"): the posts, people, webhooks and
# workspaces services', and every other. Together they are every operation:
# ``test_the_parts_cover_every_operation``.
POSTS = r"^/v1/workspaces/\{slug\}/(posts|roadmap|triage|suggestions)(/|$)"
PEOPLE = r"^/v1/(me(/|$)|workspaces/\{slug\}/(sessions|sign-in|members|invitations|audit-log|passkeys|oidc)(/|-|$))"
WEBHOOKS = r"^/v1/workspaces/\{slug\}/webhooks(/|$)"
WORKSPACES = r"^/v1/(workspaces(/\{slug\})?|api-key|workspaces/\{slug\}/(settings|branding|agent-context|boards|statuses|api-keys|changelogs|logo)(/.*)?)$"
PARTS = {"posts": POSTS, "people": PEOPLE, "webhooks": WEBHOOKS, "workspaces": WORKSPACES}


def part_of(path: str) -> str:
    return next((name for name, regex in PARTS.items() if re.search(regex, path)), "rest")


def run_conformance(api, admin_token, stack, part: str) -> None:
    """schemathesis's run (as ``st run`` makes it: coverage, fuzzing and stateful phases, in
    process) over one part of the document: a name of ``PARTS``, or ``"rest"``."""
    workspace = create_workspace(api, admin_token)
    workspace.board("features", "Features")
    settings = tomllib.loads((ROOT / "schemathesis.toml").read_text())
    settings.update(
        {
            "base-url": stack.url,
            "headers": {"Authorization": f"Bearer {workspace.key}"},
            "seed": SEED,
            "generation": {"max-examples": EXAMPLES},
            "request-timeout": 10,
            # A failure shows the headers it sent (the Idempotency-Key; the API key is the test's own).
            "output": {"sanitization": {"enabled": False}},
        }
    )
    document = pin_slug(api.get("/openapi.json").json(), workspace.slug)
    schema = schemathesis.openapi.from_dict(document, config=schemathesis.Config.from_dict(settings))
    # Filtered by exclusion: schemathesis ORs an include with filters of its own that match all.
    schema = schema.exclude(func=lambda ctx: part_of(ctx.operation.path) != part)

    failures, errors, finished = [], [], None
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            failures += [
                f"{event.recorder.label}: {check.failure_info.failure.title}\n{check.failure_info.code_sample}"
                for checks in event.recorder.checks.values()
                for check in checks
                if check.status == Status.FAILURE and check.failure_info is not None
            ]
        elif isinstance(event, (events.NonFatalError, events.FatalError)):
            errors.append(f"{getattr(event, 'label', '')}: {getattr(event, 'value', getattr(event, 'exception', ''))!r}")
        elif isinstance(event, events.EngineFinished):
            finished = event
    assert finished is not None and finished.stop_reason == StopReason.COMPLETED, finished
    assert not errors, "\n".join(errors)
    assert not failures, f"{len(failures)} answer(s) disagree with the document:\n\n" + "\n\n".join(failures)


def test_every_other_operation_answers_as_documented(api, admin_token, stack):
    """Domains, companies, notifications, the index; the posts, people, webhooks and workspaces
    services' operations run in test_openapi_conformance_<service>.py."""
    run_conformance(api, admin_token, stack, "rest")


def test_the_parts_cover_every_operation(api):
    paths = api.get("/openapi.json").json()["paths"]
    parts = {path: [name for name, regex in PARTS.items() if re.search(regex, path)] for path in paths}
    assert all(len(names) <= 1 for names in parts.values()), "a path in two parts"
    assert all([p for p in paths if parts[p] == [name]] for name in PARTS)
    assert [p for p in paths if not parts[p]], "the rest is not empty"


def test_an_empty_idempotency_key_is_refused_as_documented(api, workspace):
    # The gateway passes an empty header on for the service to refuse (1-255 characters).
    r = api.post(f"{workspace.path}/boards", key=workspace.key, json={"slug": "b", "name": "B"}, headers={"Idempotency-Key": ""})
    assert_error(r, 400)
    assert api.get(f"{workspace.path}/boards").json()["items"] == []


# -- the forms the services check in code ---------------------------------------------------


def _form(schema: dict):
    return st.from_regex(re.compile(schema["pattern"].removesuffix("$") + r"\Z"), fullmatch=True).filter(
        lambda s: schema["minLength"] <= len(s) <= schema["maxLength"]
    )


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.data())
def test_a_domain_in_the_documented_form_is_taken_as_written(data):
    from domains import names, schemas

    domain = data.draw(_form(schemas.DOMAIN))
    assert names.normalize(domain) == domain.lower()


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80) | st.from_regex(r"\A[ A-Za-z0-9.-]{1,80}\Z"))
def test_every_spelling_the_domains_service_takes_becomes_the_documented_form(text):
    """Beyond the form, the service takes other spellings of a name (Unicode, surrounding
    spaces, a final dot): each becomes a name in the form, so nothing else gets in."""
    from common.errors import BadRequest
    from domains import names, schemas

    try:
        domain = names.normalize(text)
    except BadRequest:
        return
    assert re.fullmatch(schemas.DOMAIN["pattern"].removesuffix("$"), domain) and len(domain) <= schemas.DOMAIN["maxLength"]


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.data())
def test_a_webhook_url_in_the_documented_form_is_refused_only_for_where_it_leads(data):
    """The URL guard reads every URL of the form; it may refuse one only for the network rules
    (the port; where the host resolves, here a public address)."""
    from webhooks import schemas
    from webhooks.config import WebhooksConfig
    from webhooks.urlguard import UrlPolicy, UrlRefused

    url = data.draw(_form(schemas.URL))
    policy = UrlPolicy(WebhooksConfig())
    policy.resolve = lambda host, port: ["93.184.216.34"]
    try:
        policy.check(url)
    except UrlRefused as ex:
        assert str(ex).startswith("uses port"), (url, str(ex))
