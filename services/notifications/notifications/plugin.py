"""The notifications plugin: follows, preferences, and the mail that closes the loop.

It consumes the posts and workspaces services' events and mails the people who asked
(docs/services/notifications.md). Declarative: the gateway and ``feedback init`` read this
spec without importing the service's code, so ``create_context`` imports what it wires when
it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from notifications import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from common.mail import MailQueue

    from notifications.config import NotificationsConfig
    from notifications.erasure import Erasure
    from notifications.notifier import Notifier
    from notifications.service import NotificationsService
    from notifications.subscriptions import ChangelogSubscriptions

R = "notifications.resources:"
W = "/workspaces/{slug}"
ROUTES = [
    Route(W + "/posts/{postId}/follow", R + "Follow", ("GET", "PUT")),
    Route(W + "/me/notifications", R + "MyNotifications", ("GET", "PATCH")),
    Route(W + "/notifications/unsubscribe", R + "Unsubscribe", ("POST",), limits={"POST": "write"}),
    Route(W + "/notifications/delivery", R + "Delivery", ("GET",)),
    Route(W + "/notifications/suppressions", R + "Suppressions", ("GET",)),
    Route(W + "/notifications/suppressions/{address}", R + "Suppression", ("DELETE",)),
    # The changelog by email (notifications.subscriptions): anyone subscribes, spending the
    # gateway's write budgets (per caller and per client address), and confirms or leaves by token.
    Route(W + "/changelog/subscriptions", R + "ChangelogSubscriptions", ("GET", "POST"), limits={"POST": "write"}),
    Route(W + "/changelog/subscriptions/confirm", R + "ChangelogSubscriptionConfirm", ("POST",), limits={"POST": "write"}),
    Route(W + "/changelog/subscriptions/unsubscribe", R + "ChangelogSubscriptionUnsubscribe", ("POST",), limits={"POST": "write"}),
    Route(W + "/me/changelog-subscription", R + "MyChangelogSubscription", ("GET", "PUT")),
    # The person's last look at the changelog (the widget's unread badge, on every device).
    Route(W + "/me/changelog-seen", R + "MyChangelogSeen", ("GET", "PUT")),
]
PERSONAL_DATA = "/internal/notifications/personal-data"
# A person's follows and preferences, for their download of their data (people.privacy).
INTERNAL_ROUTES = [Route(PERSONAL_DATA, "common.app:PersonalData", ("POST",))]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: NotificationsConfig
    service: NotificationsService
    notifier: Notifier  # the consumer's handlers and the scheduler's rounds
    subscriptions: ChangelogSubscriptions  # the changelog by email: the API's rules and an entry's fan-out
    mail_queue: MailQueue  # the mailer worker sends it
    erasure: Erasure  # a person's data: listed, erased (docs/privacy.md)

    def personal_data(self, user_id: str, workspace: str | None) -> dict:
        return self.erasure.data_of(user_id, workspace)


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.mail import MailQueue
    from notifications.config import load_config
    from notifications.directory import Directory
    from notifications.erasure import Erasure
    from notifications.mail import Addresser
    from notifications.models import ALIAS
    from notifications.notifier import Notifier
    from notifications.repository import NotificationsRepository
    from notifications.service import NotificationsService
    from notifications.subscriptions import ChangelogLetters, ChangelogSubscriptions
    from notifications.tokens import SubscriptionTokens, UnsubscribeTokens

    config = load_config(settings)
    store = Store(settings, ALIAS)
    client = InternalClient(settings, timeout=10)
    directory = Directory(client, config.public_base_url)
    repo = NotificationsRepository(store)
    tokens = UnsubscribeTokens(settings.internal_secret)
    mail_queue = MailQueue(store.db["mail"])
    subscriptions = ChangelogSubscriptions(repo, directory, directory.workspaces,
                                           ChangelogLetters(SubscriptionTokens(settings.internal_secret, config.confirm_seconds)),
                                           mail_queue, config)
    notifier = Notifier(repo, directory, mail_queue, Addresser(tokens), config, subscriptions)
    service = NotificationsService(repo, directory, directory.workspaces, tokens, mail_queue)
    return Context(settings=settings, store=store, config=config, service=service, notifier=notifier, mail_queue=mail_queue,
                   subscriptions=subscriptions, erasure=Erasure(repo, mail_queue, settings.internal_secret))


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="notifications",
        context="notifications.plugin:create_context",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        personal_data=PERSONAL_DATA,
        consumes=contract.CONSUMES,
        consumers="notifications.consumers:handlers",
        models="notifications.models:MODELS",
        workers={"mailer": "notifications.workers:send_mail", "scheduler": "notifications.workers:schedule"},
        openapi="notifications:openapi.yaml",
    )
