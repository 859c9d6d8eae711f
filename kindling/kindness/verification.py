"""Earned verification of kindness acts: members' decisions, and attestations by people without an account.

Who may give the evidence of each level (docs/decisions.md §6): the recipient confirms level 2
(an external recipient through an attestation), a manager or admin approves level 3, an admin
records level 4 with its HR reference, a third party attests level 5. Nobody verifies an act
they sent. Each level is decided once; `decide` and `answer_attestation` are the only two ways
a decision is recorded.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets

from sqlalchemy import and_, case, or_, select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.sql.elements import ColumnElement

from kindling.accounts import reporting_lines
from kindling.accounts.models import Organization, User
from kindling.accounts.sessions import hash_token
from kindling.errors import BadRequest, Conflict, Forbidden, NotFound, invalid
from kindling.evidence import log as evidence
from kindling.kindness import acts as kindness
from kindling.kindness import stats as kindness_stats
from kindling.kindness import verification_status
from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import Attestation, VerificationDecision
from kindling.platform.access import Principal, canonical_id
from kindling.platform.base import utcnow
from kindling.platform.cache import Cache
from kindling.platform.pagination import decode_name_cursor, encode_name_cursor

DECISIONS = {2: ("confirm", "dispute"), 3: ("approve", "reject"), 4: ("approve", "reject")}
APPROVERS = frozenset({"manager", "admin"})
ATTESTATION_LIFETIME = dt.timedelta(days=14)


def decide(
    db: DbSession,
    cache: Cache,
    *,
    caller: Principal,
    act_id: str,
    level: int,
    decision: str,
    note: str | None = None,
    reference: str | None = None,
) -> VerificationDecision:
    """Record the caller's decision on one level of an act, and what it changes about the act."""
    kindness.lock_organization(db, caller.member_of)
    act = kindness.get_act(db, caller=caller, act_id=act_id)
    if decision not in DECISIONS[level]:
        allowed = " or ".join(DECISIONS[level])
        raise invalid("body", "decision", f"must be {allowed} on level {level}")
    if level == 4 and decision == "approve" and reference is None:
        raise invalid("body", "reference", "is required to approve level 4: the HR record it rests on")
    _check_decider(db, act, caller, level)
    authority = _authority(db, act, caller, level)
    decisions = verification_status.decisions_of(db, act.id)
    _check_open(act, level, decisions)
    record = VerificationDecision(
        act_id=act.id, level=level, decision=decision, decided_by=caller.user_id, note=note, reference=reference, authority=authority
    )
    _record(db, cache, act, record, decisions)
    evidence.append(
        db,
        organization_id=act.organization_id,
        type=evidence.VERIFICATION_DECIDED,
        subject=("act", act.id),
        actor_id=caller.user_id,
        data={"level": level, "decision": decision, **({"authority": authority} if authority else {})},
    )
    return record


def list_decisions(db: DbSession, *, caller: Principal, act_id: str) -> list[tuple[VerificationDecision, Attestation | None]]:
    """The act's decisions by level, each with the attestation it answered (or None)."""
    act = kindness.get_act(db, caller=caller, act_id=act_id)
    rows = db.execute(
        select(VerificationDecision, Attestation)
        .outerjoin(Attestation, Attestation.id == VerificationDecision.attestation_id)
        .where(VerificationDecision.act_id == act.id)
        .order_by(VerificationDecision.level)
    )
    return [(decision, attestation) for decision, attestation in rows]


