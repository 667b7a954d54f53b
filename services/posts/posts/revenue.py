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

from common.claims import MEMBER_PREFIXES
from common.db import Write
from posts.repository import PostRepository
from posts.scores import Scores


class Revenue:
    def __init__(self, repo: PostRepository, scores: Scores):
        self.repo = repo
        self.scores = scores  # a post's score follows its revenue

    # -- votes ------------------------------------------------------------------------------

    def voter(self, tx: PostRepository, slug: str, user: str) -> tuple[list[str], list[Write]]:
        """The voter's companies as the unit of work ``tx`` reads them, and the write that makes
        a concurrent change of them conflict with it."""
        if not user.startswith(MEMBER_PREFIXES):
            return [], []
        view = tx.member_view(slug, user)
        return (view or {}).get("companies", []), [tx.touch_member(slug, user)]

    def count(self, tx: PostRepository, slug: str, post_id: str, companies: list[str], step: int) -> tuple[int, list[Write]]:
        """A vote from members of ``companies`` starts (``step`` 1) or stops (-1) counting for
        ``post_id``: the change of its revenue in cents, and the writes that record it."""
        if not companies:
            return 0, []
        voters = tx.company_voters(post_id, companies)
        # A company adds or takes its spend when its first vote comes or its last one goes.
        edge = [c for c in companies if voters.get(c, 0) == (0 if step > 0 else 1)]
        spends = tx.spends(slug, edge) if edge else {}
        writes = [tx.count_company(slug, post_id, c, step) for c in companies]
        writes += [tx.touch_company(slug, c, step) for c in edge]
        return step * sum(spends.get(c, 0) for c in edge), writes

    # -- merges -----------------------------------------------------------------------------

    def retally(self, tx: PostRepository, slug: str, post_id: str) -> tuple[int, list[Write]]:
        """Count ``post_id``'s companies again from the votes that count for it now, as the unit
        of work ``tx`` reads them (after a merge or an unmerge moved some): its revenue in
        cents, and the writes that record it."""
        tally = Counter(c for companies in tx.counted_companies(post_id) for c in companies)
        before = tx.post_companies(post_id)
        writes: list[Write] = []
        for company in set(tally) | set(before):
            if tally[company] != before.get(company, 0):
                writes.append(tx.set_company_voters(slug, post_id, company, tally[company]))
            if (tally[company] > 0) != (before.get(company, 0) > 0):
                writes.append(tx.touch_company(slug, company, 1 if tally[company] else -1))
        spends = tx.spends(slug, list(tally)) if tally else {}
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

        def work(tx: PostRepository) -> None:
            view = tx.member_view(slug, user)
            before = (view or {}).get("companies", [])
            gone = [c for c in before if c not in companies]
            new = [c for c in companies if c not in before]
            tx.add(tx.set_member(slug, user, companies), tx.set_vote_companies(slug, user, companies))
            counted = tx.counted_posts_of(slug, user)
            posts = tx.posts_in(slug, counted) if counted and (gone or new) else {}
            for counts_for, post in posts.items():
                taken, lost = self.count(tx, slug, counts_for, gone, -1)
                added, won = self.count(tx, slug, counts_for, new, 1)
                tx.add(*lost, *won)
                if taken + added:
                    post = {**post, "revenueCents": post.get("revenueCents", 0) + taken + added}
                    tx.add(*tx.set_revenue(slug, counts_for, post["revenueCents"], self.scores.of(tx, slug, post)))

        self.repo.unit_of_work(work, hot_key=f"member {slug} {user}")

    def _resum(self, slug: str, post_id: str) -> None:
        def work(tx: PostRepository) -> None:
            post = tx.posts_in(slug, [post_id]).get(post_id)
            if post is None:
                return
            counting = [c for c, n in tx.post_companies(post_id).items() if n > 0]
            total = sum(tx.spends(slug, counting).values()) if counting else 0
            scored = self.scores.of(tx, slug, {**post, "revenueCents": total})
            tx.add(*tx.set_revenue(slug, post_id, total, scored))

        self.repo.unit_of_work(work, hot_key=post_id)
