"""Each group of writes, retried with its key, answers the same and changes nothing again."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import select

from kindling.platform.base import utcnow
from kindling.schema import metadata

# Authentication writes these on its own schedule, not the operation.
NOT_COMPARED = {"sessions", "api_tokens"}


def everything(db) -> dict:
    return {
        table.name: sorted(map(repr, db.execute(select(table)).all()))
        for table in metadata.sorted_tables
        if table.name not in NOT_COMPARED
    }


def soon(hours: float) -> str:
    return (utcnow() + dt.timedelta(hours=hours)).isoformat()


def kindness(make):
    admin = make.admin()
    return (
        admin,
        "POST",
        "/api/kindness",
        {
            "description": "Fixed the build",
            "category": "peer_recognition",
            "verificationLevel": 2,
            "recipientId": "out-1",
        },
    )


def verification(make):
    admin = make.admin()
    act = make.act(make.member(admin), admin, verification_level=2)
    return admin, "POST", f"/api/kindness/{act.id}/verifications", {"level": 2, "decision": "confirm"}


def volunteering(make):
    admin = make.admin()
    body = {
        "title": "Park clean-up",
        "startsAt": soon(1),
        "endsAt": soon(3),
        "location": {"latitude": 51.5, "longitude": -0.1},
    }
    return admin, "POST", "/api/volunteer", body


def donations(make):
    member = make.member(make.admin())
    return member, "POST", "/api/donations", {"amount": 2500, "currency": "USD", "recipient": {"name": "Food bank"}}


def giving(make):
    admin = make.admin()
    return (
        admin,
        "POST",
        "/api/giving/programs",
        {"name": "Match", "kind": "donation_match", "perPersonCap": 100000, "ratioPercent": 100},
    )


def wellbeing(make):
    member = make.member(make.admin())
    return member, "POST", "/api/wellbeing", {"mood": 4, "stress": 2}


def organization(make):
    admin = make.admin()
    member = make.member(admin)
    return admin, "PATCH", f"/api/organization/members/{member.user.id}", {"role": "manager"}


def invitations(make):
    consultant, admin = make.consultant(), make.admin()
    return consultant, "POST", "/api/invitations/send", {"organizationId": admin.organization_id}


def compliance(make):
    admin = make.admin()
    return admin, "POST", "/api/compliance/export", {"framework": "gri", "format": "json"}


def evidence(make):
    admin = make.admin()
    make.act(make.member(admin))
    return admin, "POST", "/api/evidence/export", {}


def witnesses(make):
    return make.admin(), "PUT", "/api/evidence/witness-policy", {"quorum": 2}


def webhooks(make):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, "https://hooks.example.com/kindling")
    return consultant, "PATCH", f"/api/webhooks/endpoints/{endpoint.id}", {"description": "Our CRM"}


@pytest.mark.parametrize(
    "write",
    [
        kindness,
        verification,
        volunteering,
        donations,
        giving,
        wellbeing,
        organization,
        invitations,
        compliance,
        evidence,
        witnesses,
        webhooks,
    ],
)
def test_a_retry_of_each_group_answers_the_same_and_changes_nothing(client, make, db, write):
    account, method, path, body = write(make)
    headers = {**account.headers, "Idempotency-Key": str(uuid.uuid4())}
    first = client.request(method, path, json=body, headers=headers)
    assert first.status_code < 300, first.text
    db.expire_all()
    after_first = everything(db)
    again = client.request(method, path, json=body, headers=headers)
    assert again.status_code == first.status_code
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    assert again.headers["content-type"] == first.headers["content-type"]
    db.expire_all()
    assert everything(db) == after_first


def test_a_bulk_invitation_retried_with_another_boundary_is_the_same_request(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    csv = f"organizationId,message\n{admin.organization_id},Hello\n".encode()
    headers = {**consultant.headers, "Idempotency-Key": str(uuid.uuid4())}

    def upload(boundary: str, content: bytes = csv):
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="clients.csv"\r\n'
                f"Content-Type: text/csv\r\n\r\n"
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        content_type = f"multipart/form-data; boundary={boundary}"
        return client.post("/api/bulk/invite", content=body, headers={**headers, "Content-Type": content_type})

    first = upload("first-boundary")
    assert first.status_code == 200, first.text
    db.expire_all()
    after_first = everything(db)
    again = upload("another-boundary")
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    db.expire_all()
    assert everything(db) == after_first
    changed = upload("first-boundary", csv.replace(b"Hello", b"Hi"))
    assert changed.status_code == 422
    assert changed.json()["code"] == "idempotency_key_reused"
