"""A person's copy of their data, and its erasure without breaking the evidence chain (docs/decisions.md §15)."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy import inspect, select, text

from kindling.accounts.models import User
from kindling.accounts.scim.models import ScimUser
from kindling.donations import giving
from kindling.donations import service as donations
from kindling.donations.models import GivingRequest
from kindling.evidence.chain import decode_public_key, verify_bundle
from kindling.platform.base import utcnow
from kindling.platform.cache import MemoryCache
from kindling.platform.database import make_engine, make_session_factory, upgrade
from kindling.privacy import personal_data
from kindling.wellbeing import retention
from kindling.wellbeing.models import WellbeingResponse
from tests import factories
from tests.factories import PASSWORD
from tests.factories import donations as payments
from tests.factories.principals import principal
from tests.helpers import assert_envelope, call, scim, sign_up


def test_a_person_exports_everything_held_about_them_and_never_a_token(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    sent = make.act(member, admin)
    received = make.act(admin, member)
    make.response(member, mood=2, comment="A private thought about my week")
    body = client.get("/api/me/export", headers=member.headers)
    assert body.status_code == 200
    data = body.json()["data"]
    assert data["account"]["email"] == member.user.email and data["account"]["name"] == member.user.name
    assert [act["id"] for act in data["actsSent"]] == [sent.id]
    assert [act["id"] for act in data["actsReceived"]] == [received.id]
    assert [answer["comment"] for answer in data["wellbeingResponses"]] == ["A private thought about my week"]
    assert len(data["sessions"]) == 1 and set(data["sessions"][0]) == {"id", "createdAt", "expiresAt", "revokedAt"}
    assert member.token not in body.text
    # The admin answering an access request gets the same document.
    by_admin = client.get(f"/api/organization/members/{member.user.id}/export", headers=admin.headers).json()["data"]
    assert {key: value for key, value in by_admin.items() if key != "exportedAt"} == {
        key: value for key, value in data.items() if key != "exportedAt"
    }


def test_another_persons_export_is_403_and_another_organizations_is_404(client, make):
    admin, stranger = make.admin(), make.admin()
    member, colleague = make.member(admin), make.member(admin)
    assert_envelope(client.get(f"/api/organization/members/{colleague.user.id}/export", headers=member.headers), 403)
    assert_envelope(client.get(f"/api/organization/members/{stranger.user.id}/export", headers=admin.headers), 404)
    assert_envelope(client.get(f"/api/organization/members/{uuid.uuid4()}/export", headers=admin.headers), 404)
    assert_envelope(client.post(f"/api/organization/members/{colleague.user.id}/erase", headers=member.headers), 403)
    assert_envelope(client.post(f"/api/organization/members/{stranger.user.id}/erase", headers=admin.headers), 404)


def test_exports_are_rate_limited_like_bulk_operations(client, make, rate_window):
    member = make.member(make.admin())
    answers = [client.get("/api/me/export", headers=member.headers).status_code for _ in range(11)]
    assert answers == [200] * 10 + [429]


def test_the_last_admin_cannot_be_erased(client, make):
    admin = make.admin()
    assert_envelope(
        client.post(f"/api/organization/members/{admin.user.id}/erase", headers=admin.headers), 409, "last_admin"
    )
    assert client.get("/api/auth/session", headers=admin.headers).json()["data"]["user"]["name"] == admin.user.name


def test_erasure_keeps_ids_counts_and_the_chain(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    make.act(member, admin)
    # Answers of the last closed week, which the first read publishes.
    last_week = utcnow() - dt.timedelta(weeks=1)
    for person in [make.member(admin) for _ in range(4)]:
        make.response(person, mood=4, created_at=last_week)
    make.response(member, mood=1, comment="Erase me", created_at=last_week)
    stats_before = client.get("/api/kindness/stats", headers=admin.headers).json()
    figures_before = client.get("/api/wellbeing", params={"scope": "organization"}, headers=admin.headers).json()
    assert figures_before["suppressed"] is False
    bundle = client.post("/api/evidence/export", json={}, headers=admin.headers).json()

    erased = client.post(f"/api/organization/members/{member.user.id}/erase", headers=admin.headers)
    assert erased.status_code == 200
    assert erased.json()["data"] | {"createdAt": None} == {
        "id": member.user.id,
        "email": f"erased-{member.user.id}@invalid",
        "name": "Erased person",
        "accountType": "member",
        "organizationId": admin.organization_id,
        "role": "member",
        "auditor": False,
        "createdAt": None,
        "managerId": None,
        "department": None,
        "employeeNumber": None,
        "groups": [],
    }
    assert client.get("/api/auth/session", headers=member.headers).status_code == 401
    assert client.post("/api/auth/sign-in", json={"email": member.user.email, "password": PASSWORD}).status_code == 401
    # The acts still count, the published figures stay, the answers are gone.
    assert client.get("/api/kindness/stats", headers=admin.headers).json() == stats_before
    assert (
        client.get("/api/wellbeing", params={"scope": "organization"}, headers=admin.headers).json() == figures_before
    )
    assert db.scalars(select(WellbeingResponse).where(WellbeingResponse.user_id == member.user.id)).all() == []
    # The chain verifies, with the erasure in it, and so does the bundle exported before.
    verified = client.get("/api/evidence/verify", headers=admin.headers).json()
    assert verified["intact"] is True
    events = client.get("/api/evidence", headers=admin.headers).json()["data"]
    assert [(e["type"], e["subject"], e["actorId"], e["data"]) for e in events if e["type"] == "member.erased"] == [
        ("member.erased", {"kind": "member", "id": member.user.id}, admin.user.id, {})
    ]
    keys = [decode_public_key(key["publicKey"]) for key in client.get("/api/evidence/keys").json()["data"]]
    assert verify_bundle(bundle, keys).intact
    # Irreversible, and only once.
    assert_envelope(client.post(f"/api/organization/members/{member.user.id}/erase", headers=admin.headers), 404)


@pytest.mark.live
def test_after_erasure_the_name_and_email_are_nowhere(live_server, fresh_database_url):
    """Every response an admin can reach, and the database itself: SQLite's file and write-ahead
    log byte for byte, or every text column of every table on PostgreSQL."""
    upgrade(fresh_database_url)
    server = live_server(DATABASE_URL=fresh_database_url)
    marker = uuid.uuid4().hex[:12]
    name, email = f"Zephyrine Quux{marker}", f"zq.{marker}@example.test"
    secrets = (
        name,
        email,
        f"Quux{marker}",
        f"zq.{marker}",
        f"Description{marker}",
        f"Comment{marker}",
        f"Note{marker}",
    )
    admin = sign_up(server.url, name="Admin")
    join = call(server, "GET", "/api/auth/session", admin.token).json()["data"]["organization"]["joinCode"]
    person = sign_up(server.url, email=email, name=name, joinCode=join)
    act = {
        "description": f"Description{marker} for {name}",
        "category": "community",
        "verificationLevel": 1,
        "recipientId": "outsider",
    }
    call(server, "POST", "/api/kindness", person.token, json=act)
    call(
        server,
        "POST",
        "/api/wellbeing",
        person.token,
        json={"mood": 3, "stress": 3, "comment": f"Comment{marker} by {email}"},
    )
    donation = {"amount": 500, "currency": "USD", "recipient": {"name": "Red Cross"}, "note": f"Note{marker}"}
    call(server, "POST", "/api/donations", person.token, json=donation)
    assert marker in call(server, "GET", f"/api/organization/members/{person.id}/export", admin.token).text

    reachable = [
        ("GET", "/api/auth/session"),
        ("GET", "/api/organization/members"),
        ("GET", "/api/kindness"),
        ("GET", "/api/kindness/stats"),
        ("GET", "/api/donations"),
        ("GET", "/api/volunteer"),
        ("GET", "/api/evidence"),
        ("GET", "/api/evidence/verify"),
        ("GET", f"/api/organization/members/{person.id}/export"),
        ("GET", "/api/wellbeing?scope=organization"),
        ("GET", "/api/compliance/gri"),
        ("POST", "/api/evidence/export"),
    ]
    # Read once before, so that whatever the server caches is cached.
    for method, path in reachable:
        call(server, method, path, admin.token, **({"json": {}} if method == "POST" else {}))
    call(server, "POST", f"/api/organization/members/{person.id}/erase", admin.token)
    for method, path in reachable:
        text_sent = call(server, method, path, admin.token, **({"json": {}} if method == "POST" else {})).text
        assert not [secret for secret in secrets if secret in text_sent], path

    # Read while the server still holds the database open (closing the last connection removes the log).
    engine = make_engine(fresh_database_url)
    try:
        if engine.dialect.name == "sqlite":
            database = pathlib.Path(engine.url.database)
            files = [database, database.with_name(database.name + "-wal")]
            assert files[1].exists()
            for path in files:
                content = path.read_bytes()
                assert not [secret for secret in secrets if secret.encode() in content], path.name
        else:
            found = []
            with engine.connect() as connection:
                inspector = inspect(connection)
                for table in inspector.get_table_names():
                    for column in inspector.get_columns(table):
                        if not isinstance(column["type"], sa.String | sa.JSON):
                            continue
                        for secret in secrets:
                            hit = connection.execute(
                                text(
                                    f'SELECT 1 FROM "{table}" WHERE CAST("{column["name"]}" AS TEXT) LIKE :pattern LIMIT 1'
                                ),
                                {"pattern": f"%{secret}%"},
                            ).first()
                            if hit:
                                found.append((table, column["name"]))
            assert found == []
    finally:
        engine.dispose()


@pytest.mark.live
def test_the_worker_deletes_comments_past_their_retention(settings, fresh_database_url):
    upgrade(fresh_database_url)
    engine = make_engine(fresh_database_url)
    try:
        with make_session_factory(engine)() as session:
            make = factories.Factories(session, MemoryCache())
            member = make.member(make.admin())
            now = utcnow()
            old = make.response(member, comment="Three days ago", created_at=now - dt.timedelta(days=3)).id
            recent = make.response(member, comment="Twelve hours ago", created_at=now - dt.timedelta(hours=12)).id
            session.commit()
        env = {
            **os.environ,
            "DATABASE_URL": fresh_database_url,
            "WELLBEING_COMMENT_RETENTION_DAYS": "1",
            "ENVIRONMENT": "test",
        }
        worker = subprocess.run(
            [sys.executable, "-m", "kindling.cli", "worker", "--once"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert worker.returncode == 0, worker.stderr
        with make_session_factory(engine)() as session:
            comments = dict(session.execute(select(WellbeingResponse.id, WellbeingResponse.comment)).all())
        assert comments == {old: None, recent: "Twelve hours ago"}
    finally:
        engine.dispose()


def test_old_comments_are_deleted_and_the_answers_stay(db, make):
    member = make.member(make.admin())
    now = utcnow()
    old = make.response(member, comment="Last year's worry", created_at=now - dt.timedelta(days=400))
    recent = make.response(member, comment="This week's news", created_at=now - dt.timedelta(days=2))
    assert retention.delete_old_comments(db, days=365, now=now) >= 1
    db.refresh(old)
    db.refresh(recent)
    assert (old.comment, old.mood) == (None, 4) and recent.comment == "This week's news"
    assert json.dumps(personal_data.export(db, user_id=member.user.id), default=str).count("worry") == 0


def test_giving_requests_are_exported_and_their_reasons_and_notes_erased(client, make, db):
    admin = make.admin()
    member, second_admin = make.member(admin), make.member(admin)
    client.patch(f"/api/organization/members/{second_admin.user.id}", json={"role": "admin"}, headers=admin.headers)
    make.match_program(admin, approval="review")
    donation = make.donation(member)
    event = payments.payment_event("payment_intent.succeeded", donation)
    donations.apply_payment_event(
        db, event_id=event["id"], event_type=event["type"], payment=event["data"]["object"], donation=donation
    )
    (request,) = db.scalars(select(GivingRequest).where(GivingRequest.user_id == member.user.id)).all()
    giving.decide(
        db,
        caller=principal(admin),
        request_id=request.id,
        decision="decline",
        reason="Receipt of Mx Quux missing",
        note="Quux asked twice",
    )
    exported = client.get("/api/me/export", headers=member.headers).json()["data"]["givingRequests"]
    assert [(r["id"], r["status"], r["decisionReason"], r["decisionNote"]) for r in exported] == [
        (request.id, "declined", "Receipt of Mx Quux missing", "Quux asked twice")
    ]
    assert (
        client.post(f"/api/organization/members/{member.user.id}/erase", headers=second_admin.headers).status_code
        == 200
    )
    db.refresh(request)
    assert (request.status, request.amount, request.decision_reason, request.decision_note) == (
        "declined",
        donation.amount,
        None,
        None,
    )
    # The admin who wrote them is erased too: what they decided stays, their words go.
    assert (
        client.post(f"/api/organization/members/{admin.user.id}/erase", headers=second_admin.headers).status_code == 200
    )


def test_a_person_the_directory_provisioned_is_exported_and_erased_from_it(client, make, db):
    admin = make.admin()
    headers = make.scim_token(admin)
    marker = uuid.uuid4().hex[:10]
    body = scim.user(
        f"ada.{marker}@example.test",
        name={"givenName": "Ada", "familyName": f"Quux{marker}"},
        emails=[{"value": f"ada.{marker}@example.test", "type": "work", "primary": True}],
        externalId=f"ext-{marker}",
    )
    created = client.post("/scim/v2/Users", json=body, headers=headers)
    assert created.status_code == 201, created.text
    person_id = created.json()["id"]
    group = client.post(
        "/scim/v2/Groups",
        json={"schemas": [scim.GROUP], "displayName": f"Team {marker}", "members": [{"value": person_id}]},
        headers=headers,
    )
    assert group.status_code == 201, group.text

    exported = client.get(f"/api/organization/members/{person_id}/export", headers=admin.headers).json()["data"]
    assert exported["directory"]["userName"] == f"ada.{marker}@example.test"
    assert [g["displayName"] for g in exported["groups"]] == [f"Team {marker}"]

    assert client.post(f"/api/organization/members/{person_id}/erase", headers=admin.headers).status_code == 200
    after = client.get(f"/api/organization/members/{person_id}/export", headers=admin.headers)
    assert (
        marker not in after.text and after.json()["data"]["directory"] is None and after.json()["data"]["groups"] == []
    )
    assert db.scalars(select(ScimUser).where(ScimUser.user_id == person_id)).all() == []
    # The directory no longer knows the person; the group stays, without them.
    assert client.get(f"/scim/v2/Users/{person_id}", headers=headers).status_code == 404
    events = [
        e["type"]
        for e in client.get("/api/evidence", params={"subjectId": person_id}, headers=admin.headers).json()["data"]
    ]
    assert events[-2:] == ["member.deactivated", "member.erased"]


def test_erasure_clears_the_single_sign_on_link(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    user = db.get(User, member.user.id)
    user.sso_issuer, user.sso_subject = "https://idp.example.test", f"sub-{uuid.uuid4().hex}"
    db.flush()
    assert client.post(f"/api/organization/members/{member.user.id}/erase", headers=admin.headers).status_code == 200
    db.expire_all()
    erased = db.get(User, member.user.id)
    assert (erased.sso_issuer, erased.sso_subject) == (None, None)