def list_pending(db: DbSession, *, caller: Principal, limit: int = 100, cursor: str | None = None) -> tuple[list, str | None]:
    """The acts waiting for the caller: as recipient, and as manager or admin, the acts of the
    caller's reports first (docs/decisions.md §6), each part newest first."""
    waiting = [and_(KindnessAct.verification_awaiting == "recipient", KindnessAct.recipient_id == caller.user_id)]
    approves = ["manager"] if caller.role == "manager" else ["manager", "admin"] if caller.is_admin else []
    reports = reporting_lines.reports_of(caller.user_id)
    if approves:
        decidable: ColumnElement[bool] = KindnessAct.verification_awaiting.in_(approves)
        if not caller.is_admin:
            # A manager decides level 3 for their reports and for people with no manager on record.
            no_manager = select(User.id).where(User.organization_id == caller.organization_id, User.manager_id.is_(None))
            decidable = and_(decidable, or_(KindnessAct.user_id.in_(reports), KindnessAct.user_id.in_(no_manager)))
        waiting.append(and_(decidable, KindnessAct.user_id != caller.user_id))
    rank = case((KindnessAct.user_id.in_(reports), 0), else_=1)
    statement = select(KindnessAct, rank).where(KindnessAct.organization_id == caller.organization_id, or_(*waiting))
    if cursor is not None:
        key, record_id = decode_name_cursor(cursor)
        position = _pending_position(key)
        statement = statement.where(
            or_(rank > position[0], and_(rank == position[0], tuple_(KindnessAct.created_at, KindnessAct.id) < (position[1], record_id)))
        )
    rows = db.execute(statement.order_by(rank, KindnessAct.created_at.desc(), KindnessAct.id.desc()).limit(limit + 1)).all()
    acts = [act for act, _ in rows[:limit]]
    if len(rows) <= limit:
        return acts, None
    last, last_rank = rows[limit - 1]
    return acts, encode_name_cursor(f"{last_rank}{last.created_at.astimezone(dt.UTC).isoformat()}", last.id)


def _pending_position(key: str) -> tuple[int, dt.datetime]:
    try:
        moment = dt.datetime.fromisoformat(key[1:])
        rank = int(key[0])
    except (ValueError, IndexError):
        raise BadRequest("The cursor is not one this list returned", code="invalid_cursor") from None
    if rank not in (0, 1) or moment.tzinfo is None:
        raise BadRequest("The cursor is not one this list returned", code="invalid_cursor")
    return rank, moment


def request_attestation(
    db: DbSession,
    *,
    caller: Principal,
    act_id: str,
    level: int,
    attester_name: str,
    attester_organization: str | None = None,
    attester_email: str | None = None,
) -> tuple[Attestation, str]:
    """Ask someone without an account to attest an act; the token is returned this once only."""
    kindness.lock_organization(db, caller.member_of)
    act = kindness.get_act(db, caller=caller, act_id=act_id)
    if caller.user_id != act.user_id and not caller.is_admin:
        raise Forbidden("Only the act's sender or an organization admin asks for an attestation")
    if level == 5 and attester_organization is None:
        raise invalid("body", "attesterOrganization", "is required for an external validation (level 5)")
    if level == 2 and verification_status.recipient_is_member(
        db, organization_id=act.organization_id, recipient_id=act.recipient_id
    ):
        raise Conflict("The recipient is a member of the organization and confirms level 2 in person", code="recipient_is_member")
    _check_open(act, level, verification_status.decisions_of(db, act.id))
    token = secrets.token_urlsafe(32)
    now = utcnow()
    attestation = Attestation(
        act_id=act.id,
        level=level,
        token_hash=hash_token(token),
        requested_by=caller.user_id,
        attester_name=attester_name,
        attester_organization=attester_organization,
        attester_email=attester_email,
        created_at=now,
        expires_at=now + ATTESTATION_LIFETIME,
    )
    db.add(attestation)
    db.flush()
    return attestation, token


@dataclasses.dataclass(frozen=True)
class AttestationPage:
    """What the attester reads: the act, without any person's name or id."""

    attestation: Attestation
    organization_name: str
    act: KindnessAct


def read_attestation(db: DbSession, *, token: str) -> AttestationPage:
    """The open attestation a token stands for; unknown, used and expired tokens are alike not found."""
    attestation = _open_attestation(db, token)
    act = db.get_one(KindnessAct, attestation.act_id)
    return AttestationPage(attestation, db.get_one(Organization, act.organization_id).name, act)


