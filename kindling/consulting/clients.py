"""Invitations from consultants to organizations, and the client relationships they start.

Every change of state has its own small function (_create_invitation, accept, decline,
cancel, end), the one place where what follows such a change belongs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from sqlalchemy import ColumnElement, Select, and_, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.orm import contains_eager, joinedload

from kindling import outbox
from kindling.accounts.models import Organization, User
from kindling.consulting.models import (
    ACCEPTED,
    ACTIVE,
    CANCELLED,
    DECLINED,
    ENDED,
    EXPIRED,
    PENDING,
    ClientRelationship,
    Invitation,
)
from kindling.errors import ApiError, Conflict, NotFound
from kindling.platform import free_text, pagination
from kindling.platform.base import utcnow

INVITATION_LIFETIME = dt.timedelta(days=14)

_INVITATION_PARTIES = (
    joinedload(Invitation.organization, innerjoin=True),
    joinedload(Invitation.consultant, innerjoin=True),
)


def send_invitation(
    db: DbSession, *, consultant_id: str, organization_id: str, message: str | None = None
) -> Invitation:
    """Invite an organization to become the consultant's client, or return the open invitation."""
    (outcome,) = invite_many(db, consultant_id=consultant_id, requests=[(organization_id, message)], source="single")
    if isinstance(outcome, ApiError):
        raise outcome
    return outcome


def invite_many(
    db: DbSession, *, consultant_id: str, requests: Sequence[tuple[str, str | None]], source: str = "bulk"
) -> list[Invitation | ApiError]:
    """Invite each (organization id, message) of `requests`, in a few queries whatever their number.

    Per request, in order: the new or still open invitation, or the error that refused it.
    The organization ids must be distinct. Each new invitation emits `client.invited`.
    """
    if not requests:
        return []
    try:
        with db.begin_nested():
            return _invite_many(db, consultant_id, requests, source)
    except IntegrityError:
        # A concurrent request opened an invitation for one of these organizations after we
        # looked; looking again finds it, and it is returned like any open invitation.
        return _invite_many(db, consultant_id, requests, source)


def _invite_many(
    db: DbSession, consultant_id: str, requests: Sequence[tuple[str, str | None]], source: str
) -> list[Invitation | ApiError]:
    now = utcnow()
    ids = [organization_id for organization_id, _ in requests]
    consultant = db.get_one(User, consultant_id)
    organizations = {o.id: o for o in db.scalars(select(Organization).where(Organization.id.in_(ids)))}
    clients = set(
        db.scalars(
            select(ClientRelationship.organization_id).where(
                ClientRelationship.consultant_id == consultant_id,
                ClientRelationship.status == ACTIVE,
                ClientRelationship.organization_id.in_(ids),
            )
        )
    )
    open_invitations = {
        invitation.organization_id: invitation
        for invitation in db.scalars(
            select(Invitation)
            .where(
                Invitation.consultant_id == consultant_id,
                Invitation.status == PENDING,
                Invitation.organization_id.in_(ids),
            )
            .options(*_INVITATION_PARTIES)
        )
    }
    outcomes: list[Invitation | ApiError] = []
    created: list[Invitation] = []
    for organization_id, message in requests:
        organization = organizations.get(organization_id)
        previous = open_invitations.get(organization_id)
        if organization is None:
            outcomes.append(NotFound("No such organization"))
        elif organization_id in clients:
            outcomes.append(Conflict("This organization is already your client", code="already_client"))
        elif previous is not None and previous.status_at(now) == PENDING:
            outcomes.append(previous)
        else:
            if previous is not None:
                # Frees the pair for the new invitation (one pending invitation per pair).
                previous.status = EXPIRED
            created.append(_create_invitation(db, consultant, organization, message, now))
            outcomes.append(created[-1])
    db.flush()
    subscribed = outbox.subscribed(db, consultant_id=consultant_id, type="client.invited")
    for invitation in created if subscribed else ():
        outbox.emit(db, consultant_id=consultant_id, type="client.invited", data=_invited(invitation, source))
    return outcomes


