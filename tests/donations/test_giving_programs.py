"""Giving programs (docs/decisions.md §14): admins set them, every member reads them, each change is a version."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from kindling.donations.models import GivingProgram
from kindling.evidence.models import EvidenceEvent
from tests.helpers import assert_envelope

MATCH = {
    "name": "Gift match",
    "kind": "donation_match",
    "ratioPercent": 100,
    "minimumGift": 500,
    "perPersonCap": 50_000,
}
GRANT = {
    "name": "Dollars for doers",
    "kind": "volunteer_grant",
    "ratePerHour": 1500,
    "minimumHours": 4,
    "perPersonCap": 50_000,
}


def program_events(db, organization_id: str) -> list[dict]:
    rows = db.execute(
        select(EvidenceEvent.subject_id, EvidenceEvent.data)
        .where(EvidenceEvent.organization_id == organization_id, EvidenceEvent.type == "giving.program_set")
        .order_by(EvidenceEvent.seq)
    )
    return [{"id": subject_id, **data} for subject_id, data in rows]


def test_admin_creates_a_matching_program_and_members_read_it(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    response = client.post(
        "/api/giving/programs",
        json={**MATCH, "budget": 1_000_000, "eligibleRoles": ["member"], "eligibleDepartments": ["Sales ", "Sales"]},
        headers=admin.headers,
    )
    assert response.status_code == 201, response.text
    program = response.json()["data"]
    assert program["programVersion"] == 1 and program["active"] is True and program["approval"] == "review"
    assert program["periodStartMonth"] == 1 and program["maximumMatchPerGift"] is None
    assert program["eligibleRoles"] == ["member"] and program["eligibleDepartments"] == ["Sales"]
    assert "ratePerHour" not in program
    assert client.get(f"/api/giving/programs/{program['id']}", headers=member.headers).json()["data"] == program
    listed = client.get("/api/giving/programs", headers=member.headers).json()
    assert [p["id"] for p in listed["data"]] == [program["id"]] and listed["nextCursor"] is None
    [event] = program_events(db, admin.organization_id)
    assert event == {
        "id": program["id"],
        "version": 1,
        "kind": "donation_match",
        "active": True,
        "approval": "review",
        "periodStartMonth": 1,
        "perPersonCap": 50_000,
        "budget": 1_000_000,
        "ratioPercent": 100,
        "minimumGift": 500,
        "maximumMatchPerGift": None,
        "currency": "USD",
    }


def test_a_change_makes_a_new_version_and_no_change_makes_none(client, make, db):
    admin = make.admin()
    program = client.post("/api/giving/programs", json=GRANT, headers=admin.headers).json()["data"]
    url = f"/api/giving/programs/{program['id']}"
    changed = client.patch(url, json={"ratePerHour": 2000, "budget": None}, headers=admin.headers)
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["programVersion"] == 2 and changed.json()["data"]["ratePerHour"] == 2000
    same = client.patch(url, json={"ratePerHour": 2000}, headers=admin.headers).json()["data"]
    assert same["programVersion"] == 2
    assert [e["version"] for e in program_events(db, admin.organization_id)] == [1, 2]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**MATCH, "ratioPercent": 0}, "ratioPercent"),
        ({**MATCH, "ratioPercent": 501}, "ratioPercent"),
        ({**MATCH, "perPersonCap": -1}, "perPersonCap"),
        ({**MATCH, "perPersonCap": 10**15}, "perPersonCap"),
        ({**MATCH, "budget": 10**12}, "budget"),
        ({**MATCH, "minimumGift": 1.5}, "minimumGift"),
        ({**MATCH, "ratePerHour": 1000}, "ratePerHour"),  # a rule of the other kind
        ({**GRANT, "ratioPercent": 100}, "ratioPercent"),
        ({key: value for key, value in MATCH.items() if key != "ratioPercent"}, "ratioPercent"),
        ({key: value for key, value in GRANT.items() if key != "ratePerHour"}, "ratePerHour"),
        ({**GRANT, "minimumHours": -1}, "minimumHours"),
        ({**MATCH, "periodStartMonth": 13}, "periodStartMonth"),
        ({**MATCH, "eligibleRoles": ["owner"]}, "eligibleRoles.0"),
        ({**MATCH, "kind": "payroll_match"}, "kind"),
    ],
)
def test_bad_programs_are_refused_and_change_nothing(client, make, db, body, field):
    admin = make.admin()
    body = assert_envelope(client.post("/api/giving/programs", json=body, headers=admin.headers), 400)
    assert body["details"]["errors"][0]["field"] == field
    assert (
        db.scalar(
            select(func.count())
            .select_from(GivingProgram)
            .where(GivingProgram.organization_id == admin.organization_id)
        )
        == 0
    )
    assert program_events(db, admin.organization_id) == []


def test_patch_refuses_the_other_kinds_rules_and_kind_itself(client, make, db):
    admin = make.admin()
    program = client.post("/api/giving/programs", json=MATCH, headers=admin.headers).json()["data"]
    url = f"/api/giving/programs/{program['id']}"
    assert_envelope(client.patch(url, json={"ratePerHour": 100}, headers=admin.headers), 400)
    assert_envelope(client.patch(url, json={"kind": "volunteer_grant"}, headers=admin.headers), 400)
    assert_envelope(client.patch(url, json={"ratioPercent": None}, headers=admin.headers), 400)
    assert_envelope(client.patch(url, json={}, headers=admin.headers), 400)
    assert client.get(url, headers=admin.headers).json()["data"] == program


def test_only_admins_write_and_other_organizations_see_nothing(client, make):
    admin = make.admin()
    program = client.post("/api/giving/programs", json=MATCH, headers=admin.headers).json()["data"]
    url = f"/api/giving/programs/{program['id']}"
    manager = make.manager(admin)
    assert_envelope(client.post("/api/giving/programs", json=MATCH, headers=manager.headers), 403)
    assert_envelope(client.patch(url, json={"active": False}, headers=manager.headers), 403)
    stranger = make.admin()
    assert_envelope(client.get(url, headers=stranger.headers), 404)
    assert_envelope(client.patch(url, json={"active": False}, headers=stranger.headers), 404)
    assert client.get("/api/giving/programs", headers=stranger.headers).json()["data"] == []
    assert_envelope(client.get("/api/giving/programs", headers=make.consultant().headers), 403)
    assert client.get(url, headers=admin.headers).json()["data"]["active"] is True
