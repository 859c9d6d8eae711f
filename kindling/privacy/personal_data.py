"""A person's data: a copy of everything held about them, and its erasure (docs/decisions.md §15).

Erasure removes what names or describes the person and keeps their ids as pseudonyms, so
acts, decisions, check-ins and amounts still count and the evidence chain, which holds ids
only, still verifies.
"""

from __future__ import annotations

from sqlalchemy import delete, event, select, update
from sqlalchemy.orm import Session

from kindling.accounts import identity, lifecycle, mailboxes
from kindling.accounts.models import Organization, User
from kindling.accounts.models import Session as SignInSession
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership, ScimUser
from kindling.donations.models import Donation, GivingRequest
from kindling.errors import NotFound
from kindling.evidence import log as evidence
from kindling.kindness.models import KindnessAct
from kindling.kindness.verification_models import Attestation, VerificationDecision
from kindling.platform import addresses
from kindling.platform.base import utcnow
from kindling.platform.database import truncate_write_ahead_log
from kindling.privacy import storage
from kindling.slack import recognition as slack
from kindling.volunteering.models import CheckIn, VolunteerOpportunity
from kindling.wellbeing.models import WellbeingResponse

ERASED_NAME = "Erased person"
ERASED_DESCRIPTION = "Erased"
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


