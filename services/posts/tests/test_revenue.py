"""The revenue behind each post (posts.revenue): the monthly spend of the distinct companies
whose people's votes count for it, through the platform: companies and members set on the
companies service's API reach the posts service by their events."""

import uuid
from concurrent.futures import ThreadPoolExecutor

from testkit import assert_error, wait_for


def company(ws, company_id: str, spend: float, *members: str) -> None:
    r = ws.api.put(f"{ws.path}/companies/{company_id}", key=ws.key, json={"name": company_id.title(), "monthlySpend": spend})
    assert r.status_code in (200, 201), r.text
    for user in members:
        r = ws.api.post(f"{ws.path}/companies/{company_id}/members", key=ws.key, json={"userId": f"sso:{user}"})
        assert r.status_code == 200, r.text


def revenue_becomes(board, post_id: str, value: float) -> None:
    wait_for(lambda: board.manager_get(post_id)["revenue"] == value, timeout=30,
             what=f"revenue {value} (now {board.manager_get(post_id)['revenue']})")


def vote(board, post_id: str, user: str, method: str = "POST") -> None:
    r = board.api.call(method, f"{board.path}/{post_id}/vote", user=board.ws.user_token(user))
    assert r.status_code in (200, 201), r.text


def test_each_company_counts_once_per_post_however_many_of_its_people_vote(board):
    company(board.ws, "acme", 1000, "a1", "a2", "a3")
    company(board.ws, "globex", 250.5, "g1")
    post = board.post("SAML sign-in")
    assert post["revenue"] == 0
    for user in ("a1", "a2", "g1", "nobody"):
        vote(board, post["id"], user)
    revenue_becomes(board, post["id"], 1250.5)
    assert board.manager_get(post["id"])["voteCount"] == 4
    vote(board, post["id"], "a1", "DELETE")
    revenue_becomes(board, post["id"], 1250.5)  # a2 still speaks for acme
    vote(board, post["id"], "a2", "DELETE")
    revenue_becomes(board, post["id"], 250.5)


def test_revenue_follows_a_companys_spend_members_and_removal(board):
    company(board.ws, "acme", 1000, "a1")
    post = board.post("Audit log export")
    vote(board, post["id"], "a1")
    vote(board, post["id"], "later")
    revenue_becomes(board, post["id"], 1000)
    company(board.ws, "acme", 4000)
    revenue_becomes(board, post["id"], 4000)
    company(board.ws, "initech", 300, "later")  # joins after voting: the vote counts for it now
    revenue_becomes(board, post["id"], 4300)
    r = board.api.delete(f"{board.ws.path}/companies/acme/members/sso:a1", key=board.ws.key)
    assert r.status_code == 204, r.text
    revenue_becomes(board, post["id"], 300)
    assert board.api.delete(f"{board.ws.path}/companies/initech", key=board.ws.key).status_code == 204
    revenue_becomes(board, post["id"], 0)


def test_a_merge_counts_a_company_once_and_an_unmerge_gives_it_back(board):
    company(board.ws, "acme", 1000, "a1", "a2")
    company(board.ws, "globex", 500, "g1")
    a, b = board.post("Dark mode"), board.post("Night theme")
    vote(board, a["id"], "a1")
    vote(board, a["id"], "g1")
    vote(board, b["id"], "a2")
    vote(board, b["id"], "g1")  # counts on b already: kept aside on merge
    revenue_becomes(board, a["id"], 1500)
    revenue_becomes(board, b["id"], 1500)
    r = board.api.post(f"{board.path}/{a['id']}/merge", key=board.ws.key, json={"intoPostId": b["id"]})
    assert r.status_code == 200, r.text
    assert board.manager_get(b["id"])["revenue"] == 1500 and board.manager_get(a["id"])["revenue"] == 0
    vote(board, b["id"], "a2", "DELETE")
    assert board.manager_get(b["id"])["revenue"] == 1500, "a1's vote, moved from a, speaks for acme"
    assert board.api.post(f"{board.path}/{a['id']}/unmerge", key=board.ws.key).status_code == 200
    assert board.manager_get(a["id"])["revenue"] == 1500
    assert board.manager_get(b["id"])["revenue"] == 500


def test_concurrent_votes_of_one_company_count_it_once_while_its_spend_changes(board):
    people = [f"p{i}" for i in range(12)]
    company(board.ws, "acme", 100, *people)
    post = board.post("Single sign-on")
    board.ws.user_token("first")  # sets the workspace's SSO secret once, before the threads make tokens
    wait_for(lambda: board.api.get(f"{board.ws.path}/companies/acme/members", key=board.ws.key).json()["items"], timeout=10)

    def spend(amount):
        company(board.ws, "acme", amount)

    with ThreadPoolExecutor(6) as pool:
        jobs = [pool.submit(vote, board, post["id"], user) for user in people]
        jobs += [pool.submit(spend, amount) for amount in (200, 300, 700)]
        for job in jobs:
            job.result()
    company(board.ws, "acme", 900)
    revenue_becomes(board, post["id"], 900)
    assert board.manager_get(post["id"])["voteCount"] == len(people)


