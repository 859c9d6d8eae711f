"""Check-in codes shown at the venue, check-in evidence, organiser approval and the check-in list (docs/decisions.md §7)."""

from __future__ import annotations

import datetime as dt
import uuid
import xml.etree.ElementTree as ElementTree

import pyotp
import pytest

from kindling.platform.base import utcnow
from kindling.volunteering import check_in_codes
from kindling.volunteering import service as volunteering
from kindling.volunteering.models import CheckIn, VolunteerOpportunity
from tests.factories.principals import principal
from tests.factories.volunteering import CENTRE, north_of
from tests.helpers import assert_envelope
from tests.helpers.volunteering import check_in

SVG = "{http://www.w3.org/2000/svg}"
NOTE = {"note": "Seen at the venue"}


def coded_opportunity(make, organiser, *, require_code: bool = True) -> VolunteerOpportunity:
    opportunity = make.opportunity(organiser)
    opportunity.require_code = require_code
    make.db.flush()
    return opportunity


def totp(opportunity: VolunteerOpportunity) -> pyotp.TOTP:
    return pyotp.TOTP(opportunity.code_secret, interval=60)


def test_organisers_are_shown_the_current_code_and_its_qr_code(client, make, db):
    admin = make.admin()
    manager = make.manager(admin)
    opportunity = coded_opportunity(make, admin)
    for organiser in (admin, manager):
        before = utcnow()
        response = client.get(f"/api/volunteer/{opportunity.id}/check-in-code", headers=organiser.headers)
        after = utcnow()
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-store"
        data = response.json()["data"]
        assert data["code"] in {totp(opportunity).at(before), totp(opportunity).at(after)}
        expires_at = dt.datetime.fromisoformat(data["expiresAt"])
        assert expires_at.timestamp() % 60 == 0 and before < expires_at <= after + dt.timedelta(seconds=60)
        root = ElementTree.fromstring(data["qrSvg"])
        assert root.tag == f"{SVG}svg"
        assert root.find(f"{SVG}path") is not None and root.findtext(f"{SVG}title") == "Check-in code"
        # The secret itself is never shown.
        assert opportunity.code_secret not in response.text


def test_only_organisers_of_the_organization_see_codes(client, make, db):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin)
    path = f"/api/volunteer/{opportunity.id}/check-in-code"
    assert_envelope(client.get(path, headers=make.member(admin).headers), 403, "forbidden")
    assert_envelope(client.get(path, headers=make.consultant().headers), 403, "forbidden")
    assert_envelope(client.get(path), 401, "unauthenticated")
    other = make.admin()
    assert_envelope(client.get(path, headers=other.headers), 404, "not_found")
    assert_envelope(client.get(f"/api/volunteer/{uuid.uuid4()}/check-in-code", headers=admin.headers), 404, "not_found")
    assert client.get("/api/volunteer/not.an.id/check-in-code", headers=admin.headers).status_code == 400


def test_codes_of_the_current_and_previous_step_are_accepted_and_no_others():
    secret = check_in_codes.new_secret()
    generator = pyotp.TOTP(secret, interval=60)
    step_start = dt.datetime(2030, 6, 1, 9, 0, tzinfo=dt.UTC)
    for now in (step_start, step_start + dt.timedelta(seconds=59.9)):
        assert check_in_codes.accepts(secret, generator.at(now), now)
        assert check_in_codes.accepts(secret, generator.at(now - dt.timedelta(seconds=60)), now)
        assert not check_in_codes.accepts(secret, generator.at(now - dt.timedelta(seconds=120)), now)
        assert not check_in_codes.accepts(secret, generator.at(now + dt.timedelta(seconds=60)), now)
    shown = check_in_codes.show(secret, step_start + dt.timedelta(seconds=30))
    assert shown.code == generator.at(step_start) and shown.expires_at == step_start + dt.timedelta(seconds=60)


