"""A person's account, directory entry, groups and sign-in sessions: their copy, and their erasure
(docs/decisions.md §15). Their id stays, as the pseudonym everything they did is kept under."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from kindling.accounts import identity, lifecycle, mailboxes
from kindling.accounts.models import Organization, User
from kindling.accounts.models import Session as SignInSession
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership, ScimUser
from kindling.errors import NotFound
from kindling.platform import addresses
from kindling.platform.base import utcnow

ERASED_NAME = "Erased person"
ERASED_PASSWORD = "!"  # no password hashes to it: the account cannot sign in


def erased_email(user_id: str) -> str:
    """A placeholder that cannot receive mail: `.invalid` is reserved for that (RFC 2606)."""
    return f"erased-{user_id}@invalid"


def member_of(db: Session, *, organization_id: str, user_id: str) -> User:
    """A person of the organization, active or not; anyone else answers 404."""
    user = db.get(User, user_id)
    if user is None or user.organization_id != organization_id:
        raise NotFound("No such member of this organization")
    return user


def export(db: Session, *, user_id: str) -> dict:
    """The person's account, directory entry and groups, and their sessions as metadata, never a token."""
    user = db.get_one(User, user_id)
    directory = db.get(ScimUser, user.id)
    return {
        "account": {
            "id": user.id,
            "email": user.email,
            "name": user.name,
            "accountType": user.account_type,
            "organizationId": user.organization_id,
            "role": user.role,
            "firmName": user.firm_name,
            "externalId": user.external_id,
            "active": user.active,
            "managerId": user.manager_id,
            "department": user.department,
            "employeeNumber": user.employee_number,
            "erasedAt": user.erased_at,
            "createdAt": user.created_at,
        },
        "directory": None
        if directory is None
        else {
            "userName": directory.user_name,
            "externalId": directory.external_id,
            "resource": directory.resource,
            "updatedAt": directory.updated_at,
        },
        "groups": [
            {"id": group.id, "displayName": group.display_name, "role": group.role}
            for group in db.scalars(
                select(DirectoryGroup)
                .join(GroupMembership, GroupMembership.group_id == DirectoryGroup.id)
                .where(GroupMembership.user_id == user.id)
                .order_by(DirectoryGroup.display_name)
            )
        ],
        "sessions": [
            {
                "id": session.id,
                "createdAt": session.created_at,
                "expiresAt": session.expires_at,
                "revokedAt": session.revoked_at,
            }
            for session in db.scalars(
                select(SignInSession).where(SignInSession.user_id == user.id).order_by(SignInSession.created_at)
            )
        ],
    }


def erase(db: Session, *, organization_id: str, user_id: str, actor_id: str, secret_key: str | None) -> User:
    """Deactivate a person of the organization and erase what names them, irreversibly: 409 for its
    last admin. Their mailbox stays as a hash keyed by `secret_key` (SECRET_KEY), so it is never taken
    for an independent attester's."""
    # Serialised on the organization's row, as role changes are, so two erasures cannot leave no admin.
    db.execute(select(Organization.id).where(Organization.id == organization_id).with_for_update(key_share=True))
    user = db.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None or user.organization_id != organization_id or user.erased_at is not None:
        raise NotFound("No such member of this organization")
    # The last admin stays (409), and the deactivation is an authority event of its own.
    lifecycle.deactivate(db, user=user, actor_id=actor_id, source="hand")
    # An erasure after a deactivation still revokes whatever was issued since.
    identity.deactivate(db, user=user)
    user.name = ERASED_NAME
    mailbox = addresses.mailbox_of(user.email) or user.email.strip().lower()
    user.erased_mailbox_key = mailboxes.erased_key(secret_key, organization_id=organization_id, mailbox=mailbox)
    user.email = erased_email(user.id)
    user.password_hash = ERASED_PASSWORD
    user.firm_name = None
    user.external_id = None
    user.sso_issuer = user.sso_subject = None
    user.employee_number = None
    user.department = None
    user.erased_at = utcnow()
    # The directory's copy of the person (names, emails, the resource as sent) and their groups.
    db.execute(delete(GroupMembership).where(GroupMembership.user_id == user.id))
    db.execute(delete(ScimUser).where(ScimUser.user_id == user.id))
    return user