def test_revenue_and_its_order_are_the_teams_only(board):
    company(board.ws, "acme", 5000, "rich")
    company(board.ws, "tiny", 5, "poor")
    cheap, dear = board.post("Cheap idea"), board.post("Dear idea")
    vote(board, cheap["id"], "poor")
    vote(board, dear["id"], "rich")
    revenue_becomes(board, dear["id"], 5000)
    revenue_becomes(board, cheap["id"], 5)
    team = board.api.get(board.path, key=board.ws.key, params={"sort": "revenue"}).json()["items"]
    assert [p["id"] for p in team][:2] == [dear["id"], cheap["id"]]
    read_key = board.api.post(f"{board.ws.path}/api-keys", key=board.ws.key, json={"name": "r", "role": "read"}).json()["key"]
    for who in ({"user": board.ws.user_token("rich")}, {"key": read_key}, {}):
        assert "revenue" not in board.api.get(f"{board.path}/{dear['id']}", **who).json()
        assert all("revenue" not in p for p in board.api.get(board.path, **who).json()["items"])
        assert "team" in assert_error(board.api.get(board.path, params={"sort": "revenue"}, **who), 403)


# -- votes on someone's behalf, and the team's list of voters -----------------------------------


def test_a_vote_on_behalf_by_email_and_the_persons_own_vote_later_count_once(board, maildir):
    from services.people.tests.helpers import sign_in_by_mail

    email = f"buyer-{uuid.uuid4().hex[:8]}@example.com"
    company(board.ws, "acme", 700)
    post = board.post("Usage-based billing")
    r = board.api.post(f"{board.path}/{post['id']}/votes", key=board.ws.key,
                       json={"email": email, "source": {"text": "Zendesk #4411", "url": "https://acme.zendesk.com/tickets/4411"},
                             "note": "Blocks their renewal"})
    assert r.status_code == 201, r.text
    added = r.json()
    assert added["email"] == email and added["userId"].startswith("person:")
    assert added["addedBy"]["id"].startswith("key:") and added["source"]["text"] == "Zendesk #4411"
    r = board.api.post(f"{board.ws.path}/companies/acme/members", key=board.ws.key, json={"email": email})
    assert r.json()["userId"] == added["userId"], "the same person for the same address"
    revenue_becomes(board, post["id"], 700)

    session = sign_in_by_mail(board.ws, maildir, email)
    own = board.api.post(f"{board.path}/{post['id']}/vote", key=session["token"])
    assert own.status_code == 200, own.text  # voted already, on their behalf
    assert own.json()["voted"] is True and own.json()["voteCount"] == 1
    voters = board.api.get(f"{board.path}/{post['id']}/votes", key=board.ws.key).json()["items"]
    assert len(voters) == 1
    assert voters[0]["note"] == "Blocks their renewal"
    assert voters[0]["companies"] == [{"id": "acme", "name": "Acme", "monthlySpend": 700}]


def test_who_may_vote_on_behalf_and_see_the_voters(board):
    post = board.post("Webhooks for invoices")
    path = f"{board.path}/{post['id']}/votes"
    keys = {role: board.api.post(f"{board.ws.path}/api-keys", key=board.ws.key, json={"name": role, "role": role}).json()["key"]
            for role in ("read", "write")}
    user = board.ws.user_token("someone")
    assert_error(board.api.post(path, json={"userId": "sso:x"}), 401)
    assert_error(board.api.post(path, user=user, json={"userId": "sso:x"}), 403)
    assert_error(board.api.post(path, key=keys["read"], json={"userId": "sso:x"}), 403)
    r = board.api.post(path, key=keys["write"], json={"userId": "sso:from-crm", "source": {"text": "HubSpot"}})
    assert r.status_code == 201, r.text
    assert r.json() == {"postId": post["id"], "voteCount": 1, "created": True}, "a receipt: test_write_key_votes.py"
    for who in ({"user": user}, {"key": keys["read"]}, {"key": keys["write"]}):
        assert_error(board.api.get(path, **who), 403)
    assert_error(board.api.get(path), 401)
    again = board.api.post(f"{board.path}/{post['id']}/vote", user=board.ws.user_token("from-crm"))
    assert again.status_code == 200 and again.json()["voteCount"] == 1, again.text
    assert_error(board.api.post(path, key=board.ws.key, json={"userId": "sso:x", "email": "a@b.co"}), 400)
    assert_error(board.api.post(path, key=board.ws.key, json={}), 400)
    assert_error(board.api.post(path, key=board.ws.key, json={"userId": "anon:x"}), 400)
    assert_error(board.api.post(path, key=board.ws.key, json={"userId": "sso:x", "source": {"text": "x", "url": "javascript:alert(1)"}}), 400)


def test_a_vote_counts_for_the_companies_its_sso_token_claims(board):
    token = board.ws.user_token("claimer", companies=[{"id": "initech", "name": "Initech", "monthlySpend": 899.99}])
    post = board.post("Bulk user import")
    r = board.api.post(f"{board.path}/{post['id']}/vote", user=token)
    assert r.status_code == 201, r.text
    revenue_becomes(board, post["id"], 899.99)
