"""The posts service's collections, declared with mongoengine (fields and indexes).

Reads and writes go through pymongo on these collections (``store.collection(Model)``),
inside transactions where an outbox event goes with the change.
"""

from mongoengine import (
    BinaryField,
    BooleanField,
    DateTimeField,
    DictField,
    Document,
    FloatField,
    IntField,
    ListField,
    ObjectIdField,
    StringField,
)

ALIAS = "posts"


class Post(Document):
    workspace = StringField(required=True)
    boardId = StringField(required=True)
    title = StringField(required=True)
    content = StringField(default="")
    statusSlug = StringField(required=True)
    voteCount = IntField(default=0)  # distinct voters of the post and the posts merged into it
    # The monthly spend of the distinct companies behind its counted votes, in cents (team
    # only: posts.revenue keeps it).
    revenueCents = IntField(default=0)
    # Triage (posts.triage): what a manager set (tags by slug, custom field values by key, the
    # owner as {id, name}, the ETA as YYYY-MM), and what is computed from it with the
    # workspace's settings of version scoreVersion: the score, and the filterable facets.
    tags = ListField(StringField())
    fields = DictField()
    owner = DictField(null=True)
    eta = StringField(null=True)
    score = FloatField(null=True)
    facets = ListField(StringField())
    scoreVersion = IntField(default=0)
    commentCount = IntField(default=0)  # public comments
    privateCommentCount = IntField(default=0)  # team-only comments (managers see the sum)
    verified = BooleanField(default=False)  # author identified: SSO user or manager
    moderationState = StringField(required=True)
    listed = BooleanField(default=True)  # approved and not merged: what non-managers see
    authorId = StringField(required=True)
    # Who wrote it, as the board shows them: {name, avatarUrl, team} of a person or an SSO user
    # when they wrote it (absent for API keys, the operator, anonymous visitors, and posts
    # written before authors were kept). posts.shapes.Reader decides who sees it.
    author = DictField(null=True)
    mergedInto = DictField(null=True)  # {id, title, moderationState} of the post this one is merged into
    mergedPosts = ListField(DictField())  # [{id, title, moderationState, voteCount}] merged into this one
    terms = ListField(StringField())  # search keys of title and content (posts.text.index_terms)
    titleTerms = ListField(StringField())  # the title's features, for scoring
    # The title's sentence vector (posts.embeddings: float16 bytes), and the model that made
    # it; a post whose title has no vector yet (or one of another model) is the backfill's.
    embedding = BinaryField(null=True)
    embeddingModel = StringField(null=True)
    # The last public comment: when, and whether a team member wrote it (absent until the
    # first one). Set by the write that adds the comment, so board statistics find posts
    # awaiting the team's answer without reading comments.
    lastCommentAt = DateTimeField()
    lastCommentByTeam = BooleanField()
    # Who last changed the status, and when (common.auth.actor's {id, name}; absent until the
    # first change): the post.status_changed event says it too, this keeps it with the post.
    statusChangedBy = DictField(null=True)
    # What happened to it, oldest first, at most contract.HISTORY_MAX entries (posts.shapes.history):
    # status changes and merges, each {type, at, actor, ...} written with the change itself.
    history = ListField(DictField())
    statusChangedAt = DateTimeField()
    createdAt = DateTimeField(required=True)
    updatedAt = DateTimeField(required=True)
    # When the query indexes last needed to hear of this post (ns, stamped by every write that
    # changes what lists, the roadmap or search show): API processes catch up by it.
    changedAt = IntField(required=True)
    # An imported post's key: ``<workspace>/<source>:<its id there>`` (posts.imports), so the
    # same file imported again updates it.
    importKey = StringField(null=True)
    COLLECTION = "posts"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            # The mongo read engine's pages (posts.repository.page_cursor): per population, the
            # equality prefix, then the sort's keys, so a page is an index walk that stops at
            # the page. "newest" and "oldest" walk the same index in opposite directions; the
            # other filters (board, status, moderation, words) are checked during the walk.
            *[
                (*population, sort, "-_id")
                for population in (("workspace", "listed"), ("workspace", "mergedInto"))
                for sort in ("-createdAt", "-voteCount", "-commentCount", "-revenueCents", "-score")
            ],
            ("workspace", "listed", "statusSlug", "-voteCount", "-_id"),  # a roadmap column
            # The query indexes (posts.reads.index) are built by workspace and catch up by changedAt.
            ("workspace", "changedAt"),
            "embeddingModel",  # the backfill finds the posts whose vector is missing or stale
            # Stalled posts, oldest unanswered first: the listed ones (what everyone sees) and
            # every post of the workspace (managers, who see all but merged posts).
            ("workspace", "listed", "lastCommentByTeam", "lastCommentAt", "_id"),
            ("workspace", "lastCommentByTeam", "lastCommentAt", "_id"),
            # A workspace's posts a page at a time, in id order (its export, a rescore's batches).
            ("workspace", "_id"),
            # An imported post, found by its key before an import writes it (posts.imports). Not
            # unique: the local stand-in indexes a missing key as null, so a unique index would
            # refuse every post without one.
            {"fields": ["importKey"], "sparse": True},
        ],
    }


