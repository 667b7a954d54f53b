"""The people service's rules: who someone is, who may manage a team, how one signs in.

Each public method checks who may (raising 401/403) before it validates the body, then decides
and answers the API's shape. Sessions, links and invitations are bearer secrets: they are
handed out once and stored hashed (``people.tokens``).

Identity (``identify``): the gateway asks this service who a credential belongs to. A session
token is looked up here, on every request (``cacheable`` false: a removed member or a signed-out
session is refused at once). Any other credential (an API key, an SSO token) is the workspaces
service's to check; an SSO token with an email becomes that address's person, so a token and an
emailed link of one address are one person, with one vote. An SSO token never makes a team
member: the customer's app vouches for its users, not for the team.

What a workspace asserts is its word alone. An SSO token's email, or the email its own identity
provider vouches for, makes a session on that workspace only (``proven`` false): it never
changes the person's profile or ends their sessions elsewhere, and a passkey registered from
it never opens a team session. The platform's own proof (an emailed link, an invitation mailed
to the address and shown to nobody else, a passkey registered from a proven session) is what
changes a person everywhere.

An API key made by a team member (``Caller.key_maker``) acts only while its maker is on the team,
and manages members only while its maker is an owner; the operator's keys act as the operator
made them.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta, timezone
from urllib.parse import quote, urlencode, urlsplit

from bson import ObjectId

from common import auth
from common.addresses import normalize_address
from common.db import Insert, Write
from common.errors import BadGateway, BadRequest, Conflict, Forbidden, NotFound, TooManyRequests, Unauthorized, Unavailable
from common.ids import iso, now, object_id
from common.validation import check
from people import contract, schemas, shapes, tokens
from people.config import PeopleConfig
from people.mail import PeopleMail
from people.repository import PeopleRepository

log = logging.getLogger(__name__)

# How often a session's last request is written (its idle expiry is this coarse): a write on
# every request would cost more than the lookup it follows.
SEEN_GRANULARITY = timedelta(minutes=1)
REFUSALS = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound}
# Where the workspaces service checks API keys and SSO tokens (the credentials it owns).
CREDENTIALS_SERVICE = "workspaces"
CREDENTIALS_PATH = "/internal/credentials"
TEAM_MAX = 10_000  # members the internal team directory answers (a team is people, not users)
# Sign-in methods where the platform itself saw the address answer (a mailed link): a session
# from one is proven (``Session.proven``; a passkey's session is as proven as the one it was
# registered from).
PROVEN_METHODS = ("email", "invitation")


def normalize_email(value: str) -> str:
    """The address as stored and compared (lower case); 400 for what no mail could reach."""
    try:
        return normalize_address(value)
    except ValueError:
        raise BadRequest("field 'email' is not an email address") from None


def person_user_id(person_id: ObjectId) -> str:
    return f"{auth.PERSON_PREFIX}{person_id}"


def actor_of(person: dict) -> dict:
    return {"id": person_user_id(person["_id"]), "name": person["name"]}


class PeopleService:
    def __init__(self, repo: PeopleRepository, workspaces, credentials, hosts, mail: PeopleMail, config: PeopleConfig):
        """``workspaces``: a ``Workspaces``; ``credentials``: an ``InternalClient`` to the
        workspaces service; ``hosts``: ``host -> slug | None`` of verified custom domains."""
        self.repo = repo
        self.workspaces = workspaces
        self.credentials = credentials
        self.hosts = hosts
        self.mail = mail
        self.config = config
        self.public_origin = _origin(config.public_base_url)
        self.public_origins = _aliases(self.public_origin)

    # -- identity ----------------------------------------------------------------------------

    def identify(self, body) -> dict:
        """Who presents these credentials (internal: the gateway asks). ``cacheable`` says
        whether the gateway may remember the answer for a while."""
        fields = check(body, schemas.IDENTITY)
        if tokens.is_session_token(fields.get("apiKey")):
            return {**_caller_fields(self._session_caller(fields["apiKey"], fields["workspace"])), "cacheable": False}
        status, answer = self.credentials.json(CREDENTIALS_SERVICE, "POST", CREDENTIALS_PATH, fields)
        if status != 200:
            message = (answer.get("error") if isinstance(answer, dict) else None) or "authentication failed"
            if status in REFUSALS:
                raise REFUSALS[status](message)
            raise (Unavailable if status == 503 else BadGateway)(f"cannot verify credentials now: {message}")
        companies = answer.pop("companies", None)
        caller = auth.Caller(**answer)
        if caller.key_maker:
            self._require_key_maker_on_team(caller)
        if caller.kind == auth.USER and caller.email and caller.user_id and caller.user_id.startswith("sso:"):
            caller = self._sso_person(caller)
        if companies is not None:
            self._claimed(caller.workspace, caller.user_id, companies)
        return {**_caller_fields(caller), "cacheable": True}

    def _claimed(self, slug: str, user_id: str, companies: list[dict]) -> None:
        """Publish what an SSO token says of its user's companies when it differs from what their
        last token said (the gateway asks again every few seconds per token)."""
        digest = hashlib.sha256(json.dumps(companies, sort_keys=True).encode()).hexdigest()
        if self.repo.claim_digest(slug, user_id) == digest:
            return

        def work(tx: PeopleRepository) -> None:
            if tx.claim_digest(slug, user_id) == digest:
                return
            tx.add(tx.note_claim(slug, user_id, digest, now()),
                   tx.event(slug, contract.COMPANIES_CLAIMED, {"userId": user_id, "companies": companies}))

        self.repo.unit_of_work(work)

    def _require_key_maker_on_team(self, caller: auth.Caller) -> None:
        """A key a member made works only while they are on the team (their keys are revoked
        when they leave; this holds in between, and for any key the revocation missed)."""
        if not caller.key_maker.startswith(auth.PERSON_PREFIX):
            return  # made before makers were kept: a manager, never an owner (_require_owner)
        if self._team_role(caller.workspace, caller.key_maker) is None:
            raise Unauthorized("this API key was made by someone who is no longer on the team")

    def _session_caller(self, token: str, slug: str | None) -> auth.Caller:
        doc = self._live_session(token)
        if slug is not None and doc["workspace"] != slug:
            raise Forbidden("this session belongs to another workspace")
        return auth.Caller(
            kind=auth.MANAGER if doc.get("role") else auth.USER, workspace=doc["workspace"], user_id=doc["userId"],
            name=doc.get("name"), email=doc.get("email"), avatar_url=doc.get("avatarUrl"), role=doc.get("role"),
            session_id=doc["_id"],
        )

    def _live_session(self, token: str) -> dict:
        at = now()
        key = tokens.digest(token)
        doc = self.repo.session_by_token(key)
        if doc is not None and (_aware(doc["expiresAt"]) <= at
                                or _aware(doc["lastSeenAt"]) + timedelta(seconds=self.config.session_idle_seconds) <= at):
            self.repo.end_session(key)  # the TTL index would, later
            doc = None
        if doc is None:
            raise Unauthorized("this session has ended; sign in again")
        if at - _aware(doc["lastSeenAt"]) >= SEEN_GRANULARITY:
            self.repo.seen(key, at)
        return doc

    def _sso_person(self, caller: auth.Caller) -> auth.Caller:
        try:
            email = normalize_email(caller.email)
        except BadRequest:
            return caller  # an address no mail could reach is no person's: the token's user as it is
        person = self.repo.known_or_new_person(email, caller.name or email.split("@")[0], caller.avatar_url, now())
        return auth.Caller(kind=auth.USER, workspace=caller.workspace, user_id=person_user_id(person["_id"]),
                           name=caller.name or person["name"], email=email,
                           avatar_url=caller.avatar_url or person.get("avatarUrl"))

    # -- who is signed in --------------------------------------------------------------------

    def me(self, caller: auth.Caller) -> dict:
        person = self._person_of(caller)
        return {
            "id": caller.user_id, "person": shapes.person(person) if person else None, "workspace": caller.workspace,
            "role": caller.role if caller.kind == auth.MANAGER and caller.session_id else None,
            "name": caller.name, "email": caller.email, "avatarUrl": caller.avatar_url,
            "locale": person.get("locale") if person else None,
        }

    def _person_of(self, caller: auth.Caller) -> dict | None:
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("nobody is signed in")
        if not (caller.user_id or "").startswith(auth.PERSON_PREFIX):
            if caller.user_id and caller.user_id.startswith("sso:"):
                return None  # an SSO user without an email: a user, not a person
            raise Forbidden("only a signed-in person (not an API key or the operator) has a profile")
        return self.repo.person(ObjectId(caller.user_id[len(auth.PERSON_PREFIX):]))

    def update_me(self, caller: auth.Caller, body) -> dict:
        person = self._person_of(caller)
        if person is None:
            raise Forbidden("only a person with an email address has a profile to change")
        fields = check(body, schemas.UPDATE_ME)
        if "locale" in fields:  # their own language: theirs to choose however they signed in
            self.repo.update_person(person["_id"], {"locale": fields.pop("locale")}, now())
            if not fields:
                return self.me(caller)
        if not self._proven(caller):
            raise Forbidden("your name and picture here come from the app or provider you signed in with; "
                            "to change your profile, sign in with an emailed link")
        fields = check(body, schemas.UPDATE_ME)
        if "name" in fields:
            fields["name"] = fields["name"].strip()
        self.repo.update_person(person["_id"], fields, now())
        return self.me(auth.Caller(**{**_caller_fields(caller), "name": fields.get("name", caller.name),
                                      "avatar_url": fields.get("avatarUrl", caller.avatar_url)}))

    def sign_out(self, caller: auth.Caller) -> None:
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("nobody is signed in")
        if not caller.session_id:
            raise BadRequest("this request was not made with a session")
        ended = self.repo.end_session(caller.session_id)
        if ended is not None:
            self.repo.record(ended["workspace"], "sign_out", _actor_of_session(ended), {}, now())

    def sign_out_everywhere(self, caller: auth.Caller) -> dict:
        """End every session of the signed-in person, on every workspace."""
        person = self._person_of(caller)
        if person is None or not caller.session_id:
            raise BadRequest("only a person signed in with a session can sign out everywhere")
        # A session this workspace vouched for reaches this workspace's sessions only.
        where = None if self._proven(caller) else caller.workspace

        def work(tx: PeopleRepository) -> int:
            tx.add(tx.end_sessions(person["_id"], where))
            [ended] = tx.flush()
            tx.add(tx.audit_entry(caller.workspace, "sign_out_everywhere", actor_of(person), {"sessions": ended}, now()))
            return ended

        return {"ended": self.repo.unit_of_work(work)}

    def _proven(self, caller: auth.Caller) -> bool:
        """Whether the caller's session rests on the platform's own proof of the address (an SSO
        token sent with the request, without a session, never does)."""
        doc = self.repo.session_by_token(caller.session_id) if caller.session_id else None
        return doc is not None and session_proven(doc)

    # -- sessions from an SSO token ----------------------------------------------------------

    def session_from_token(self, caller: auth.Caller, slug: str) -> dict:
        """A session for the user an SSO token (``X-Feedback-User``) names: the board site keeps
        the session, not the token. Always an end user's session."""
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("send the user token as X-Feedback-User")
        if caller.kind != auth.USER or caller.key_id or caller.session_id or caller.workspace != slug:
            raise Forbidden("a session is made from a user token (X-Feedback-User) of this workspace")
        person = self._person_of(caller) if caller.user_id.startswith(auth.PERSON_PREFIX) else None
        started, writes = self._start(slug, person, None, "sso", user=caller)
        self.repo.unit_of_work(lambda tx: tx.add(*writes))
        return started

    def _start(self, slug: str, person: dict | None, role: str | None, method: str, user: auth.Caller | None = None,
               proven: bool | None = None) -> tuple[dict, list[Write]]:
        """A new session: the answer that hands out its token, and the writes that store it
        with its audit entry (for the caller's unit of work). ``proven`` (by default: whether
        ``method`` is one of PROVEN_METHODS) says whether the platform itself checked the
        address."""
        at = now()
        token = tokens.new_session_token()
        who = {"personId": person["_id"], "userId": person_user_id(person["_id"]), "name": person["name"],
               "email": person["email"], "avatarUrl": person.get("avatarUrl")} if person else {
            "personId": None, "userId": user.user_id, "name": user.name, "email": user.email, "avatarUrl": user.avatar_url}
        stored = self.repo.new_session({
            "tokenHash": tokens.digest(token), "workspace": slug, **who, "role": role, "method": method,
            "proven": method in PROVEN_METHODS if proven is None else proven,
            "createdAt": at, "lastSeenAt": at, "expiresAt": at + timedelta(seconds=self.config.session_max_seconds),
        })
        writes: list[Write] = [stored]
        if person is not None and slug not in person.get("signedInTo", ()):
            writes.append(self.repo.note_signed_in(person["_id"], slug))
        actor = {"id": who["userId"], "name": who["name"] or "Someone"}
        writes.append(self.repo.audit_entry(slug, "sign_in", actor, {"method": method, "role": role}, at))
        return shapes.session(token, stored.document), writes

    # -- email links -------------------------------------------------------------------------

    def request_link(self, caller: auth.Caller, slug: str, body) -> dict:
        """Mail a sign-in link if this address may sign in here. The answer is the same whether
        or not it may (nobody learns who has an account); asking too often is refused for every
        address alike."""
        fields = check(body, schemas.REQUEST_LINK)
        self.workspaces.require(slug)
        email = normalize_email(fields["email"])
        origin = self.origin(slug, fields.get("origin"))
        at = now()
        window = timedelta(seconds=self.config.links_window_seconds)
        person = self.repo.person_by_email(email)
        member = person is not None and self.repo.membership(slug, person["_id"]) is not None
        # An address is counted per workspace, so asking elsewhere never locks it out here; and
        # where it never signed in, also against all such workspaces together (a stranger's board
        # may not mail an address without end). Every address is answered alike.
        stranger = not member and (person is None or slug not in person.get("signedInTo", ()))
        if (self.repo.link_requests_here(email, slug, at - window) >= self.config.links_per_address
                or (stranger and self.repo.stranger_link_requests(email, at - window) >= self.config.links_per_stranger_address)):
            raise TooManyRequests(
                f"too many sign-in links were asked for this address; try again in {self.config.links_window_seconds // 60} minutes",
                headers={"Retry-After": str(self.config.links_window_seconds)},
            )
        self.repo.record_link_request(email, slug, stranger, at, at + window)
        if member or "email" in self.end_user_methods(slug):
            token = tokens.new_token()
            next_path = self._next(slug, fields.get("next"))
            self.repo.add_link({"tokenHash": tokens.digest(token), "workspace": slug, "email": email, "next": next_path,
                                "createdAt": at, "expiresAt": at + timedelta(seconds=self.config.link_seconds)})
            query = {"token": token, **({"next": next_path} if next_path else {})}
            link = self.site_url(origin, slug, "/sign-in/email?" + urlencode(query))
            self.mail.sign_in_link(slug, email, link, self.config.link_seconds // 60, key=tokens.digest(token),
                                   board=self.site_url(origin, slug, "/"), asked=fields.get("locale"),
                                   chosen=person.get("locale") if person else None)
        return {"status": "sent", "message": "If this address may sign in here, a link is on its way. It works once."}

    def redeem_link(self, slug: str, body) -> dict:
        token = check(body, schemas.REDEEM)["token"]

        def work(tx: PeopleRepository) -> dict:
            at = now()
            link = tx.live_link(tokens.digest(token), slug, at)
            if link is None:
                raise BadRequest("this sign-in link is not valid here, was used already or has expired; ask for a new one")
            tx.add(tx.spend_link(link["_id"], at))
            person = tx.person_for_email(link["email"], link["email"].split("@")[0], None, at)
            membership = tx.membership(slug, person["_id"])
            started, writes = self._start(slug, person, membership["role"] if membership else None, "email")
            tx.add(*writes)
            return {**started, "next": link.get("next")}

        return self.repo.unit_of_work(work)

    # -- team members ------------------------------------------------------------------------

    def _require_owner(self, caller: auth.Caller, slug: str) -> None:
        """The operator, the operator's manager API key of ``slug`` (a script bootstraps a team
        with one), an owner signed in, or a manager key an owner made: 401/403 for anyone else
        (a key a manager made acts as its maker, never above), 404 for an unknown workspace."""
        self.workspaces.require_manager(caller, slug)
        if caller.kind == auth.ADMIN or (caller.key_id and not caller.key_maker):
            return
        # The role is read again, not taken from the session: the membership is what counts.
        if self._team_role(slug, self._rights_of(caller)) != "owner":
            raise Forbidden("only an owner of this workspace can manage its members")

    @staticmethod
    def _rights_of(caller: auth.Caller) -> str | None:
        """Whose team rights a caller acts with: the member signed in, or the member who made the
        key (``person:<id>``); None for the operator and the operator's keys."""
        if caller.kind == auth.ADMIN:
            return None
        return caller.key_maker if caller.key_id else caller.user_id

    def _team_role(self, slug: str, person: str | None, tx: PeopleRepository | None = None) -> str | None:
        """The team role of ``person`` (``person:<id>``) on ``slug``, read now (in the unit of
        work ``tx``, when given); None for none."""
        person_id = (person or "").removeprefix(auth.PERSON_PREFIX)
        if person == person_id or not ObjectId.is_valid(person_id):
            return None
        membership = (tx or self.repo).membership(slug, ObjectId(person_id))
        return membership["role"] if membership else None

    def members(self, caller: auth.Caller, slug: str, limit: int) -> dict:
        self.workspaces.require_manager(caller, slug)
        memberships = self.repo.members(slug, limit)
        persons = self.repo.persons_by_id([m["personId"] for m in memberships])
        return {"items": [shapes.member(m, persons[m["personId"]]) for m in memberships if m["personId"] in persons]}

    # -- for other services (internal routes) ------------------------------------------------

    def lookup(self, body) -> dict:
        """The persons of ``ids`` that exist: ``{id, email, name}`` each (who to mail)."""
        ids = [ObjectId(i) for i in check(body, schemas.LOOKUP)["ids"]]
        return {"items": [shapes.person(p) for p in self.repo.persons_by_id(ids).values()]}

    def resolve(self, body) -> dict:
        """The person of an address (``{id, email, name}``), made the first time it is named:
        a company's member or a vote on someone's behalf, before they ever sign in."""
        email = normalize_email(check(body, schemas.RESOLVE)["email"])
        return shapes.person(self.repo.known_or_new_person(email, email.split("@")[0], None, now()))

    def import_people(self, body) -> dict:
        """A batch of the people an import brings (internal: the portability service asks):
        each the person of their address, made if new (the same person as an account of that
        address), with the name and avatar the source gives a new one. No mail of any kind.
        Answers each item's identity here (``person:<id>``) by its id there."""
        fields = check(body, schemas.IMPORT)
        ids, errors = {}, []
        for item in fields["items"]:
            try:
                email = normalize_email(str(item["email"]))
                name = str(item.get("name") or "").strip()[:100] or email.split("@")[0]
                avatar = item.get("avatarUrl") if str(item.get("avatarUrl") or "").startswith("https://") else None
                person = self.repo.known_or_new_person(email, name, avatar, now())
                ids[str(item["sourceId"])] = f"{auth.PERSON_PREFIX}{person['_id']}"
            except (KeyError, TypeError, ValueError, BadRequest) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        return {"ids": ids, "errors": errors}

    def export(self, body) -> dict:
        """One page of a workspace's people for its export (internal: the portability service
        asks): its members and the persons who signed in there, in id order after ``after``; or,
        with ``ids``, those persons (named by its posts or votes). No secret: no session, passkey
        or token, only who they are and a member's role."""
        fields = check(body, schemas.EXPORT)
        slug, limit = fields["workspace"], fields.get("limit", 500)
        roles = {m["personId"]: m["role"] for m in self.repo.members(slug, TEAM_MAX)}
        if "ids" in fields:
            persons = list(self.repo.persons_by_id([ObjectId(i) for i in fields["ids"]]).values())
            return {"items": [shapes.exported_person(p, roles.get(p["_id"])) for p in persons], "next": None}
        after = ObjectId(fields["after"]) if fields.get("after") and ObjectId.is_valid(fields["after"]) else None
        persons = self.repo.persons_of_workspace(slug, list(roles), after, limit)
        return {"items": [shapes.exported_person(p, roles.get(p["_id"])) for p in persons],
                "next": str(persons[-1]["_id"]) if len(persons) == limit else None}

    def team(self, slug: str) -> dict:
        """Every member of ``slug``'s team with their address and role."""
        memberships = self.repo.members(slug, TEAM_MAX)
        persons = self.repo.persons_by_id([m["personId"] for m in memberships])
        return {"items": [shapes.member(m, persons[m["personId"]]) for m in memberships if m["personId"] in persons]}

    def invite(self, caller: auth.Caller, slug: str, body) -> dict:
        """Invite an address to the team: a single-use link, mailed, valid
        ``invitation_seconds``. Accepting signs in as that address's person, so the link is the
        address's alone: only the operator, who runs the platform, sees it in the answer too
        (``feedback invite`` hands it over where mail does not reach yet). A team sends at most
        ``invitations_per_hour`` (the mail carries its name and the inviter's to any address).
        The link leads to the body's ``origin`` when that is one of the platform's own public
        addresses (:meth:`link_origin`), else to ``PUBLIC_BASE_URL``."""
        self._require_owner(caller, slug)
        fields = check(body, schemas.INVITE)
        email, role = normalize_email(fields["email"]), fields["role"]
        person = self.repo.person_by_email(email)
        if person is not None and self.repo.membership(slug, person["_id"]) is not None:
            raise Conflict(f"{email} is a member of this workspace already (change their role instead)")
        token = tokens.new_token()
        at = now()
        actor = auth.actor(caller)
        if caller.kind != auth.ADMIN and self.repo.invitations_sent(slug, at - timedelta(hours=1)) >= self.config.invitations_per_hour:
            raise TooManyRequests(f"this team sent {self.config.invitations_per_hour} invitations in the last hour, "
                                  "the most it may; try again later", headers={"Retry-After": "3600"})

        def work(tx: PeopleRepository) -> dict:
            invitation = tx.new_invitation({
                "workspace": slug, "email": email, "role": role, "tokenHash": tokens.digest(token), "invitedBy": actor,
                "inviterPerson": self._rights_of(caller),
                "createdAt": at, "expiresAt": at + timedelta(seconds=self.config.invitation_seconds),
            })
            # It replaces any pending one of the address here, whose link stops working.
            tx.add(tx.drop_pending_invitations(slug, email))
            tx.add(invitation, tx.audit_entry(slug, "invitation.created", actor, {"email": email, "role": role}, at))
            return invitation.document

        doc = self.repo.unit_of_work(work)
        origin = self.link_origin(fields.get("origin"))
        link = self.site_url(origin, slug, "/join?" + urlencode({"token": token}))
        self.mail.invitation(slug, email, role, self._inviter(caller), link,
                             self.config.invitation_seconds // 86400, key=str(doc["_id"]),
                             board=self.site_url(origin, slug, "/"), chosen=person.get("locale") if person else None,
                             asked=fields.get("locale"))
        shown = {"link": link} if caller.kind == auth.ADMIN else {}
        return {**shapes.invitation(doc), **shown}

    def _inviter(self, caller: auth.Caller) -> str | None:
        """Who an invitation says it is from: the member who sent it, signed in or through a key
        they made, by name and address (the address is what the invited can check); None for
        the operator and the operator's keys, who are nobody to the invited: the mail then
        invites in the workspace's name."""
        if caller.kind == auth.ADMIN:
            return None
        if caller.email and not caller.key_id and (caller.user_id or "").startswith(auth.PERSON_PREFIX):
            return _named(caller.name, caller.email)
        maker = (caller.key_maker or "").removeprefix(auth.PERSON_PREFIX) if caller.key_id else ""
        if ObjectId.is_valid(maker):
            person = self.repo.persons_by_id([ObjectId(maker)]).get(ObjectId(maker))
            if person is not None:
                return _named(person.get("name"), person["email"])
        return None

    def invitations(self, caller: auth.Caller, slug: str) -> dict:
        self.workspaces.require_manager(caller, slug)
        return {"items": [shapes.invitation(d) for d in self.repo.pending_invitations(slug, now())]}

    def revoke_invitation(self, caller: auth.Caller, slug: str, invitation_id: str) -> None:
        self._require_owner(caller, slug)
        oid = object_id(invitation_id, "invitation")

        def work(tx: PeopleRepository) -> None:
            invitation = tx.pending_invitation(slug, oid)
            if invitation is None:
                raise NotFound(f"no pending invitation {invitation_id}")
            tx.add(tx.revoke_invitation(oid),
                   tx.audit_entry(slug, "invitation.revoked", auth.actor(caller), {"email": invitation["email"]}, now()))

        self.repo.unit_of_work(work)

    def accept_invitation(self, slug: str, body) -> dict:
        """Join the team with the invitation's role and sign in: the link reached the address,
        which proves it. ``next``: where the new member lands, their workspace's board (whose
        pages show a member the team's own)."""
        token = check(body, schemas.REDEEM)["token"]

        def work(tx: PeopleRepository) -> dict:
            at = now()
            invitation = tx.live_invitation(tokens.digest(token), slug, at)
            if invitation is None:
                raise BadRequest("this invitation is not valid here, was used already or has expired; ask for a new one")
            inviter = invitation.get("inviterPerson")
            if inviter and self._team_role(slug, inviter, tx) != "owner":
                # The inviter left the team or is no longer an owner: what they sent goes with them.
                raise BadRequest("this invitation is no longer valid: whoever sent it no longer manages this team; ask for a new one")
            tx.add(tx.accept_invitation(invitation["_id"], at), tx.touch_team(slug))
            person = tx.person_for_email(invitation["email"], invitation["email"].split("@")[0], None, at)
            membership = tx.membership(slug, person["_id"])
            if membership is None:
                joined = tx.new_member(slug, person["_id"], invitation["role"], at)
                tx.add(joined)
                membership = joined.document
            elif membership["role"] != "owner" and invitation["role"] == "owner":  # a member keeps the higher role
                tx.add(tx.set_role(slug, person["_id"], "owner"))
                membership = {**membership, "role": "owner"}
            actor = actor_of(person)
            started, writes = self._start(slug, person, membership["role"], "invitation")
            tx.add(tx.audit_entry(slug, "invitation.accepted", actor,
                                  {"email": person["email"], "role": membership["role"]}, at),
                   self._member_event(slug, contract.MEMBER_JOINED, person, membership["role"], actor, at), *writes)
            return {**started, "next": f"/b/{slug}"}

        return self.repo.unit_of_work(work, hot_key=f"team:{slug}")

    def change_role(self, caller: auth.Caller, slug: str, person_id: str, body) -> dict:
        """A role change ends the member's sessions here: they sign in again with the new role
        (a session never outlives the rights it was opened with)."""
        self._require_owner(caller, slug)
        role = check(body, schemas.CHANGE_ROLE)["role"]
        oid = object_id(person_id, "member")

        def work(tx: PeopleRepository) -> dict:
            at = now()
            # Every change of the team writes its document: of two at once, one conflicts and
            # runs again, reading what the other did (so the last owner stays one).
            tx.add(tx.touch_team(slug))
            membership = self._membership(tx, slug, oid)
            if membership["role"] == "owner" and role != "owner" and tx.owner_count(slug) <= 1:
                raise Conflict("the last owner cannot be demoted; make another member an owner first")
            person = tx.person(oid)
            if membership["role"] != role:
                tx.add(tx.set_role(slug, oid, role), tx.end_sessions(oid, slug))
                if membership["role"] == "owner":  # what they sent as an owner goes with the role
                    tx.add(tx.drop_invitations_of(slug, person_user_id(oid)))
                actor = auth.actor(caller)
                tx.add(tx.audit_entry(slug, "member.role_changed", actor,
                                      {"member": actor_of(person), "from": membership["role"], "to": role}, at),
                       self._member_event(slug, contract.MEMBER_ROLE_CHANGED, person, role, actor, at))
            return shapes.member({**membership, "role": role}, person)

        return self.repo.unit_of_work(work, hot_key=f"team:{slug}")

    def remove(self, caller: auth.Caller, slug: str, person_id: str) -> None:
        """Remove a member: their sessions here end at once."""
        self._require_owner(caller, slug)
        oid = object_id(person_id, "member")

        def work(tx: PeopleRepository) -> None:
            at = now()
            tx.add(tx.touch_team(slug))  # as in change_role
            membership = self._membership(tx, slug, oid)
            if membership["role"] == "owner" and tx.owner_count(slug) <= 1:
                raise Conflict("the last owner cannot be removed; make another member an owner first")
            person = tx.person(oid)
            actor = auth.actor(caller)
            tx.add(tx.remove_member(slug, oid), tx.end_sessions(oid, slug), tx.drop_invitations_of(slug, person_user_id(oid)),
                   tx.audit_entry(slug, "member.removed", actor,
                                  {"member": actor_of(person), "role": membership["role"]}, at),
                   self._member_event(slug, contract.MEMBER_REMOVED, person, membership["role"], actor, at))

        self.repo.unit_of_work(work, hot_key=f"team:{slug}")

    @staticmethod
    def _membership(tx: PeopleRepository, slug: str, person_id: ObjectId) -> dict:
        membership = tx.membership(slug, person_id)
        if membership is None:
            raise NotFound(f"no member {person_id} in this workspace")
        return membership

    def _member_event(self, slug: str, type_: str, person: dict, role: str, actor: dict | None, at: datetime) -> Insert:
        data = {"person": {"id": str(person["_id"]), "email": person["email"], "name": person["name"]}, "role": role,
                "actor": actor, "at": iso(at)}
        return self.repo.event(slug, type_, data)

    # -- sign-in settings and the audit log ---------------------------------------------------

    def end_user_methods(self, slug: str) -> tuple[str, ...]:
        doc = self.repo.sign_in_settings(slug)
        return tuple(doc["endUserMethods"]) if doc else contract.DEFAULT_END_USER_METHODS

    def sign_in_settings(self, slug: str) -> dict:
        """Public: the board's sign-in page shows the methods offered."""
        self.workspaces.require(slug)
        return shapes.sign_in_settings(slug, self.repo.sign_in_settings(slug), contract.DEFAULT_END_USER_METHODS,
                                       self.repo.oidc_button(slug))

    def update_sign_in_settings(self, caller: auth.Caller, slug: str, body) -> dict:
        self._require_owner(caller, slug)
        fields = check(body, schemas.SIGN_IN_SETTINGS)

        def work(tx: PeopleRepository) -> None:
            at = now()
            tx.add(tx.set_sign_in_settings(slug, fields, at))
            tx.add(tx.audit_entry(slug, "sign_in_settings.changed", auth.actor(caller), {"fields": sorted(fields)}, at))

        self.repo.unit_of_work(work)
        return shapes.sign_in_settings(slug, self.repo.sign_in_settings(slug), contract.DEFAULT_END_USER_METHODS,
                                       self.repo.oidc_button(slug))

    def audit_log(self, caller: auth.Caller, slug: str, limit: int, offset: int, type_: str | None = None) -> dict:
        """A page of the audit log, newest first; ``type_``: only the entries of that type."""
        self.workspaces.require_manager(caller, slug)
        return {"items": [shapes.audit_entry(d) for d in self.repo.audit_page(slug, limit, offset, type_)]}

    def record_event(self, event: dict) -> None:
        """An event of another service the audit log keeps (``consumers``), once per event (a
        redelivery finds its entry there: its id is derived from the event's)."""
        type_ = contract.AUDITED_EVENTS.get(event.get("type"))
        if type_ is None:
            return
        data = dict(event["data"])
        actor = data.pop("actor", None)
        # When it happened, not when this consumer heard of it: an event heard late (a consumer
        # catching up) takes its place in the log's time order, not the top.
        self.repo.record(event["workspace"], type_, actor, data, _event_time(event), entry_id=_entry_id(event["id"]))

    # -- addresses -----------------------------------------------------------------------------

    def origin(self, slug: str, claimed: str | None) -> str:
        """The origin a visitor's browser is on: the platform's public address, or this
        workspace's verified custom domain over https. Anything else is refused: links, passkeys
        and sign-in redirects are bound to it."""
        if not claimed:
            return self.public_origin
        if not claimed.isascii():  # browsers send an Origin in ASCII (IDNA), as domains are kept
            raise BadRequest("origin must be the platform's public address or this workspace's verified domain")
        if claimed in self.public_origins:
            return claimed
        parts = urlsplit(claimed)
        if parts.scheme == "https" and parts.hostname and self.hosts(parts.hostname) == slug:
            return f"https://{parts.netloc}"
        raise BadRequest("origin must be the platform's public address or this workspace's verified domain")

    def link_origin(self, asked: str | None) -> str:
        """Where a link the platform hands out leads: ``asked`` when it is one of the platform's
        own public addresses (``PUBLIC_BASE_URL``, and ``http://localhost:<port>`` where that is
        a loopback address), else ``PUBLIC_BASE_URL``. Asked in the body, never read from a
        request header: ``feedback invite`` names the address it called the platform at, so a
        link leads where the operator is, and never to another site."""
        return asked if asked in self.public_origins else self.public_origin

    def site_url(self, origin: str, slug: str, path: str) -> str:
        """A page of the workspace's board on ``origin`` (a custom domain serves the board at its root)."""
        return f"{origin}{'/b/' + quote(slug) if origin in self.public_origins else ''}{path}"

    @staticmethod
    def _next(slug: str, value: str | None) -> str | None:
        """A path of this workspace's board to show after signing in, or None: never another site."""
        base = f"/b/{slug}"
        if value and (value == base or value.startswith(base + "/") or value.startswith(base + "?")) and "//" not in value \
                and "\\" not in value:
            return value
        return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _aliases(origin: str) -> frozenset[str]:
    """The platform's public origin and, when it is a loopback address, the same port on
    ``localhost``: one machine, and the only spelling browsers accept for passkeys (WebAuthn
    refuses an IP address as its relying party), e.g. ``make run``'s http://127.0.0.1:8080."""
    parts = urlsplit(origin)
    if parts.hostname in ("127.0.0.1", "::1"):
        return frozenset({origin, f"{parts.scheme}://localhost{':' + str(parts.port) if parts.port else ''}"})
    return frozenset({origin})


def session_proven(doc: dict) -> bool:
    """Whether a stored session rests on the platform's own proof of its address."""
    proven = doc.get("proven")
    return doc.get("method") in PROVEN_METHODS if proven is None else bool(proven)


def _named(name: str | None, email: str) -> str:
    """A person as a mail names them: ``Ann (ann@example.com)``, or the address alone."""
    return f"{name} ({email})" if name and name != email else email


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _caller_fields(caller: auth.Caller) -> dict:
    return json.loads(caller.to_header())


def _actor_of_session(doc: dict) -> dict:
    return {"id": doc["userId"], "name": doc.get("name") or "Someone"}


def _event_time(event: dict) -> datetime:
    """The event's own time (its envelope's ``timestamp``), else now."""
    try:
        at = datetime.fromisoformat(str(event.get("timestamp")).replace("Z", "+00:00"))
    except ValueError:
        return now()
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _entry_id(event_id: str) -> ObjectId:
    return ObjectId(hashlib.sha256(event_id.encode()).digest()[:12])
