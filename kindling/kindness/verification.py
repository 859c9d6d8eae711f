"""Earned verification of kindness acts: members' decisions, and attestations by people without an account.

Who may give the evidence of each level (docs/decisions.md §6): the recipient confirms level 2
(an external recipient through an attestation), a manager or admin approves level 3, an admin
records level 4 with its HR reference, a third party attests level 5. Nobody verifies an act
they sent, and one person gives one level of it. Each level is decided once; `decide` and
`answer_attestation` are the only two ways a decision is recorded. Attestations are mailed by
Kindling to an independent address, and the token is only ever in that mail.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import secrets

from sqlalchemy import and_, literal, or_, select, tuple_, union_all, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.sql.elements import ColumnElement

from kindling.accounts import mailboxes, reporting_lines
from kindling.accounts.locks import lock_organization
from kindling.accounts.models import Organization, SsoDomain, User
from kindling.accounts.sessions import hash_token
from kindling.errors import BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, field_error, invalid
from kindling.evidence import log as evidence
from kindling.evidence import replay
from kindling.kindness import acts as kindness
from kindling.kindness import stats as kindness_stats
from kindling.kindness import verification_status
from kindling.kindness.events import (
    ATTESTATION_ANSWERED,
    VERIFICATION_DECIDED,
    AttestationAnswered,
    VerificationDecided,
)
from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import Attestation, VerificationDecision
from kindling.platform import addresses
from kindling.platform.access import Principal, canonical_id
from kindling.platform.base import utcnow
from kindling.platform.cache import Cache
from kindling.platform.mail import Mailer, MailError
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
    lock_organization(db, caller.member_of)
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
        act_id=act.id,
        level=level,
        decision=decision,
        decided_by=caller.user_id,
        note=note,
        reference=reference,
        authority=authority,
    )
    _record(db, cache, act, record, decisions)
    data: VerificationDecided = {"level": level, "decision": decision}
    if authority:
        data["authority"] = authority
    evidence.append(
        db,
        organization_id=act.organization_id,
        type=VERIFICATION_DECIDED,
        subject=("act", act.id),
        actor_id=caller.user_id,
        data=data,
    )
    return record


def list_decisions(
    db: DbSession, *, caller: Principal, act_id: str
) -> list[tuple[VerificationDecision, Attestation | None]]:
    """The act's decisions by level, each with the attestation it answered (or None)."""
    act = kindness.get_act(db, caller=caller, act_id=act_id)
    rows = db.execute(
        select(VerificationDecision, Attestation)
        .outerjoin(Attestation, Attestation.id == VerificationDecision.attestation_id)
        .where(VerificationDecision.act_id == act.id)
        .order_by(VerificationDecision.level)
    )
    return [(decision, attestation) for decision, attestation in rows]