def export(db: Session, *, user: User) -> dict:
    """Everything held about the person, as one document; sessions as metadata, never a token."""
    directory = db.get(ScimUser, user.id)
    acts_sent = db.scalars(select(KindnessAct).where(KindnessAct.user_id == user.id).order_by(KindnessAct.created_at))
    acts_received = db.scalars(
        select(KindnessAct).where(KindnessAct.recipient_id == user.id).order_by(KindnessAct.created_at)
    )
    return {
        "exportedAt": utcnow(),
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
        "actsSent": [_act(act) for act in acts_sent],
        "actsReceived": [_act(act) for act in acts_received],
        "verificationDecisions": [
            {
                "id": decision.id,
                "actId": decision.act_id,
                "level": decision.level,
                "decision": decision.decision,
                "note": decision.note,
                "reference": decision.reference,
                "decidedAt": decision.decided_at,
            }
            for decision in db.scalars(
                select(VerificationDecision)
                .where(VerificationDecision.decided_by == user.id)
                .order_by(VerificationDecision.decided_at)
            )
        ],
        "checkIns": [
            {
                "id": check_in.id,
                "opportunityId": check_in.opportunity_id,
                "checkedInAt": check_in.checked_in_at,
                "latitude": check_in.latitude,
                "longitude": check_in.longitude,
                "accuracyMeters": check_in.accuracy_meters,
                "distanceMeters": check_in.distance_meters,
                "verified": check_in.verified,
                "hours": check_in.hours,
            }
            for check_in in db.scalars(
                select(CheckIn).where(CheckIn.user_id == user.id).order_by(CheckIn.checked_in_at)
            )
        ],
        "checkInApprovals": [
            {"checkInId": check_in.id, "approvedAt": check_in.approved_at, "note": check_in.approval_note}
            for check_in in db.scalars(
                select(CheckIn).where(CheckIn.approved_by == user.id).order_by(CheckIn.approved_at)
            )
        ],
        "donations": [
            {
                "id": donation.id,
                "amount": donation.amount,
                "currency": donation.currency,
                "recipientName": donation.recipient_name,
                "note": donation.note,
                "status": donation.status,
                "createdAt": donation.created_at,
            }
            for donation in db.scalars(
                select(Donation).where(Donation.user_id == user.id).order_by(Donation.created_at)
            )
        ],
        "givingRequests": [
            {
                "id": request.id,
                "programId": request.program_id,
                "kind": request.kind,
                "status": request.status,
                "amount": request.amount,
                "currency": request.currency,
                "recipientName": request.recipient_name,
                "decisionReason": request.decision_reason,
                "decisionNote": request.decision_note,
                "createdAt": request.created_at,
            }
            for request in db.scalars(
                select(GivingRequest).where(GivingRequest.user_id == user.id).order_by(GivingRequest.created_at)
            )
        ],
        "wellbeingResponses": [
            {
                "id": response.id,
                "mood": response.mood,
                "stress": response.stress,
                "energy": response.energy,
                "comment": response.comment,
                "anonymous": response.anonymous,
                "sentiment": {"label": response.sentiment_label, "compound": response.sentiment_compound},
                "createdAt": response.created_at,
            }
            for response in db.scalars(
                select(WellbeingResponse)
                .where(WellbeingResponse.user_id == user.id)
                .order_by(WellbeingResponse.created_at)
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
        "slackIdentities": slack.identities_of(db, user_id=user.id),
    }


def _act(act: KindnessAct) -> dict:
    return {
        "id": act.id,
        "senderId": act.user_id,
        "recipientId": act.recipient_id,
        "description": act.description,
        "category": act.category,
        "requestedLevel": act.verification_level,
        "verifiedLevel": act.verified_level,
        "media": act.media,
        "createdAt": act.created_at,
    }


def erase(db: Session, *, organization_id: str, user_id: str, actor_id: str, secret_key: str | None) -> User:
    """Erase a person of the organization, irreversibly: 409 for its last admin. Their mailbox stays
    as a hash keyed by `secret_key` (SECRET_KEY), so it is never taken for an independent attester's."""
    written = storage.write_counts(db)
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
    # Their Slack user id, kept with the acts recorded from Slack, names them there.
    slack.forget_person(db, user_id=user.id)
    _remove_what_they_wrote(db, user_id=user.id)
    db.flush()
    evidence.append(
        db,
        organization_id=organization_id,
        type=evidence.MEMBER_ERASED,
        subject=("member", user.id),
        actor_id=actor_id,
        data={},
    )
    # On PostgreSQL the old row versions keep what was removed until the worker rewrites their tables.
    storage.schedule_cleanup(db, since=written)
    return user


def _remove_what_they_wrote(db: Session, *, user_id: str) -> None:
    """Their texts, notes and media, their check-ins' coordinates and their wellbeing answers; ids and figures stay."""
    sent = select(KindnessAct.id).where(KindnessAct.user_id == user_id)
    db.execute(
        update(KindnessAct)
        .where(KindnessAct.user_id == user_id)
        .values(description=ERASED_DESCRIPTION, media=[])
        .execution_options(synchronize_session=False)
    )
    # Attesters' statements describe the act, and so the person.
    db.execute(update(Attestation).where(Attestation.act_id.in_(sent)).values(answer_statement=None))
    db.execute(update(VerificationDecision).where(VerificationDecision.decided_by == user_id).values(note=None))
    db.execute(update(CheckIn).where(CheckIn.approved_by == user_id).values(approval_note=None))
    # Where they were is theirs; the opportunity's centre stands in, and the stored distance and verdict stay.
    centre = select(VolunteerOpportunity).where(VolunteerOpportunity.id == CheckIn.opportunity_id)
    db.execute(
        update(CheckIn)
        .where(CheckIn.user_id == user_id)
        .values(
            latitude=centre.with_only_columns(VolunteerOpportunity.latitude).scalar_subquery(),
            longitude=centre.with_only_columns(VolunteerOpportunity.longitude).scalar_subquery(),
            accuracy_meters=None,
        )
        .execution_options(synchronize_session=False)
    )
    db.execute(update(Donation).where(Donation.user_id == user_id).values(note=None))
    # Reasons and notes on their giving requests describe them; those they wrote on others' are theirs.
    db.execute(
        update(GivingRequest)
        .where((GivingRequest.user_id == user_id) | (GivingRequest.decided_by == user_id))
        .values(decision_reason=None, decision_note=None)
    )
    # Published wellbeing figures stay as published (they hold no answer of anyone's).
    db.execute(delete(WellbeingResponse).where(WellbeingResponse.user_id == user_id))
    # An embedded database keeps old page images in its write-ahead log: truncate it once this commits.
    event.listen(db, "after_commit", lambda session: truncate_write_ahead_log(session.get_bind()), once=True)
