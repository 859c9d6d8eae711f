"""Accounts: organization admins, members, managers and consultants, signed up and signed in."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.accounts import api_tokens
from kindling.accounts import service as accounts
from kindling.accounts.models import Organization, User
from kindling.accounts.models import Session as SignedInSession
from kindling.accounts.sessions import hash_token

PASSWORD = "correct horse battery"
_sequence = itertools.count(1)


@dataclass
class Account:
    user: User
    token: str

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def organization_id(self) -> str | None:
        return self.user.organization_id


class Accounts:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def _account(self, **fields) -> Account:
        n = next(_sequence)
        fields.setdefault("email", f"person{n}@example.test")
        fields.setdefault("name", f"Person {n}")
        user = accounts.sign_up(self.db, password=PASSWORD, **fields)
        token, _ = accounts.start_session(self.db, user)
        self.db.flush()
        return Account(user, token)

    def admin(self, organization_name: str | None = None, **fields) -> Account:
        """The admin of a new organization."""
        name = organization_name or f"Organization {next(_sequence)}"
        return self._account(organization_name=name, **fields)

    def member(self, of: Account | Organization, **fields) -> Account:
        """A member of the organization of `of` (an admin account or an organization)."""
        organization = of if isinstance(of, Organization) else self.db.get(Organization, of.organization_id)
        return self._account(join_code=organization.join_code, **fields)

    def manager(self, of: Account | Organization, **fields) -> Account:
        """A manager of the organization of `of`: a member who may approve colleagues' acts."""
        account = self.member(of, **fields)
        account.user.role = account.user.hand_role = "manager"
        self.db.flush()
        return account

    def consultant(self, **fields) -> Account:
        return self._account(account_type="consultant", **fields)

    def api_token(self, account: Account, *, name: str = "ci", expires_in_days: int = 30) -> Account:
        """The same person calling with a new personal API token instead of a session."""
        session_id = self.db.scalar(
            select(SignedInSession.id).where(SignedInSession.token_hash == hash_token(account.token))
        )
        value, _ = api_tokens.create_token(
            self.db, user_id=account.user.id, session_id=session_id, name=name, expires_in_days=expires_in_days
        )
        return Account(account.user, value)

    def organization(self, account: Account) -> Organization:
        return self.db.get(Organization, account.organization_id)
