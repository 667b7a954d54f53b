"""The revenue behind each post: the monthly spend of the distinct companies whose people's votes
count for it (docs/services/companies.md, "Revenue"). Team only.

The companies service owns companies and who belongs to them; this service keeps what it needs
of its events (``CompanyView``: a company's spend; ``MemberView``: a user's companies) and, per
post, how many counted votes come from each company (``PostCompany``). A company adds its spend
to a post's ``revenueCents`` while that count is above zero: once, however many of its people
voted. Votes, merges and changes of companies move these in transactions, and each side writes
the document the other reads (a voter's ``MemberView``, a company's ``CompanyView`` when it
starts or stops counting on a post), so a vote and a concurrent change of spend or membership
conflict and one runs again, instead of one missing the other.
"""

from __future__ import annotations

from collections import Counter

from pymongo.client_session import ClientSession

from common.claims import MEMBER_PREFIXES
from common.db import Write
from posts.repository import PostRepository
from posts.scores import Scores


class Revenue:
    def __init__(self, repo: PostRepository, scores: Scores):
        self.repo = repo
        self.scores = scores  # a post's score follows its revenue

    # -- votes ------------------------------------------------------------------------------

    def voter(self, session: ClientSession, slug: str, user: str) -> tuple[list[str], list[Write]]:
        """The voter's companies as this transaction reads them, and the write that makes a
        concurrent change of them conflict with this transaction."""
        if not user.startswith(MEMBER_PREFIXES):
            return [], []
        view = self.repo.member_view(session, slug, user)
        return (view or {}).get("companies", []), [self.repo.touch_member(slug, user)]

    def count(self, session: ClientSession, slug: str, post_id: str, companies: list[str], step: int) -> tuple[int, list[Write]]:
        """A vote from members of ``companies`` starts (``step`` 1) or stops (-1) counting for
        ``post_id``: the change of its revenue in cents, and the writes that record it."""
        if not companies:
            return 0, []
        voters = self.repo.company_voters(session, post_id, companies)
        # A company adds or takes its spend when its first vote comes or its last one goes.
        edge = [c for c in companies if voters.get(c, 0) == (0 if step > 0 else 1)]
        spends = self.repo.spends(session, slug, edge) if edge else {}
        writes = [self.repo.count_company(slug, post_id, c, step) for c in companies]
        writes += [self.repo.touch_company(slug, c, step) for c in edge]
        return step * sum(spends.get(c, 0) for c in edge), writes

    # -- merges -----------------------------------------------------------------------------

    def retally(self, session: ClientSession, slug: str, post_id: str) -> tuple[int, list[Write]]:
        """Count ``post_id``'s companies again from the votes that count for it now (after a
        merge or an unmerge moved some): its revenue in cents, and the writes that record it."""
        tally = Counter(c for companies in self.repo.counted_companies(session, post_id) for c in companies)
        before = self.repo.post_companies(session, post_id)
        writes: list[Write] = []
        for company in set(tally) | set(before):
            if tally[company] != before.get(company, 0):
                writes.append(self.repo.set_company_voters(slug, post_id, company, tally[company]))
            if (tally[company] > 0) != (before.get(company, 0) > 0):
                writes.append(self.repo.touch_company(slug, company, 1 if tally[company] else -1))
        spends = self.repo.spends(session, slug, list(tally)) if tally else {}
        return sum(spends.values()), writes

    # -- feedback.companies -----------------------------------------------------------------

    def company_updated(self, slug: str, company_id: str, spend_cents: int, name: str | None = None) -> None:
        """A company's spend changed: every post it counts on is summed again."""
        self.repo.set_company(slug, company_id, name, spend_cents)
        for post_id in self.repo.posts_counting(slug, company_id):
            self._resum(slug, post_id)

    def company_deleted(self, slug: str, company_id: str) -> None:
        """Nobody belongs to the company any more: it counts on no post."""
        for user in self.repo.members_of(slug, company_id):
            self.membership_changed(slug, user["userId"], [c for c in user["companies"] if c != company_id])
        self.company_updated(slug, company_id, 0)

    def membership_changed(self, slug: str, user: str, companies: list[str]) -> None:
        """A user's companies are now ``companies``: each of their votes counts for them."""

        def work(session):
            view = self.repo.member_view(session, slug, user)
            before = (view or {}).get("companies", [])
            gone = [c for c in before if c not in companies]
            new = [c for c in companies if c not in before]
            writes: list[Write] = [self.repo.set_member(slug, user, companies), self.repo.set_vote_companies(slug, user, companies)]
            counted = self.repo.counted_posts_of(session, slug, user)
            posts = self.repo.posts_in(session, slug, counted) if counted and (gone or new) else {}
            for counts_for, post in posts.items():
                taken, lost = self.count(session, slug, counts_for, gone, -1)
                added, won = self.count(session, slug, counts_for, new, 1)
                writes += [*lost, *won]
                if taken + added:
                    post = {**post, "revenueCents": post.get("revenueCents", 0) + taken + added}
                    writes += self.repo.set_revenue(slug, counts_for, post["revenueCents"], self.scores.of(session, slug, post))
            self.repo.write(session, writes)

        self.repo.transaction(work, hot_key=f"member {slug} {user}")

    def _resum(self, slug: str, post_id: str) -> None:
        def work(session):
            post = self.repo.posts_in(session, slug, [post_id]).get(post_id)
            if post is None:
                return
            counting = [c for c, n in self.repo.post_companies(session, post_id).items() if n > 0]
            total = sum(self.repo.spends(session, slug, counting).values()) if counting else 0
            scored = self.scores.of(session, slug, {**post, "revenueCents": total})
            self.repo.write(session, self.repo.set_revenue(slug, post_id, total, scored))

        self.repo.transaction(work, hot_key=post_id)