def list_pending(
    db: DbSession, *, caller: Principal, limit: int = 100, cursor: str | None = None
) -> tuple[list, str | None]:
    """The acts waiting for the caller: as recipient, and as manager or admin, the acts of the
    caller's reports first (docs/decisions.md §6), each part newest first.

    Each way an act can wait for the caller (its recipient's confirmation, or an awaiting value
    the caller decides), for the caller's reports and for everyone else, is a part of its own
    that an index reads newest first and leaves after a page. One ordering of the whole set, by
    report first, sorted every waiting act instead: 400,000 at 1,000,000 acts, over a second.
    The reports are read first, so that the planner knows how many there are.
    """
    report_ids = list(db.scalars(reporting_lines.reports_of(caller.user_id)))
    approves = ["manager"] if caller.role == "manager" else ["manager", "admin"] if caller.is_admin else []
    # Beyond their reports, a manager decides level 3 for the people with no manager on record.
    no_manager = select(User.id).where(User.organization_id == caller.organization_id, User.manager_id.is_(None))

    def ways(of_reports: bool) -> list[ColumnElement[bool]]:
        found = [and_(KindnessAct.verification_awaiting == "recipient", KindnessAct.recipient_id == caller.user_id)]
        for awaiting in approves:
            way = and_(KindnessAct.verification_awaiting == awaiting, KindnessAct.user_id != caller.user_id)
            found.append(way if caller.is_admin or of_reports else and_(way, KindnessAct.user_id.in_(no_manager)))
        return found

    # (rank, the senders it covers): the reports first, then everyone else.
    ranks = [(0, [KindnessAct.user_id.in_(report_ids)]), (1, [KindnessAct.user_id.not_in(report_ids)])]
    if not report_ids:
        ranks = [(1, [])]
    position = None
    if cursor is not None:
        key, record_id = decode_name_cursor(cursor)
        position = (*_pending_position(key), record_id)
    parts = []
    for rank, senders in ranks:
        if position is not None and rank < position[0]:
            continue
        where = [KindnessAct.organization_id == caller.organization_id, *senders]
        if position is not None and rank == position[0]:
            where.append(tuple_(KindnessAct.created_at, KindnessAct.id) < (position[1], position[2]))
        for way in ways(of_reports=rank == 0):
            part = (
                select(literal(rank).label("rank"), KindnessAct.created_at, KindnessAct.id)
                .where(way, *where)
                .order_by(KindnessAct.created_at.desc(), KindnessAct.id.desc())
                .limit(limit + 1)
                .subquery()
            )
            parts.append(select(part))
    waiting = union_all(*parts).subquery()
    # The page is chosen on the parts' keys alone; only its own acts are read whole.
    order = (waiting.c.rank, waiting.c.created_at.desc(), waiting.c.id.desc())
    page = select(waiting).order_by(*order).limit(limit + 1).subquery()
    rows = db.execute(
        select(KindnessAct, page.c.rank)
        .join(page, page.c.id == KindnessAct.id)
        .order_by(page.c.rank, page.c.created_at.desc(), page.c.id.desc())
    ).all()
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
    mailer: Mailer | None,
    *,
    caller: Principal,
    act_id: str,
    level: int,
    attester_name: str,
    attester_email: str,
    attester_organization: str | None = None,
    page_url: str | None,
    secret_key: str | None,
) -> Attestation:
    """Mail an independent person the link to attest an act; the token is only ever in that mail.

    The address is parsed once (kindling/platform/addresses.py) and its normal form is what is
    checked, mailed, stored and keyed. The mail goes out before anything is stored, outside the
    organization's lock (a slow mail server holds up nobody else's writes): a mail server that
    refuses or stays silent leaves no attestation open, and the request's checks are made again
    once the lock is held. `secret_key` keys erased people's mailboxes (kindling/accounts/mailboxes.py).
    """
    try:
        address = addresses.parse(attester_email)
    except addresses.InvalidAddress as exc:
        raise invalid("body", "attesterEmail", str(exc)) from None
    if mailer is None or page_url is None:
        raise ServiceUnavailable(
            "Kindling sends attestations by mail, and no mail server is configured", code="mail_unavailable"
        )
    act = kindness.get_act(db, caller=caller, act_id=act_id)
    _check_attestation_request(db, act, caller=caller, level=level, attester_organization=attester_organization)
    key = attester_key(act.organization_id, address)
    _check_independent(db, act, caller=caller, address=address, secret_key=secret_key)
    _check_one_level(db, act, level=level, key=key, asked_too=True)
    organization = db.get_one(Organization, act.organization_id)
    token = secrets.token_urlsafe(32)
    now = utcnow()
    expires_at = now + ATTESTATION_LIFETIME
    try:
        delivered_at = mailer.send(
            to=address.normal,
            subject=_one_line(f"{organization.name} asks you to confirm an act of kindness"),
            text=_attestation_mail(
                organization=organization.name,
                act=act,
                level=level,
                name=attester_name,
                link=f"{page_url}/attest#{token}",
                expires_at=expires_at,
            ),
        )
    except MailError:
        raise ServiceUnavailable(
            "The mail server did not take the attestation mail; nothing was sent", code="mail_unavailable"
        ) from None
    lock_organization(db, act.organization_id)
    db.refresh(act)
    _check_attestation_request(db, act, caller=caller, level=level, attester_organization=attester_organization)
    _check_one_level(db, act, level=level, key=key, asked_too=True)
    # At most one open request per act and level: the newest one stands.
    db.execute(
        update(Attestation)
        .where(
            Attestation.act_id == act.id,
            Attestation.level == level,
            Attestation.answered_at.is_(None),
            Attestation.cancelled_at.is_(None),
        )
        .values(cancelled_at=now)
        .execution_options(synchronize_session=False)
    )
    attestation = Attestation(
        act_id=act.id,
        level=level,
        token_hash=hash_token(token),
        requested_by=caller.user_id,
        attester_name=attester_name,
        attester_organization=attester_organization,
        attester_email=address.normal,
        attester_domain=address.domain,
        attester_key=key,
        created_at=now,
        expires_at=expires_at,
        delivered_at=delivered_at,
    )
    db.add(attestation)
    db.flush()
    return attestation


