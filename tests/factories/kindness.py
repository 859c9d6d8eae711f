"""Kindness acts, recorded through the service the API uses."""

from __future__ import annotations

import datetime as dt
import itertools

from sqlalchemy.orm import Session

from kindling.access import Principal
from kindling.cache import Cache
from kindling.persistence.kindness import KindnessAct
from kindling.services import kindness
from tests.factories import Account

_sequence = itertools.count(1)


def principal(account: Account) -> Principal:
    """The caller an account's session stands for."""
    user = account.user
    return Principal(user.id, user.account_type, user.organization_id, user.role, "factory")


class KindnessFactory:
    def __init__(self, db: Session, cache: Cache) -> None:
        self.db = db
        self.cache = cache

    def act(
        self,
        sender: Account,
        recipient: Account | str | None = None,
        *,
        at: dt.datetime | None = None,
        **fields,
    ) -> KindnessAct:
        """An act `sender` did for `recipient` (an account, an id, or by default a new outsider) at `at`."""
        if recipient is None:
            recipient = f"outsider-{next(_sequence)}"
        recipient_id = recipient.user.id if isinstance(recipient, Account) else recipient
        fields.setdefault("description", "Covered a shift")
        fields.setdefault("category", "peer_recognition")
        fields.setdefault("verification_level", 1)
        return kindness.create_act(
            self.db, self.cache, caller=principal(sender), recipient_id=recipient_id, created_at=at, **fields
        )