class TriageSettings(Document):
    """A workspace's tags, custom fields and score formula (posts.triage), ``_id`` its slug;
    ``version`` grows with each save (posts name the version their score follows)."""

    id = StringField(primary_key=True)
    version = IntField(required=True)
    tags = ListField(DictField())
    fields = ListField(DictField())
    scoreFormula = StringField(null=True)
    updatedAt = DateTimeField(required=True)
    COLLECTION = "triage_settings"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class PostClock(Document):
    """One of a workspace's change clocks (``_id`` ``<slug>:<n>``, posts.repository.CLOCKS of
    them): every post write moves one in its transaction, so a process holding a query index
    knows with one small read whether it must catch up."""

    id = StringField(primary_key=True)
    n = IntField(default=0)
    COLLECTION = "post_clocks"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class WarmIndex(Document):
    """A workspace whose query index took long to build (``posts.reads.cache``): its cold reads
    would be as slow, so a new API process builds its index before it reports ready."""

    id = StringField(primary_key=True)  # the workspace's slug
    posts = IntField(required=True)
    bytes = IntField(required=True)  # the index's measured size when built
    builtAt = DateTimeField(required=True)
    COLLECTION = "post_warm_indexes"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class Vote(Document):
    """One voter's vote on one post.

    ``countsFor`` names the post whose voteCount includes this vote: the post itself, the
    canonical post while merged, or ``shadow:<postId>`` when the voter already counts
    there (so merging never counts anyone twice and unmerging restores exactly).
    """

    workspace = StringField(required=True)
    postId = ObjectIdField(required=True)
    userId = StringField(required=True)
    countsFor = StringField(required=True)
    companies = ListField(StringField())  # the voter's companies (posts.revenue keeps it current)
    name = StringField(null=True)  # the voter's name when they voted (team: a post's voters)
    # A vote on someone's behalf: who added it ({id, name}: common.auth.actor), from where
    # ({text, url}: "Zendesk #4411"), and what the customer said.
    addedBy = DictField(null=True)
    source = DictField(null=True)
    note = StringField(null=True)
    createdAt = DateTimeField(required=True)
    importKey = StringField(null=True)  # an imported vote's source id (unique by post and voter already)
    COLLECTION = "votes"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            {"fields": ["postId", "userId"], "unique": True},  # one vote per identity and post
            {"fields": ["countsFor", "userId"], "unique": True},  # counted once per canonical post
            ("workspace", "userId"),  # a voter's votes, when their companies change
            ("countsFor", "-createdAt"),  # a post's voters, newest first (the team's list)
            ("workspace", "createdAt"),  # the votes of a period (the team's activity)
            ("workspace", "_id"),  # a workspace's votes a page at a time, in id order (its export)
        ],
    }


