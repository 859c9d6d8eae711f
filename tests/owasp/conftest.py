"""Two tenants, each with an admin, a member, a client consultant (with a webhook endpoint),
a saved theme and one record of every kind."""

from __future__ import annotations

import dataclasses

import pytest

from tests.factories import Account
from tests.factories import clients as client_factory
from tests.factories import donations as donation_factory
from tests.factories import themes as theme_factory
from tests.factories import volunteering as volunteer_factory
from tests.factories import webhooks as webhook_factory
from tests.factories import wellbeing as wellbeing_factory
from tests.factories.kindness import KindnessFactory


@dataclasses.dataclass
class Tenant:
    admin: Account
    member: Account
    consultant: Account  # in an active client relationship with the organization
    suitor: Account  # a consultant whose invitation the organization has not answered
    act_id: str
    opportunity_id: str
    donation_id: str
    wellbeing_id: str
    invitation_id: str
    endpoint_id: str  # the client consultant's webhook endpoint

    @property
    def organization_id(self) -> str:
        return self.admin.organization_id

    @property
    def consultant_id(self) -> str:
        return self.consultant.user.id

    def ids(self) -> dict[str, str]:
        """Every id of this tenant's that another tenant must never see."""
        return {
            "organization": self.organization_id, "admin": self.admin.user.id, "member": self.member.user.id,
            "act": self.act_id, "opportunity": self.opportunity_id, "donation": self.donation_id,
            "wellbeing": self.wellbeing_id, "invitation": self.invitation_id,
            "consultant": self.consultant.user.id, "suitor": self.suitor.user.id, "endpoint": self.endpoint_id,
        }


def make_tenant(make, db, runtime) -> Tenant:
    admin = make.admin()
    member = make.member(admin)
    consultant, suitor = make.consultant(), make.consultant()
    client_factory.client(db, consultant, admin)
    theme_factory.saved_theme(db, consultant, admin)
    tenant = Tenant(
        admin=admin,
        member=member,
        consultant=consultant,
        suitor=suitor,
        act_id=KindnessFactory(db, runtime.cache).act(member).id,
        opportunity_id=volunteer_factory.opportunity(db, admin).id,
        donation_id=donation_factory.donation(db, member).id,
        wellbeing_id=wellbeing_factory.response(db, member, comment="Private thoughts").id,
        invitation_id=client_factory.invitation(db, suitor, admin).id,
        endpoint_id=webhook_factory.endpoint(db, consultant, "https://hooks.example.test/k").id,
    )
    db.flush()
    return tenant


@pytest.fixture
def tenants(make, db, runtime) -> tuple[Tenant, Tenant]:
    """Tenant A, whose records are the targets, and tenant B, the intruder."""
    return make_tenant(make, db, runtime), make_tenant(make, db, runtime)


def assert_envelope(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert isinstance(body["error"], str) and body["error"]
    if code is not None:
        assert body.get("code") == code, body
    return body