def claimed_email_domains(db: DbSession, *, organization_id: str) -> frozenset[str]:
    """The email domains the organization claims for its single sign-on (docs/decisions.md §13)."""
    return frozenset(db.scalars(select(SsoDomain.domain).where(SsoDomain.organization_id == organization_id)))


@dataclasses.dataclass(frozen=True)
class AttestationPage:
    """What the attester reads: the act, without any person's name or id."""

    attestation: Attestation
    organization_name: str
    act: KindnessAct


def lookup_attestation(db: DbSession, *, token: str) -> AttestationPage:
    """The open attestation a token stands for; unknown, used, replaced and expired tokens are alike not found."""
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
    lock_organization(db, act.organization_id)
    # Under the lock, a concurrent answer to the same token has either committed or not begun.
    db.refresh(attestation)
    db.refresh(act)
    if attestation.answered_at is not None or attestation.cancelled_at is not None:
        raise NotFound("No such attestation")
    decisions = verification_status.decisions_of(db, act.id)
    _check_open(act, attestation.level, decisions)
    if attestation.attester_key is not None:
        # Two requests to one mailbox for two levels may have been open at once: only one is answered.
        _check_one_level(db, act, level=attestation.level, key=attestation.attester_key, asked_too=False)
    now = utcnow()
    attestation.answered_at = now
    attestation.answer_name = name
    attestation.answer_organization = organization
    attestation.answer_statement = statement
    record = VerificationDecision(
        act_id=act.id, level=attestation.level, decision=decision, attestation_id=attestation.id, decided_at=now
    )
    _record(db, cache, act, record, decisions)
    # The attester has no account, so the event's actorId is null: the answer is tied to the address
    # it was mailed to by attesterKey, which tells an auditor which answers came from one address
    # without naming it, and to the member who asked for it by requestedBy (docs/evidence.md).
    data: AttestationAnswered = {
        "attestationId": attestation.id,
        "level": attestation.level,
        "decision": decision,
        "requestedBy": attestation.requested_by,
        "attesterDomain": attestation.attester_domain,
        "attesterKey": attestation.attester_key,
    }
    evidence.append(
        db,
        organization_id=act.organization_id,
        type=ATTESTATION_ANSWERED,
        subject=("act", act.id),
        actor_id=None,
        data=data,
    )
    return record


def attester_key(organization_id: str, address: addresses.Address) -> str:
    """Hex SHA-256 of the organization id, a line feed, and the compared mailbox: one key for all of
    a mailbox's `+tag` aliases (docs/evidence.md)."""
    return hashlib.sha256(f"{organization_id}\n{address.mailbox}".encode()).hexdigest()


def _open_attestation(db: DbSession, token: str) -> Attestation:
    attestation = db.scalar(select(Attestation).where(Attestation.token_hash == hash_token(token)))
    if (
        attestation is None
        or attestation.answered_at is not None
        or attestation.cancelled_at is not None
        or attestation.expires_at <= utcnow()
    ):
        raise NotFound("No such attestation")
    return attestation


def _check_attestation_request(
    db: DbSession, act: KindnessAct, *, caller: Principal, level: int, attester_organization: str | None
) -> None:
    if caller.user_id != act.user_id and not caller.is_admin:
        raise Forbidden("Only the act's sender or an organization admin asks for an attestation")
    if level == 5 and attester_organization is None:
        raise invalid("body", "attesterOrganization", "is required for an external validation (level 5)")
    if level == 2 and verification_status.recipient_is_member(
        db, organization_id=act.organization_id, recipient_id=act.recipient_id
    ):
        raise Conflict(
            "The recipient is a member of the organization and confirms level 2 in person", code="recipient_is_member"
        )
    _check_open(act, level, verification_status.decisions_of(db, act.id))


