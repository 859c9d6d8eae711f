"""A person's data: a copy of everything held about them, and its erasure (docs/decisions.md §15).

Each feature exports and erases its own records of the person (its `personal_data` module);
this module puts their copies in one document and runs their erasures in one transaction.
Erasure removes what names or describes the person and keeps their ids as pseudonyms, so
acts, decisions, check-ins and amounts still count and the evidence chain, which holds ids
only, still verifies.
"""

from __future__ import annotations

from sqlalchemy import event
from sqlalchemy.orm import Session

from kindling.accounts import personal_data as accounts
from kindling.donations import personal_data as donations
from kindling.evidence import log as evidence
from kindling.kindness import personal_data as kindness
from kindling.platform.base import utcnow
from kindling.platform.database import truncate_write_ahead_log
from kindling.privacy import storage
from kindling.privacy.events import MEMBER_ERASED
from kindling.slack import personal_data as slack
from kindling.volunteering import personal_data as volunteering
from kindling.wellbeing import personal_data as wellbeing

# The document's sections, in the order it lists them.
SECTIONS = (
    "account",
    "directory",
    "groups",
    "actsSent",
    "actsReceived",
    "verificationDecisions",
    "checkIns",
    "checkInApprovals",
    "donations",
    "givingRequests",
    "wellbeingResponses",
    "sessions",
    "slackIdentities",
)


def export(db: Session, *, user_id: str) -> dict:
    """Everything held about the person, as one document; sessions as metadata, never a token."""
    exported_at = utcnow()
    held = {
        **accounts.export(db, user_id=user_id),
        **kindness.export(db, user_id=user_id),
        **volunteering.export(db, user_id=user_id),
        **donations.export(db, user_id=user_id),
        **wellbeing.export(db, user_id=user_id),
        **slack.export(db, user_id=user_id),
    }
    return {"exportedAt": exported_at, **{section: held[section] for section in SECTIONS}}


def erase(db: Session, *, organization_id: str, user_id: str, actor_id: str, secret_key: str | None) -> None:
    """Erase a person of the organization, irreversibly: 404 for anyone else or someone erased, 409
    for its last admin. Their mailbox stays as a hash keyed by `secret_key` (SECRET_KEY)."""
    written = storage.write_counts(db)
    # First: it finds the person, and refuses the last admin.
    person_id = accounts.erase(
        db, organization_id=organization_id, user_id=user_id, actor_id=actor_id, secret_key=secret_key
    ).id
    slack.erase(db, user_id=person_id)
    kindness.erase(db, user_id=person_id)
    volunteering.erase(db, user_id=person_id)
    donations.erase(db, user_id=person_id)
    wellbeing.erase(db, user_id=person_id)
    # An embedded database keeps old page images in its write-ahead log: truncate it once this commits.
    event.listen(db, "after_commit", lambda session: truncate_write_ahead_log(session.get_bind()), once=True)
    db.flush()
    evidence.append(
        db,
        organization_id=organization_id,
        type=MEMBER_ERASED,
        subject=("member", person_id),
        actor_id=actor_id,
        data={},
    )
    # On PostgreSQL the old row versions keep what was removed until the worker rewrites their tables.
    storage.schedule_cleanup(db, since=written)