def test_a_check_in_is_verified_with_the_code_of_the_clock_it_is_made_at(make, db):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin)
    now = utcnow()
    generator = totp(opportunity)
    cases = {
        generator.at(now): True,
        generator.at(now - dt.timedelta(seconds=60)): True,
        generator.at(now - dt.timedelta(seconds=120)): False,
        generator.at(now + dt.timedelta(seconds=60)): False,
    }
    for code, verified in cases.items():
        record = volunteering.check_in(
            db,
            caller=principal(make.member(admin)),
            opportunity_id=opportunity.id,
            latitude=CENTRE[0],
            longitude=CENTRE[1],
            code=code,
            now=now,
        )
        assert (record.code_verified, record.verified) == (verified, verified), code


def test_a_required_code_is_part_of_the_evidence(client, make, db):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin)
    code = client.get(f"/api/volunteer/{opportunity.id}/check-in-code", headers=admin.headers).json()["data"]["code"]
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    far = north_of(CENTRE, 1000)
    cases = [
        ({"code": code}, CENTRE, True, {"location": True, "code": True, "approvedBy": None}),
        ({"code": wrong}, CENTRE, False, {"location": True, "code": False, "approvedBy": None}),
        ({}, CENTRE, False, {"location": True, "code": None, "approvedBy": None}),
        ({"code": code}, far, False, {"location": False, "code": True, "approvedBy": None}),
    ]
    for fields, point, verified, evidence in cases:
        response = check_in(client, make.member(admin), opportunity, point, **fields)
        assert response.status_code == 201, response.text  # a wrong code is kept, not refused
        assert (response.json()["verified"], response.json()["evidence"]) == (verified, evidence), fields
    counts = client.get(f"/api/volunteer/{opportunity.id}", headers=admin.headers).json()["data"]["checkIns"]
    assert counts == {"total": 4, "verified": 1}


def test_without_require_code_the_location_suffices(client, make, db):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin, require_code=False)
    plain = check_in(client, make.member(admin), opportunity).json()
    assert (plain["verified"], plain["evidence"]) == (True, {"location": True, "code": None, "approvedBy": None})
    code = client.get(f"/api/volunteer/{opportunity.id}/check-in-code", headers=admin.headers).json()["data"]["code"]
    wrong = check_in(client, make.member(admin), opportunity, code=f"{(int(code) + 1) % 1_000_000:06d}").json()
    assert (wrong["verified"], wrong["evidence"]["code"]) == (True, False)


def test_opportunities_say_whether_they_require_a_code(client, make):
    admin = make.admin()
    starts_at = utcnow() + dt.timedelta(days=1)
    body = {
        "title": "Door duty",
        "startsAt": starts_at.isoformat(),
        "endsAt": (starts_at + dt.timedelta(hours=2)).isoformat(),
        "location": {"latitude": 51.5, "longitude": -0.12},
        "requireCode": True,
    }
    created = client.post("/api/volunteer", json=body, headers=admin.headers).json()["data"]
    assert created["requireCode"] is True
    assert client.get(f"/api/volunteer/{created['id']}", headers=admin.headers).json()["data"]["requireCode"] is True
    del body["requireCode"]
    assert client.post("/api/volunteer", json=body, headers=admin.headers).json()["data"]["requireCode"] is False


@pytest.mark.parametrize(
    "fields",
    [{"code": "12345"}, {"code": "1234567"}, {"code": "abcdef"}, {"code": 123456}, {"code": None}],
    ids=["short", "long", "letters", "number", "null"],
)
def test_malformed_codes_are_400(client, make, db, fields):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin)
    assert_envelope(check_in(client, make.member(admin), opportunity, **fields), 400, "validation_error")


def test_organisers_approve_unverified_check_ins(client, make, db):
    admin = make.admin()
    manager = make.manager(admin)
    member = make.member(admin)
    opportunity = coded_opportunity(make, admin)
    record = check_in(client, member, opportunity, code="000000").json()
    if record["verified"]:  # one chance in a million that 000000 is the code of the moment
        record = check_in(client, make.member(admin), opportunity).json()
    path = f"/api/volunteer/{opportunity.id}/check-ins/{record['id']}/approve"
    assert_envelope(client.post(path, json=NOTE, headers=member.headers), 403, "forbidden")
    response = client.post(path, json={"note": "  Seen at the door  "}, headers=manager.headers)
    assert response.status_code == 200, response.text
    approved = response.json()["data"]
    assert approved["verified"] is True
    assert approved["evidence"] == {**record["evidence"], "approvedBy": manager.user.id}
    assert db.get(CheckIn, record["id"]).approval_note == "Seen at the door"
    assert_envelope(client.post(path, json=NOTE, headers=admin.headers), 409, "already_verified")
    counts = client.get(f"/api/volunteer/{opportunity.id}", headers=manager.headers).json()["data"]["checkIns"]
    assert counts["verified"] == 1


