"""Removing a test organization's evidence log, which the service itself never does."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session


def forget_evidence(db: Session, organization_id: str) -> None:
    """Delete the organization's events and head in `db`'s transaction. On PostgreSQL the log's
    trigger refuses DELETE; the test's superuser sets it aside for this transaction only."""
    if db.get_bind().dialect.name == "postgresql":
        db.execute(text("SET LOCAL session_replication_role = replica"))
    for table in ("evidence_events", "evidence_heads"):
        db.execute(text(f"DELETE FROM {table} WHERE organization_id = :id"), {"id": organization_id})
    if db.get_bind().dialect.name == "postgresql":
        db.execute(text("SET LOCAL session_replication_role = origin"))
