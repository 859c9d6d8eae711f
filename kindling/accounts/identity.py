"""Mirroring the identity provider's user events onto local accounts (docs/decisions.md §7).

A local user is linked to the provider's user through `users.external_id`. An event whose
`data.id` no local user carries links, on first sight, the account whose email equals the
provider's primary email address, when the provider has verified that address and the
account is not linked to someone else yet.
"""

from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.accounts import authority
from kindling.accounts import service as accounts
from kindling.accounts.events import MEMBER_DEACTIVATED
from kindling.accounts.models import User

log = logging.getLogger(__name__)

EVENT_TYPES = frozenset({"user.updated", "user.deleted"})


def resolve_user(db: Session, *, event_type: str, data: dict) -> User | None:
    """The local account an event is about, linking it on first sight; None (logged) if there is none."""
    external_id = data.get("id")
    if not isinstance(external_id, str) or not external_id or len(external_id) > 255:
        log.warning("identity event %s without a usable user id ignored", event_type)
        return None
    user = db.scalar(select(User).where(User.external_id == external_id).with_for_update())
    if user is None and event_type == "user.updated":
        email = verified_primary_email(data)
        if email is not None:
            user = db.scalar(select(User).where(User.email == email, User.external_id.is_(None)).with_for_update())
            if user is not None:
                user.external_id = external_id
                log.info("user %s linked to identity provider user %s", user.id, external_id)
    if user is None:
        log.warning("identity event %s for unknown user %s ignored", event_type, external_id)
    return user


def verified_primary_email(data: dict) -> str | None:
    """The provider's primary email address of the user, lower-cased, if the provider verified it."""
    primary_id = data.get("primary_email_address_id")
    addresses = data.get("email_addresses")
    if not isinstance(addresses, list):
        return None
    for address in addresses:
        if not isinstance(address, dict) or address.get("id") != primary_id:
            continue
        email = address.get("email_address")
        verification = address.get("verification")
        status = verification.get("status") if isinstance(verification, dict) else None
        if isinstance(email, str) and "@" in email and len(email) <= 254 and status == "verified":
            return email.strip().lower()
    return None


def apply_event(db: Session, *, event_type: str, user: User, data: dict) -> bool:
    """Apply a user event to its linked account; False when nothing changed."""
    if event_type == "user.deleted":
        changed = deactivate(db, user=user)
        if changed and user.organization_id is not None:
            authority.record(
                db, user=user, type=MEMBER_DEACTIVATED, actor_id=None, data={"source": "identity_provider"}
            )
        return changed
    return mirror_profile(db, user=user, data=data)


def mirror_profile(db: Session, *, user: User, data: dict) -> bool:
    """Copy the provider's name and verified primary email onto the account."""
    changed = False
    parts = [data.get("first_name"), data.get("last_name")]
    name = " ".join(part.strip() for part in parts if isinstance(part, str) and part.strip())[:200]
    if name and name != user.name:
        user.name = name
        changed = True
    email = verified_primary_email(data)
    if email is not None and email != user.email:
        taken = db.scalar(select(User.id).where(User.email == email, User.id != user.id))
        if taken is None:
            user.email = email
            changed = True
        else:
            log.warning("identity provider email of user %s belongs to another account; kept %s", user.id, user.email)
    db.flush()
    return changed


def deactivate(db: Session, *, user: User) -> bool:
    """Deactivate the account and revoke every session it holds."""
    changed = user.active
    user.active = False
    accounts.revoke_all_sessions(db, user.id)
    db.flush()
    return changed
