"""Kindness acts, recorded and verified through the services the API uses."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization, User
from kindling.kindness import acts as kindness
from kindling.kindness import verification, verification_status
from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import VerificationDecision
from kindling.platform.cache import Cache
from kindling.platform.mail import Mailer
from tests.factories.accounts import Account
from tests.factories.principals import principal

_sequence = itertools.count(1)


class Kindness:
    """Methods of `make` (`tests.factories.Factories`); `approver` makes new admins with `member`."""

    db: Session
    cache: Cache
    mailer: Mailer | None
    mailbox: Any  # tests.servers.mail.MailServer: the mail server `mailer` sends to

    def act(
        self,
        sender: Account,
        recipient: Account | str | None = None,
        *,
        at: dt.datetime | None = None,
        verified_level: int = 1,
        **fields,
    ) -> KindnessAct:
        """An act `sender` did for `recipient` (an account, an id, or by default a new outsider) at `at`.

        With `verified_level`, the act asks for that level (unless `verification_level` says
        otherwise) and its evidence is recorded by whoever may give it.
        """
        if recipient is None:
            recipient = f"outsider-{next(_sequence)}"
        recipient_id = recipient.user.id if isinstance(recipient, Account) else recipient
        fields.setdefault("description", "Covered a shift")
        fields.setdefault("category", "peer_recognition")
        fields.setdefault("verification_level", verified_level)
        act = kindness.create_act(
            self.db, self.cache, caller=principal(sender), recipient_id=recipient_id, created_at=at, **fields
        )
        if verified_level > 1:
            self.verify(act, verified_level)
        return act

    def verify(self, act: KindnessAct, level: int, *, confirm: bool = True) -> None:
        """Record the evidence of `level` for `act` (or its refusal), by someone who may give it."""
        member_recipient = verification_status.recipient_is_member(
            self.db, organization_id=act.organization_id, recipient_id=act.recipient_id
        )
        if level in (3, 4) or (level == 2 and member_recipient):
            decider = self.db.get(User, act.recipient_id) if level == 2 else self.approver(act)
            decision = ("confirm" if confirm else "dispute") if level == 2 else ("approve" if confirm else "reject")
            verification.decide(
                self.db,
                self.cache,
                caller=principal(decider),
                act_id=act.id,
                level=level,
                decision=decision,
                reference=f"HR-{act.id[:8]}" if level == 4 else None,
            )
            return
        sender = principal(self.db.get(User, act.user_id))
        address = f"attester-{next(_sequence)}@foodbank.test"
        verification.request_attestation(
            self.db,
            self.mailer,
            caller=sender,
            act_id=act.id,
            level=level,
            attester_name="Ada Attester",
            attester_organization="Town Food Bank",
            attester_email=address,
            page_url="https://kindling.test",
            secret_key=None,  # the test app's SECRET_KEY (tests/conftest.py)
        )
        token = self.mailbox.token_for(address)
        verification.answer_attestation(
            self.db, self.cache, token=token, decision="confirm" if confirm else "decline", name="Ada Attester"
        )

    def approver(self, act: KindnessAct) -> User:
        """An admin of the act's organization who may decide a level of it (not its sender, its recipient
        or anyone who decided another level): an existing one, else a new one."""
        deciders = select(VerificationDecision.decided_by).where(
            VerificationDecision.act_id == act.id, VerificationDecision.decided_by.is_not(None)
        )
        existing = self.db.scalar(
            select(User)
            .where(
                User.organization_id == act.organization_id,
                User.role == "admin",
                User.id.not_in([act.user_id, act.recipient_id]),
                User.id.not_in(deciders),
            )
            .order_by(User.created_at, User.id)
        )
        if existing is not None:
            return existing
        approver = self.member(self.db.get(Organization, act.organization_id)).user
        approver.role = "admin"
        self.db.flush()
        return approver
