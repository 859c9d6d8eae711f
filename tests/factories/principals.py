"""The Principal a test account calls services as."""

from __future__ import annotations

from kindling.access import Principal
from tests.factories import Account


def principal(account: Account) -> Principal:
    """The caller `account` is, as the security step would resolve it."""
    user = account.user
    return Principal(
        user_id=user.id,
        account_type=user.account_type,
        organization_id=user.organization_id,
        role=user.role,
        session_id="test-session",
    )
