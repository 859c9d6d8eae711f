"""Verification decisions on kindness acts, and the attestations asked of people without an account."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, SmallInteger, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class VerificationDecision(Base):
    """The one decision on one level of one act: by a member, or by the answer to an attestation."""

    __tablename__ = "verification_decisions"
    # One decision per level: the second of two concurrent deciders fails here at the latest.
    __table_args__ = (UniqueConstraint("act_id", "level", name="uq_verification_decisions_act_level"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    act_id: Mapped[str] = mapped_column(ForeignKey("kindness_acts.id"))
    level: Mapped[int] = mapped_column(SmallInteger)
    # confirm | dispute (level 2), approve | reject (levels 3 and 4), confirm | decline (attestations).
    decision: Mapped[str] = mapped_column(String(16))
    # The member who decided; null when the decision is an attestation's answer.
    decided_by: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    attestation_id: Mapped[str | None] = mapped_column(ForeignKey("attestations.id"))
    note: Mapped[str | None] = mapped_column(String(1000))
    reference: Mapped[str | None] = mapped_column(String(200))
    # Why the decider could decide level 3: "line_manager", "manager" or "admin".
    authority: Mapped[str | None] = mapped_column(String(16))
    decided_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Attestation(Base):
    """A request, mailed by Kindling, to a third party (level 5) or an external recipient (level 2) to attest an act."""

    __tablename__ = "attestations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    act_id: Mapped[str] = mapped_column(ForeignKey("kindness_acts.id"), index=True)
    level: Mapped[int] = mapped_column(SmallInteger)
    # SHA-256 of the token; the token itself is only ever in the mail to the attester.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    requested_by: Mapped[str] = mapped_column(ForeignKey("users.id"))
    attester_name: Mapped[str] = mapped_column(String(200))
    attester_organization: Mapped[str | None] = mapped_column(String(200))
    # Required since attestations are mailed; null on requests made before.
    attester_email: Mapped[str | None] = mapped_column(String(254))
    attester_domain: Mapped[str | None] = mapped_column(String(253))
    # The attesterKey of the address (docs/evidence.md), from the request on: the one mailbox it stands for.
    attester_key: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime]
    # When the mail server accepted the mail; and when a newer request for the same level replaced this one.
    delivered_at: Mapped[dt.datetime | None]
    cancelled_at: Mapped[dt.datetime | None]
    # The answer: who gave it, as they named themselves, and what they said.
    answered_at: Mapped[dt.datetime | None]
    answer_name: Mapped[str | None] = mapped_column(String(200))
    answer_organization: Mapped[str | None] = mapped_column(String(200))
    answer_statement: Mapped[str | None] = mapped_column(String(2000))