def answer_attestation(
    db: DbSession,
    cache: Cache,
    *,
    token: str,
    decision: str,
    name: str,
    organization: str | None = None,
    statement: str | None = None,
) -> VerificationDecision:
    """Record an attester's answer: a confirmation is the evidence of the attestation's level."""
    attestation = _open_attestation(db, token)
    act = db.get_one(KindnessAct, attestation.act_id)
    kindness.lock_organization(db, act.organization_id)
    # Under the lock, a concurrent answer to the same token has either committed or not begun.
    db.refresh(attestation)
    db.refresh(act)
    if attestation.answered_at is not None:
        raise NotFound("No such attestation")
    decisions = verification_status.decisions_of(db, act.id)
    _check_open(act, attestation.level, decisions)
    now = utcnow()
    attestation.answered_at = now
    attestation.answer_name = name
    attestation.answer_organization = organization
    attestation.answer_statement = statement
    record = VerificationDecision(
        act_id=act.id, level=attestation.level, decision=decision, attestation_id=attestation.id, decided_at=now
    )
    _record(db, cache, act, record, decisions)
    # The attester has no account: the log keeps the attestation's id, never the attester's name.
    evidence.append(
        db,
        organization_id=act.organization_id,
        type=evidence.ATTESTATION_ANSWERED,
        subject=("act", act.id),
        actor_id=None,
        data={"attestationId": attestation.id, "level": attestation.level, "decision": decision},
    )
    return record


def _open_attestation(db: DbSession, token: str) -> Attestation:
    attestation = db.scalar(select(Attestation).where(Attestation.token_hash == hash_token(token)))
    if attestation is None or attestation.answered_at is not None or attestation.expires_at <= utcnow():
        raise NotFound("No such attestation")
    return attestation


def _check_decider(db: DbSession, act: KindnessAct, caller: Principal, level: int) -> None:
    if act.user_id == caller.user_id:
        raise Forbidden("Nobody verifies an act they sent", code="conflict_of_interest")
    # Ids are compared canonically: the act stores its recipient's id as the caller's is issued.
    is_recipient = canonical_id(act.recipient_id) == caller.user_id
    if level == 2 and not is_recipient:
        raise Forbidden("Only the act's recipient confirms or disputes level 2")
    decided = db.scalar(
        select(VerificationDecision.level).where(
            VerificationDecision.act_id == act.id, VerificationDecision.decided_by == caller.user_id
        )
    )
    if decided is not None and decided != level:
        raise Forbidden(f"You decided level {decided} of this act: one person gives one level", code="conflict_of_interest")
    if level == 3 and caller.role not in APPROVERS:
        raise Forbidden("Only a manager or an admin decides level 3")
    if level == 4 and not caller.is_admin:
        raise Forbidden("Only an organization admin decides level 4")
    if level != 2 and is_recipient:
        raise Forbidden("The act's recipient decides level 2 only", code="conflict_of_interest")


def _authority(db: DbSession, act: KindnessAct, caller: Principal, level: int) -> str | None:
    """Level 3 follows the sender's reporting line; level 4 is an admin's (docs/decisions.md §6)."""
    if level == 4:
        return "admin"
    if level != 3:
        return None
    authority = reporting_lines.decider_authority(db, sender_id=act.user_id, decider_id=caller.user_id, decider_role=caller.role)
    if authority is None:
        raise Forbidden("Level 3 of this act is decided in its sender's reporting line, or by an admin", code="not_in_reporting_line")
    return authority


def _check_open(act: KindnessAct, level: int, decisions: dict[int, str]) -> None:
    # An admin's level-4 decision resolves a standing dispute whatever level was asked for.
    resolves_dispute = level == 4 and verification_status.dispute_stands(decisions)
    if level > act.verification_level and not resolves_dispute:
        raise Conflict(
            f"Level {level} is above the requested level {act.verification_level}", code="above_requested_level"
        )
    if level in decisions:
        raise Conflict(f"Level {level} of this act is already decided", code="already_decided")


def _record(
    db: DbSession, cache: Cache, act: KindnessAct, record: VerificationDecision, decisions: dict[int, str]
) -> None:
    """Store a decision, then bring the act's verified level, tally and status up to date."""
    db.add(record)
    try:
        db.flush()
    except IntegrityError:
        # The unique (act, level) constraint, should two deciders ever pass the organization's lock
        # together. The request's transaction is rolled back with the error.
        raise Conflict(f"Level {record.level} of this act is already decided", code="already_decided") from None
    decisions = {**decisions, record.level: record.decision}
    verified = verification_status.verified_level(decisions)
    if verified != act.verified_level:
        kindness.add_to_category_tally(
            db, act.organization_id, act.category, verification_sum=verified - act.verified_level
        )
        act.verified_level = verified
    verification_status.refresh(db, act, decisions)
    db.flush()
    kindness_stats.invalidate_after_commit(db, cache, act.organization_id)