def _check_independent(
    db: DbSession, act: KindnessAct, *, caller: Principal, address: addresses.Address, secret_key: str | None
) -> None:
    """The attester is nobody the organization could speak for: not the mailbox of anyone who is or
    was a member, erased people included, nor the requester's, nor at or under a claimed domain."""
    mailbox, organization_id = address.mailbox, act.organization_id
    requester = db.get_one(User, caller.user_id)
    claimed = {addresses.a_label(domain) for domain in claimed_email_domains(db, organization_id=organization_id)}
    if (
        addresses.mailbox_of(requester.email) == mailbox
        or any(address.domain == claim or address.domain.endswith("." + claim) for claim in claimed)
        or mailboxes.is_members(db, organization_id=organization_id, mailbox=mailbox)
        or mailboxes.is_erased_members(db, secret_key, organization_id=organization_id, mailbox=mailbox)
    ):
        raise Conflict(
            "The attester must be independent of the organization: not a member's, a former member's, the "
            "requester's or an SSO domain's address",
            code="attester_not_independent",
            details={"errors": [field_error("body", "attesterEmail", "is not an independent address")]},
        )


def _check_one_level(db: DbSession, act: KindnessAct, *, level: int, key: str, asked_too: bool) -> None:
    """One mailbox, one level of an act: 409 when it answered another level of it, or (`asked_too`,
    at request time) has an open request for one."""
    answered: ColumnElement[bool] = Attestation.answered_at.is_not(None)
    if asked_too:
        answered = or_(answered, and_(Attestation.cancelled_at.is_(None), Attestation.expires_at > utcnow()))
    other = db.scalar(
        select(Attestation.id)
        .where(Attestation.act_id == act.id, Attestation.level != level, Attestation.attester_key == key, answered)
        .limit(1)
    )
    if other is not None:
        raise Conflict(
            "This mailbox answered, or was asked to answer, another level of this act: one mailbox gives one level",
            code="attester_already_answered",
            # An answer's body names no address: only a request's refusal points at its field.
            details={"errors": [field_error("body", "attesterEmail", "already answers another level of this act")]}
            if asked_too
            else None,
        )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _attestation_mail(
    *, organization: str, act: KindnessAct, level: int, name: str, link: str, expires_at: dt.datetime
) -> str:
    asked = "you received" if level == 2 else "you witnessed"
    return f"""Hello {_one_line(name)},

{_one_line(organization)} records acts of kindness, and asks you to confirm one {asked}:

  {act.category.replace("_", " ")}, {act.created_at.date().isoformat()}
  {act.description}

Please confirm or decline it here, by {expires_at.date().isoformat()}:

{link}

The link works once. If you know nothing of this, decline it, or ignore this mail.
"""


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
        raise Forbidden(
            f"You decided level {decided} of this act: one person gives one level", code="conflict_of_interest"
        )
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
    authority = reporting_lines.decider_authority(
        db, sender_id=act.user_id, decider_id=caller.user_id, decider_role=caller.role
    )
    if authority is None:
        raise Forbidden(
            "Level 3 of this act is decided in its sender's reporting line, or by an admin",
            code="not_in_reporting_line",
        )
    return authority


def _check_open(act: KindnessAct, level: int, decisions: dict[int, str]) -> None:
    # An admin's level-4 decision resolves a standing dispute whatever level was asked for.
    resolves_dispute = level == 4 and replay.dispute_stands(decisions)
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
    verified = replay.verified_level(decisions)
    if verified != act.verified_level:
        kindness.add_to_category_tally(
            db, act.organization_id, act.category, verification_sum=verified - act.verified_level
        )
        act.verified_level = verified
    verification_status.refresh(db, act, decisions)
    db.flush()
    kindness_stats.invalidate_after_commit(db, cache, act.organization_id)
