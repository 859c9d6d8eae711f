"""Idempotency-Key: a retried write answers what its first attempt answered, and does nothing again."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid

import pytest
import yaml
from sqlalchemy import func, select

from kindling.idempotency import responses
from kindling.idempotency.models import IdempotentResponse
from kindling.kindness.models import KindnessAct
from kindling.platform.base import utcnow
from kindling.web.app import SPEC

ACT = {"description": "Covered a shift", "category": "peer_recognition", "verificationLevel": 1, "recipientId": "x-1"}
# Writes that refuse a key, and why: each shows a secret once, or has no caller to own a key.
UNKEYED = {
    "sign_up": "no caller; may show a session token once",
    "sign_in": "no caller; may show a session token once",
    "saml_acs": "no caller; the IdP posts it once, and its RelayState and assertion are single-use",
    "create_token": "shows the API token once",
    "create_scim_token": "shows the SCIM token once",
    "create_endpoint": "shows the endpoint's signing secret once",
    "rotate_secret": "shows the endpoint's new signing secret once",
    "lookup_attestation": "no caller: the attester holds a token from a mail",
    "answer_attestation": "no caller: the attester holds a token from a mail",
}


def acts(db) -> int:
    return db.scalar(select(func.count()).select_from(KindnessAct))


def keyed(account, key: str | None = None) -> dict:
    return {**account.headers, "Idempotency-Key": key or str(uuid.uuid4())}


def stored(db, account, key: str) -> IdempotentResponse:
    db.expire_all()
    return db.get_one(IdempotentResponse, (account.user.id, key))


def test_every_write_under_api_takes_a_key_unless_it_is_listed_with_its_reason():
    spec = yaml.safe_load(SPEC.read_text())
    takes, refuses = set(), set()
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in ("post", "put", "patch") and path.startswith("/api/"):
                declared = {"$ref": "#/components/parameters/IdempotencyKey"} in operation.get("parameters", [])
                (takes if declared else refuses).add(operation["operationId"])
    assert refuses == set(UNKEYED)
    assert takes, "no operation takes a key"


def test_a_retry_answers_the_first_response_and_records_nothing_again(client, make, db):
    member = make.member(make.admin())
    headers = keyed(member)
    first = client.post("/api/kindness", json=ACT, headers=headers)
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    again = client.post("/api/kindness", json=ACT, headers=headers)
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert acts(db) == 1


def test_the_same_key_with_another_body_or_operation_is_refused(client, make, db):
    member = make.member(make.admin())
    headers = keyed(member)
    assert client.post("/api/kindness", json=ACT, headers=headers).status_code == 201
    other = client.post("/api/kindness", json={**ACT, "description": "Another act"}, headers=headers)
    assert other.status_code == 422
    assert other.json()["code"] == "idempotency_key_reused"
    elsewhere = client.post("/api/wellbeing", json={"mood": 4, "stress": 2}, headers=headers)
    assert elsewhere.status_code == 422
    assert acts(db) == 1


def test_keys_are_each_callers_own(client, make, db):
    admin = make.admin()
    one, two = make.member(admin), make.member(admin)
    key = str(uuid.uuid4())
    assert client.post("/api/kindness", json=ACT, headers=keyed(one, key)).status_code == 201
    second = client.post("/api/kindness", json=ACT, headers=keyed(two, key))
    assert second.status_code == 201
    assert "Idempotent-Replayed" not in second.headers
    assert acts(db) == 2


def test_a_validation_refusal_is_not_stored(client, make, db):
    member = make.member(make.admin())
    headers = keyed(member)
    refused = client.post("/api/kindness", json={**ACT, "verificationLevel": 9}, headers=headers)
    assert refused.status_code == 400
    fixed = client.post("/api/kindness", json=ACT, headers=headers)
    assert fixed.status_code == 201
    assert "Idempotent-Replayed" not in fixed.headers


def test_a_refusal_by_the_operation_is_stored(client, make):
    member = make.member(make.admin())
    headers = keyed(member)
    unknown = f"/api/kindness/{uuid.uuid4()}/verifications"
    first = client.post(unknown, json={"level": 2, "decision": "approve"}, headers=headers)
    assert first.status_code == 404
    again = client.post(unknown, json={"level": 2, "decision": "approve"}, headers=headers)
    assert again.status_code == 404
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()


@pytest.mark.parametrize("key", ["", " leading-space", "a" * 256, "tab\there", "é".encode()])
def test_a_malformed_key_is_refused_by_validation(client, make, db, key):
    member = make.member(make.admin())
    response = client.post("/api/kindness", json=ACT, headers={**member.headers, "Idempotency-Key": key})
    assert response.status_code == 400
    assert acts(db) == 0


def test_operations_that_take_no_key_refuse_one(client, make):
    admin = make.admin()
    response = client.post("/api/auth/tokens", json={"name": "ci", "expiresInDays": 30}, headers=keyed(admin))
    assert response.status_code == 400
    assert response.json()["code"] == "idempotency_not_supported"
    sign_in = client.post(
        "/api/auth/sign-in", json={"email": admin.user.email, "password": "x" * 12}, headers={"Idempotency-Key": "k"}
    )
    assert sign_in.status_code == 400
    assert sign_in.json()["code"] == "idempotency_not_supported"


def test_the_effect_and_the_stored_response_commit_together_or_not_at_all(client, make, db, monkeypatch):
    member = make.member(make.admin())
    headers = keyed(member)

    def crash(*_args, **_kwargs):
        raise RuntimeError("the process died before the response was stored")

    with monkeypatch.context() as patch:
        patch.setattr(responses, "keep", crash)
        assert client.post("/api/kindness", json=ACT, headers=headers).status_code == 500
    assert acts(db) == 0
    retry = client.post("/api/kindness", json=ACT, headers=headers)
    assert retry.status_code == 201
    assert "Idempotent-Replayed" not in retry.headers
    assert acts(db) == 1


def test_the_key_is_stored_with_its_request_and_its_response(client, make, db):
    member = make.member(make.admin())
    key = str(uuid.uuid4())
    body = json.dumps(ACT).encode()
    first = client.post(
        "/api/kindness", content=body, headers={**keyed(member, key), "Content-Type": "application/json"}
    )
    assert first.status_code == 201
    row = stored(db, member, key)
    assert (row.operation, row.body_sha256) == ("POST /api/kindness", hashlib.sha256(body).hexdigest())
    assert (row.status, row.body) == (201, first.content)
    assert row.headers == {"Content-Type": first.headers["content-type"]}
    assert abs(utcnow() - row.created_at) < dt.timedelta(minutes=1)
    # Stored as SQLAlchemy stores a time (on SQLite, text), so that the worker's and the expiry's
    # comparisons of times find it.
    assert db.scalar(select(IdempotentResponse.key).where(IdempotentResponse.created_at == row.created_at)) == key


def test_a_key_is_new_again_once_its_day_has_passed(client, make, db):
    member = make.member(make.admin())
    key = str(uuid.uuid4())
    assert client.post("/api/kindness", json=ACT, headers=keyed(member, key)).status_code == 201
    stored(db, member, key).created_at -= responses.KEPT_FOR
    db.flush()
    again = client.post("/api/kindness", json={**ACT, "description": "Another act"}, headers=keyed(member, key))
    assert again.status_code == 201
    assert "Idempotent-Replayed" not in again.headers
    assert acts(db) == 2
    assert stored(db, member, key).body == again.content


def test_the_worker_forgets_the_responses_older_than_a_day(client, make, db):
    member = make.member(make.admin())
    old, new = str(uuid.uuid4()), str(uuid.uuid4())
    for key in (old, new):
        assert client.post("/api/kindness", json=ACT, headers=keyed(member, key)).status_code == 201
    stored(db, member, old).created_at = utcnow() - responses.KEPT_FOR - dt.timedelta(seconds=1)
    db.flush()
    responses.chore(db)
    kept = db.scalars(select(IdempotentResponse.key).where(IdempotentResponse.user_id == member.user.id)).all()
    assert kept == [new]


def test_a_request_whose_key_another_stored_meanwhile_rolls_its_effect_back(client, make, db, monkeypatch):
    member = make.member(make.admin())
    key = str(uuid.uuid4())
    other = responses.Answer(201, {"Content-Type": "application/json"}, b'{"data": "the other request"}')
    looked_up = responses.begin

    def answered_meanwhile(session, attempt, *, now):
        # Another request with the key stores its answer once this one has found the key new
        # (here in the same transaction, which the refusal then rolls back with the act).
        found = looked_up(session, attempt, now=now)
        assert responses.keep(session, attempt, other, now=now)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(responses, "begin", answered_meanwhile)
        raced = client.post("/api/kindness", json=ACT, headers=keyed(member, key))
    assert raced.status_code == 409
    assert raced.json()["code"] == "idempotency_key_in_use"
    assert raced.headers["Retry-After"] == "1"
    assert acts(db) == 0
