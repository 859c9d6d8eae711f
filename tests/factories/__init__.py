"""Test data, created through the same services the API uses; one module per domain.

`Factories` (the `make` fixture) is the one way tests create records: it mixes in each
domain's factory methods, and `make.activity` makes records dated some days ago. The
plain helpers that create no records (signed payloads, positions, constants) stay in
their domain's module.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.platform.cache import Cache
from kindling.platform.mail import Mailer
from tests.factories.accounts import PASSWORD, Account, Accounts
from tests.factories.activity import Activity
from tests.factories.clients import Clients
from tests.factories.directory import Directory
from tests.factories.donations import Donations
from tests.factories.giving import Giving
from tests.factories.kindness import Kindness
from tests.factories.themes import Themes
from tests.factories.volunteering import Volunteering
from tests.factories.webhooks import Webhooks
from tests.factories.wellbeing import Wellbeing

__all__ = ["PASSWORD", "Account", "Factories"]


class Factories(Accounts, Clients, Directory, Donations, Giving, Kindness, Themes, Volunteering, Webhooks, Wellbeing):
    """Records made in `db`; kindness acts also update statistics kept in `cache`; attestations are
    mailed by `mailer` and their tokens read from `mailbox`, the mail server it sends to."""

    def __init__(self, db: Session, cache: Cache, *, mailer: Mailer | None = None, mailbox=None) -> None:
        self.db = db
        self.cache = cache
        self.mailer = mailer
        self.mailbox = mailbox
        self.activity = Activity(self)
