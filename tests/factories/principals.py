"""The Principal a test account calls services as."""

from __future__ import annotations

from kindling.accounts.models import User
from kindling.platform.access import Principal
from tests.factories.accounts import Account


def principal(account: Account | User) -> Principal:
    """The caller `account` (or a user) is, as the security step would resolve it."""
    user = account.user if isinstance(account, Account) else account
    return Principal(
        user_id=user.id,
        account_type=user.account_type,
        organization_id=user.organization_id,
        role=user.role,
        session_id="test-session",
    )
