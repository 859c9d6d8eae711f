"""Whose mailbox an address is: a member's, now or before, erased people included (docs/decisions.md §6).

Addresses are compared as mailboxes (kindling/platform/addresses.py): local part lower-cased,
`+tag` dropped, domain as its A-label. An erased person's address is gone from their row; what
stays is a keyed hash of their mailbox, enough to recognise it and not to recover it.
"""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from kindling.accounts.models import User
from kindling.platform.addresses import mailbox_of

# Distinct from every other use of SECRET_KEY: the same secret never keys two things.
_INFO = b"kindling erased mailbox v1"


def is_members(db: Session, *, organization_id: str, mailbox: str) -> bool:
    """Whether `mailbox` is the address of a person of the organization, active or not, in any spelling."""
    base, _, _ = mailbox.partition("@")
    # The candidates share the local part before any `+tag`; the domain's spelling is compared once parsed.
    stored = func.lower(User.email)
    candidates = db.scalars(
        select(User.email).where(
            User.organization_id == organization_id,
            or_(stored.startswith(f"{base}@", autoescape=True), stored.startswith(f"{base}+", autoescape=True)),
        )
    )
    return any(mailbox_of(email) == mailbox for email in candidates)


def erased_key(secret_key: str | None, *, organization_id: str, mailbox: str) -> str:
    """Hex HMAC-SHA256 of the organization id and the mailbox, under a key derived from SECRET_KEY."""
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive((secret_key or "").encode())
    return hmac.new(key, f"{organization_id}\n{mailbox}".encode(), hashlib.sha256).hexdigest()


def is_erased_members(db: Session, secret_key: str | None, *, organization_id: str, mailbox: str) -> bool:
    """Whether `mailbox` was the address of a person of the organization whose data was erased."""
    key = erased_key(secret_key, organization_id=organization_id, mailbox=mailbox)
    found = db.scalar(
        select(User.id).where(User.organization_id == organization_id, User.erased_mailbox_key == key).limit(1)
    )
    return found is not None