def test_nobody_approves_their_own_check_in(client, make, db):
    admin = make.admin()
    manager = make.manager(admin)
    opportunity = coded_opportunity(make, admin)
    own = check_in(client, manager, opportunity).json()
    path = f"/api/volunteer/{opportunity.id}/check-ins/{own['id']}/approve"
    assert_envelope(client.post(path, json=NOTE, headers=manager.headers), 403, "own_check_in")
    assert client.post(path, json=NOTE, headers=admin.headers).status_code == 200


def test_approval_of_other_records_answers_404(client, make, db):
    admin = make.admin()
    opportunity, elsewhere = coded_opportunity(make, admin), coded_opportunity(make, admin)
    record = check_in(client, make.member(admin), opportunity).json()
    other_admin = make.admin()
    foreign = coded_opportunity(make, other_admin)
    foreign_record = check_in(client, make.member(other_admin), foreign).json()
    for opportunity_id, check_in_id in [
        (elsewhere.id, record["id"]),  # not this opportunity's
        (foreign.id, foreign_record["id"]),  # another organization's
        (opportunity.id, foreign_record["id"]),
        (opportunity.id, str(uuid.uuid4())),
        (str(uuid.uuid4()), record["id"]),
    ]:
        response = client.post(
            f"/api/volunteer/{opportunity_id}/check-ins/{check_in_id}/approve", json=NOTE, headers=admin.headers
        )
        assert_envelope(response, 404, "not_found")
    assert_envelope(client.get(f"/api/volunteer/{foreign.id}/check-ins", headers=admin.headers), 404, "not_found")


@pytest.mark.parametrize(
    "body",
    [{}, {"note": ""}, {"note": "   "}, {"note": 5}, {"note": "x" * 501}, {"note": "ok", "reason": "ok"}, [], "note"],
    ids=["empty", "empty note", "blank note", "number", "too long", "unknown field", "array", "string"],
)
def test_malformed_approvals_are_400(client, make, db, body):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin)
    record = check_in(client, make.member(admin), opportunity).json()
    response = client.post(
        f"/api/volunteer/{opportunity.id}/check-ins/{record['id']}/approve", json=body, headers=admin.headers
    )
    assert_envelope(response, 400, "validation_error")


def test_organisers_list_check_ins_newest_first_a_page_at_a_time(client, make, db):
    admin = make.admin()
    opportunity = coded_opportunity(make, admin)
    start = utcnow() - dt.timedelta(minutes=5)
    ids = []
    for n in range(5):
        record = volunteering.check_in(
            db,
            caller=principal(make.member(admin)),
            opportunity_id=opportunity.id,
            latitude=CENTRE[0],
            longitude=CENTRE[1],
            now=start + dt.timedelta(seconds=n),
        )
        ids.append(record.id)
    listed, cursor = [], None
    manager = make.manager(admin)
    while True:
        query = "?limit=2" + (f"&cursor={cursor}" if cursor else "")
        response = client.get(f"/api/volunteer/{opportunity.id}/check-ins{query}", headers=manager.headers)
        assert response.status_code == 200
        listed += [c["id"] for c in response.json()["data"]]
        cursor = response.json()["nextCursor"]
        if cursor is None:
            break
    assert listed == ids[::-1]
    assert_envelope(
        client.get(f"/api/volunteer/{opportunity.id}/check-ins", headers=make.member(admin).headers), 403, "forbidden"
    )
    assert_envelope(
        client.get(f"/api/volunteer/{opportunity.id}/check-ins?cursor=eA", headers=admin.headers), 400, "invalid_cursor"
    )
