"""Removing what a live server committed for a test, so that other tests find the database as they expect."""

from __future__ import annotations

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization, User
from kindling.accounts.models import Session as UserSession
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership, ScimToken, ScimUser
from kindling.donations.models import Donation, GivingLedger, GivingPeriod, GivingProgram, GivingRequest
from kindling.idempotency.models import IdempotentResponse
from kindling.kindness.models import KindnessAct, KindnessRecipientTally, KindnessTally


def forget_evidence(db: Session, organization_id: str) -> None:
    """Delete the organization's events, head, tree and checkpoints in `db`'s transaction. On
    PostgreSQL the log's triggers refuse DELETE; the test's superuser sets them aside for this
    transaction only."""
    if db.get_bind().dialect.name == "postgresql":
        db.execute(text("SET LOCAL session_replication_role = replica"))
    for table in ("evidence_events", "evidence_heads", "evidence_tree_nodes", "evidence_checkpoints"):
        db.execute(text(f"DELETE FROM {table} WHERE organization_id = :id"), {"id": organization_id})
    if db.get_bind().dialect.name == "postgresql":
        db.execute(text("SET LOCAL session_replication_role = origin"))


def forget(db: Session, organization_id: str) -> None:
    """Remove the organization, its people, their sessions and idempotent responses, its acts,
    donations, giving and evidence log."""
    users = select(User.id).where(User.organization_id == organization_id)
    forget_evidence(db, organization_id)
    program_ids = select(GivingProgram.id).where(GivingProgram.organization_id == organization_id)
    db.execute(delete(GivingRequest).where(GivingRequest.organization_id == organization_id))
    for model in (GivingLedger, GivingPeriod):
        db.execute(delete(model).where(model.program_id.in_(program_ids)))
    db.execute(delete(GivingProgram).where(GivingProgram.organization_id == organization_id))
    db.execute(delete(Donation).where(Donation.organization_id == organization_id))
    for model in (KindnessAct, KindnessTally, KindnessRecipientTally):
        db.execute(delete(model).where(model.organization_id == organization_id))
    for model in (UserSession, IdempotentResponse):
        db.execute(delete(model).where(model.user_id.in_(users)))
    groups = select(DirectoryGroup.id).where(DirectoryGroup.organization_id == organization_id)
    db.execute(delete(GroupMembership).where(GroupMembership.group_id.in_(groups)))
    for model in (DirectoryGroup, ScimUser, ScimToken):
        db.execute(delete(model).where(model.organization_id == organization_id))
    # Reporting lines point within the organization: cleared before its people go.
    db.execute(User.__table__.update().where(User.organization_id == organization_id).values(manager_id=None))
    db.execute(delete(User).where(User.organization_id == organization_id))
    db.execute(delete(Organization).where(Organization.id == organization_id))
    db.commit()
