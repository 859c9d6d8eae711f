"""Two tenants, each with an admin, a member, a client consultant (with a webhook endpoint),
a saved theme and one record of every kind."""

from __future__ import annotations

import dataclasses

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select

from kindling.donations import service as donations
from kindling.donations.models import GivingRequest
from kindling.evidence import cosignatures
from kindling.evidence.models import EvidenceWitness
from kindling.platform.base import utcnow
from tests.factories import Account
from tests.factories import donations as payments
from tests.factories.volunteering import CENTRE, north_of

# A witness's verifier key, as admins and consultants list one.
WITNESS_KEY = cosignatures.vkey("witness.example.test/w1", Ed25519PrivateKey.generate().public_key().public_bytes_raw())


@dataclasses.dataclass
class Tenant:
    admin: Account
    member: Account
    consultant: Account  # in an active client relationship with the organization
    suitor: Account  # a consultant whose invitation the organization has not answered
    act_id: str
    opportunity_id: str
    check_in_id: str  # a colleague's check-in at the opportunity, made too far away to be verified
    donation_id: str
    wellbeing_id: str
    invitation_id: str
    endpoint_id: str  # the client consultant's webhook endpoint
    program_id: str  # a matching-gift program whose requests wait for review
    giving_request_id: str  # the match of the member's succeeded donation
    witness_id: str  # a witness the admin listed for the organization's log

    @property
    def organization_id(self) -> str:
        return self.admin.organization_id

    @property
    def consultant_id(self) -> str:
        return self.consultant.user.id

    @property
    def member_id(self) -> str:
        return self.member.user.id

    def ids(self) -> dict[str, str]:
        """Every id of this tenant's that another tenant must never see."""
        return {
            "organization": self.organization_id,
            "admin": self.admin.user.id,
            "member": self.member.user.id,
            "act": self.act_id,
            "opportunity": self.opportunity_id,
            "check-in": self.check_in_id,
            "donation": self.donation_id,
            "wellbeing": self.wellbeing_id,
            "invitation": self.invitation_id,
            "consultant": self.consultant.user.id,
            "suitor": self.suitor.user.id,
            "endpoint": self.endpoint_id,
            "program": self.program_id,
            "giving request": self.giving_request_id,
            "witness": self.witness_id,
        }


def make_tenant(make, db) -> Tenant:
    admin = make.admin()
    member = make.member(admin)
    consultant, suitor = make.consultant(), make.consultant()
    make.client(consultant, admin)
    make.saved_theme(consultant, admin)
    opportunity = make.opportunity(admin)
    check_in = make.check_in(make.member(admin), opportunity, north_of(CENTRE, 5000))
    program = make.match_program(admin, approval="review")
    gift = make.donation(member)
    event = payments.payment_event("payment_intent.succeeded", gift)
    donations.apply_payment_event(
        db, event_id=event["id"], event_type=event["type"], payment=event["data"]["object"], donation=gift
    )
    witness = EvidenceWitness(
        organization_id=admin.organization_id,
        name="Auditor's witness",
        url="https://witness.example.test",
        verifier_key=WITNESS_KEY,
        created_at=utcnow(),
    )
    db.add(witness)
    db.flush()
    tenant = Tenant(
        admin=admin,
        member=member,
        consultant=consultant,
        suitor=suitor,
        act_id=make.act(member).id,
        opportunity_id=opportunity.id,
        check_in_id=check_in.id,
        donation_id=make.donation(member).id,
        wellbeing_id=make.response(member, comment="Private thoughts").id,
        invitation_id=make.invitation(suitor, admin).id,
        endpoint_id=make.endpoint(consultant, "https://hooks.example.test/k").id,
        program_id=program.id,
        giving_request_id=db.scalars(select(GivingRequest.id).where(GivingRequest.program_id == program.id)).one(),
        witness_id=witness.id,
    )
    db.flush()
    return tenant


@pytest.fixture
def tenants(make, db) -> tuple[Tenant, Tenant]:
    """Tenant A, whose records are the targets, and tenant B, the intruder."""
    return make_tenant(make, db), make_tenant(make, db)
