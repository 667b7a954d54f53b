"""A write key votes on someone's behalf (a support integration) and learns nothing of the
person it names: not their name, address, companies or spend, nor what the team noted of an
earlier vote. Its answer is the same receipt whether it added the vote or the person counted
already, so naming addresses is no lookup. The team keeps the full answer (docs/services/posts.md,
"Votes on someone's behalf")."""

import uuid

RECEIPT = {"postId", "voteCount", "created"}
TEAM_ONLY = ("email", "name", "companies", "monthlySpend", "addedBy", "note", "source", "userId")


def company(ws, company_id: str, spend: float, email: str) -> None:
    r = ws.api.put(f"{ws.path}/companies/{company_id}", key=ws.key, json={"name": company_id.title(), "monthlySpend": spend})
    assert r.status_code in (200, 201), r.text
    r = ws.api.post(f"{ws.path}/companies/{company_id}/members", key=ws.key, json={"email": email})
    assert r.status_code == 200, r.text


def write_key(board) -> str:
    r = board.api.post(f"{board.ws.path}/api-keys", key=board.ws.key, json={"name": "helpdesk", "role": "write"})
    assert r.status_code == 201, r.text
    return r.json()["key"]


def test_a_write_key_reads_nothing_of_the_person_it_votes_for(board):
    email = f"buyer-{uuid.uuid4().hex[:8]}@example.com"
    company(board.ws, "acme", 4200, email)
    post = board.post("Usage-based billing")
    votes = f"{board.path}/{post['id']}/votes"
    # The team added the person's vote first, with a note of its own.
    r = board.api.post(votes, key=board.ws.key, json={"email": email, "source": {"text": "Sales call"}, "note": "Renewal at risk"})
    assert r.status_code == 201 and r.json()["email"] == email, r.text

    helpdesk = write_key(board)
    again = board.api.post(votes, key=helpdesk, json={"email": email, "source": {"text": "Zendesk #1"}})
    assert again.status_code == 200, again.text
    assert again.json() == {"postId": post["id"], "voteCount": 1, "created": False}
    for secret in (email, "Acme", "4200", "Renewal at risk", "Sales call"):
        assert secret not in again.text, f"{secret!r} reached a write key"

    other = board.post("Audit log export")
    first = board.api.post(f"{board.path}/{other['id']}/votes", key=helpdesk, json={"email": email, "note": "From a ticket"})
    assert first.status_code == 201, first.text
    assert first.json() == {"postId": other["id"], "voteCount": 1, "created": True}
    assert set(first.json()) == set(again.json()) == RECEIPT, "a repeat has the first answer's shape"
    assert not any(field in first.json() for field in TEAM_ONLY)
    assert email not in first.text and "Acme" not in first.text


def test_the_team_keeps_the_full_answer_and_sees_the_write_keys_vote(board):
    email = f"buyer-{uuid.uuid4().hex[:8]}@example.com"
    post = board.post("Webhooks for invoices")
    votes = f"{board.path}/{post['id']}/votes"
    helpdesk = write_key(board)
    r = board.api.post(votes, key=helpdesk, json={"email": email, "source": {"text": "Zendesk #2"}, "note": "Asked twice"})
    assert r.status_code == 201 and set(r.json()) == RECEIPT, r.text
    team = board.api.post(votes, key=board.ws.key, json={"email": email})
    assert team.status_code == 200, team.text
    voter = team.json()
    assert voter["email"] == email and voter["userId"].startswith("person:")
    assert voter["addedBy"]["name"] == "helpdesk" and voter["note"] == "Asked twice"
    assert voter["source"] == {"text": "Zendesk #2"}
    listed = board.api.get(votes, key=board.ws.key).json()["items"]
    assert [v["email"] for v in listed] == [email]