def _create_invitation(
    db: DbSession, consultant: User, organization: Organization, message: str | None, now: dt.datetime
) -> Invitation:
    invitation = Invitation(
        consultant=consultant,
        organization=organization,
        message=free_text.optional(message),
        created_at=now,
        expires_at=now + INVITATION_LIFETIME,
    )
    db.add(invitation)
    return invitation


def accept_invitation(db: DbSession, *, organization_id: str, invitation_id: str) -> ClientRelationship:
    """The invited organization accepts: the consultant's client relationship starts."""
    invitation = _answerable_invitation(db, invitation_id, Invitation.organization_id == organization_id)
    now = utcnow()
    invitation.status, invitation.responded_at = ACCEPTED, now
    relationship = ClientRelationship(
        consultant=invitation.consultant,
        organization=invitation.organization,
        invitation_id=invitation.id,
        accepted_at=now,
    )
    db.add(relationship)
    db.flush()
    outbox.emit(
        db,
        consultant_id=relationship.consultant_id,
        type="client.accepted",
        data={
            "invitationId": invitation.id,
            "relationshipId": relationship.id,
            "organizationId": relationship.organization_id,
            "organizationName": relationship.organization.name,
            "acceptedAt": now,
        },
    )
    return relationship


def decline_invitation(db: DbSession, *, organization_id: str, invitation_id: str) -> Invitation:
    """The invited organization declines."""
    invitation = _answerable_invitation(db, invitation_id, Invitation.organization_id == organization_id)
    invitation.status, invitation.responded_at = DECLINED, utcnow()
    db.flush()
    return invitation


def cancel_invitation(db: DbSession, *, consultant_id: str, invitation_id: str) -> Invitation:
    """The consultant withdraws an invitation that is still open."""
    invitation = _answerable_invitation(db, invitation_id, Invitation.consultant_id == consultant_id)
    invitation.status, invitation.responded_at = CANCELLED, utcnow()
    db.flush()
    _emit_cancelled(
        db,
        invitation.consultant_id,
        invitation.organization,
        reason="invitation_cancelled",
        invitation_id=invitation.id,
        relationship_id=None,
        ended_by="consultant",
        at=invitation.responded_at,
    )
    return invitation


def _answerable_invitation(db: DbSession, invitation_id: str, visible: ColumnElement[bool]) -> Invitation:
    """The invitation, locked, if the caller may see it and it can still be answered."""
    invitation = db.scalar(
        select(Invitation)
        .where(Invitation.id == invitation_id, visible)
        .options(*_INVITATION_PARTIES)
        .with_for_update(of=Invitation)
    )
    if invitation is None:
        raise NotFound("No such invitation")
    status = invitation.status_at(utcnow())
    if status == EXPIRED:
        raise Conflict("This invitation has expired", code="invitation_expired")
    if status != PENDING:
        raise Conflict(f"This invitation is no longer pending: it was {status}", code="invitation_not_pending")
    return invitation


def list_invitations(
    db: DbSession,
    *,
    consultant_id: str | None = None,
    organization_id: str | None = None,
    status: str | None = None,
    limit: int,
    cursor: str | None = None,
) -> tuple[list[Invitation], str | None]:
    """Invitations a consultant sent, or an organization received, newest first, a page at a time."""
    query = select(Invitation).options(*_INVITATION_PARTIES)
    if consultant_id is not None:
        query = query.where(Invitation.consultant_id == consultant_id)
    if organization_id is not None:
        query = query.where(Invitation.organization_id == organization_id)
    if status is not None:
        query = query.where(_has_status(status, utcnow()))
    return pagination.page(
        db, query, timestamp=Invitation.created_at, record_id=Invitation.id, limit=limit, cursor=cursor
    )