class CompanyView(Document):
    """A company's monthly spend, from feedback.companies (``_id`` ``<slug> <companyId>``).

    A transaction that makes a company count on a post writes this document too (``posts``),
    so it conflicts with a concurrent change of the spend instead of missing it."""

    id = StringField(primary_key=True)
    workspace = StringField(required=True)
    companyId = StringField(required=True)
    name = StringField(null=True)
    spendCents = IntField(default=0)
    posts = IntField(default=0)  # posts it counts on
    COLLECTION = "company_views"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class MemberView(Document):
    """The companies a user belongs to, from feedback.companies (``_id`` ``<slug> <userId>``).
    Every vote of an identified user upserts it, so a vote and a change of the voter's companies
    conflict instead of missing each other."""

    id = StringField(primary_key=True)
    workspace = StringField(required=True)
    userId = StringField(required=True)
    companies = ListField(StringField())
    COLLECTION = "member_views"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class PostCompany(Document):
    """How many counted votes of a post come from one company (``_id`` ``<postId> <companyId>``):
    a company adds its spend to the post's revenue once, while this is above zero."""

    id = StringField(primary_key=True)
    workspace = StringField(required=True)
    postId = StringField(required=True)
    companyId = StringField(required=True)
    voters = IntField(default=0)
    COLLECTION = "post_companies"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("workspace", "companyId", "voters"), "postId"],
    }


class Suggestion(Document):
    """A suspected duplicate for the team to accept (merge ``postId`` into ``intoId``) or
    dismiss (``_id`` ``<slug> <the pair's ids, sorted>``: a pair is suggested once, ever)."""

    id = StringField(primary_key=True)
    workspace = StringField(required=True)
    postId = StringField(required=True)  # the newer post: the one a merge would fold in
    intoId = StringField(required=True)
    similarity = FloatField(required=True)
    state = StringField(required=True)  # open, accepted, dismissed
    decidedBy = DictField(null=True)  # common.auth.actor
    decidedAt = DateTimeField()
    createdAt = DateTimeField(required=True)
    COLLECTION = "suggestions"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("workspace", "state", "-createdAt"), ("workspace", "postId"), ("workspace", "intoId")],
    }


class Comment(Document):
    workspace = StringField(required=True)
    postId = ObjectIdField(required=True)
    parentId = StringField(null=True)
    path = StringField(required=True)  # ancestor ids and own id joined by "/": sorts in thread order
    depth = IntField(default=0)
    content = StringField(required=True)
    authorId = StringField(required=True)
    isTeamMember = BooleanField(default=False)
    # A signed-in team member's display name when they wrote it, shown beside the team badge
    # (absent for API keys, the operator and end users).
    authorName = StringField(null=True)
    author = DictField(null=True)  # as a post's author: {name, avatarUrl, team} (posts.shapes.Reader)
    isPrivate = BooleanField(default=False)
    createdAt = DateTimeField(required=True)
    importKey = StringField(null=True)  # an imported comment's key, as a post's (posts.imports)
    COLLECTION = "comments"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        # A thread; the comments of a period (activity); a workspace's comments a page at a time (its export).
        "indexes": [("postId", "path"), ("workspace", "createdAt"), ("workspace", "_id"),
                    {"fields": ["importKey"], "sparse": True}],
    }


class WorkspaceView(Document):
    """Read model of a workspace (boards, statuses, flags, ``authorVotes``) from feedback.workspaces."""

    slug = StringField(primary_key=True)
    name = StringField()
    version = IntField(required=True)
    boards = ListField(DictField())
    statuses = ListField(DictField())
    defaultStatus = StringField(null=True)
    anonSubmit = BooleanField(default=False)
    anonVote = BooleanField(default=False)
    anonComment = BooleanField(default=False)
    authorVotes = BooleanField(default=True)  # a new post's author, if a person, votes for it (posts.service)
    hideCustomerNames = BooleanField(default=False)  # end users see no other end user's name (posts.shapes.Reader)
    erasedUserContent = StringField(default="keep")  # an erased person's posts and comments: keep or delete (posts.erasure)
    syncedAt = DateTimeField()  # server time of the last change, for the API processes' polling
    COLLECTION = "workspaces"
    meta = {"db_alias": ALIAS, "collection": COLLECTION, "indexes": ["syncedAt"]}


MODELS = (Post, TriageSettings, PostClock, WarmIndex, Vote, CompanyView, MemberView, PostCompany, Suggestion, Comment, WorkspaceView)