def _has_status(status: str, now: dt.datetime) -> ColumnElement[bool]:
    """The SQL form of Invitation.status_at(now) == status."""
    if status == PENDING:
        return and_(Invitation.status == PENDING, Invitation.expires_at > now)
    if status == EXPIRED:
        return or_(Invitation.status == EXPIRED, and_(Invitation.status == PENDING, Invitation.expires_at <= now))
    return Invitation.status == status


def list_clients(db: DbSession, *, consultant_id: str) -> list[ClientRelationship]:
    """The consultant's active client relationships, by organization name."""
    query = _active_relationships().where(ClientRelationship.consultant_id == consultant_id)
    return list(db.scalars(query.order_by(func.lower(Organization.name), Organization.id)))


def list_consultants(db: DbSession, *, organization_id: str) -> list[ClientRelationship]:
    """The organization's active relationships with consultants, by consultant name."""
    query = _active_relationships().where(ClientRelationship.organization_id == organization_id)
    return list(db.scalars(query.order_by(func.lower(User.name), User.id)))


def is_client(db: DbSession, *, consultant_id: str, organization_id: str) -> bool:
    """Whether the organization is in an active relationship with the consultant."""
    return db.scalar(_active_relationship(consultant_id, organization_id)) is not None


def end_relationship(db: DbSession, *, consultant_id: str, organization_id: str, ended_by: str) -> ClientRelationship:
    """End the active relationship between a consultant and an organization: `ended_by` is
    the side that asked, "consultant" or "organization"."""
    relationship = db.scalar(
        _active_relationship(consultant_id, organization_id).with_for_update(of=ClientRelationship)
    )
    if relationship is None:
        raise NotFound("No active client relationship")
    relationship.status, relationship.ended_at = ENDED, utcnow()
    db.flush()
    _emit_cancelled(
        db,
        consultant_id,
        relationship.organization,
        reason="relationship_ended",
        invitation_id=None,
        relationship_id=relationship.id,
        ended_by=ended_by,
        at=relationship.ended_at,
    )
    return relationship


def active_consultant_ids(db: DbSession, *, organization_id: str) -> list[str]:
    """The consultants the organization is an active client of."""
    return list(
        db.scalars(
            select(ClientRelationship.consultant_id).where(
                ClientRelationship.organization_id == organization_id, ClientRelationship.status == ACTIVE
            )
        )
    )


def _invited(invitation: Invitation, source: str) -> dict:
    return {
        "invitationId": invitation.id,
        "organizationId": invitation.organization_id,
        "organizationName": invitation.organization.name,
        "message": invitation.message,
        "source": source,
        "invitedAt": invitation.created_at,
        "expiresAt": invitation.expires_at,
    }


def _emit_cancelled(
    db: DbSession,
    consultant_id: str,
    organization: Organization,
    *,
    reason: str,
    invitation_id: str | None,
    relationship_id: str | None,
    ended_by: str,
    at: dt.datetime | None,
) -> None:
    outbox.emit(
        db,
        consultant_id=consultant_id,
        type="client.cancelled",
        data={
            "reason": reason,
            "invitationId": invitation_id,
            "relationshipId": relationship_id,
            "organizationId": organization.id,
            "organizationName": organization.name,
            "endedBy": ended_by,
            "cancelledAt": at,
        },
    )


def _active_relationships() -> Select[ClientRelationship]:
    """Active relationships, each with its organization and consultant."""
    return (
        select(ClientRelationship)
        .join(ClientRelationship.organization)
        .join(ClientRelationship.consultant)
        .where(ClientRelationship.status == ACTIVE)
        .options(contains_eager(ClientRelationship.organization), contains_eager(ClientRelationship.consultant))
    )


def _active_relationship(consultant_id: str, organization_id: str) -> Select[ClientRelationship]:
    """The active relationship between a consultant and an organization."""
    return _active_relationships().where(
        ClientRelationship.consultant_id == consultant_id, ClientRelationship.organization_id == organization_id
    )
