"""POST /webhooks/auth: Svix-signed identity provider events (docs/decisions.md §7)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from kindling.accounts.events import MEMBER_DEACTIVATED
from kindling.accounts.models import Session, User
from kindling.evidence import log as evidence
from kindling.platform.inbound_events import InboundWebhookEvent
from tests.factories import Account, identity
from tests.helpers.webhooks import deliver_identity

URL = "/webhooks/auth"


pytestmark = pytest.mark.usefixtures("identity_secret")


def reload(db, account: Account) -> User:
    db.expire_all()
    return db.get(User, account.user.id)


def test_updated_links_by_verified_email_and_mirrors_the_profile(client, make, db):
    account = make.member(make.admin())
    event = identity.user_event(
        "user.updated", "user_2abc", email=account.user.email.upper(), first_name="Ada", last_name="Lovelace"
    )
    response = deliver_identity(client, event)
    assert response.status_code == 200 and response.json() == {"received": True, "outcome": "processed"}
    user = reload(db, account)
    assert user.external_id == "user_2abc"
    assert user.name == "Ada Lovelace"
    # Once linked, the provider id is what matches: a new primary email is mirrored.
    moved = identity.user_event(
        "user.updated", "user_2abc", email="ada@new.example.test", first_name="Ada", last_name="King"
    )
    assert deliver_identity(client, moved).json()["outcome"] == "processed"
    user = reload(db, account)
    assert (user.email, user.name) == ("ada@new.example.test", "Ada King")
    assert (
        client.get("/api/auth/session", headers=account.headers).json()["data"]["user"]["email"]
        == "ada@new.example.test"
    )


def test_unverified_email_does_not_link(client, make, db):
    account = make.member(make.admin())
    event = identity.user_event(
        "user.updated", "user_claims", email=account.user.email, verified=False, first_name="Mallory"
    )
    assert deliver_identity(client, event).json()["outcome"] == "ignored"
    user = reload(db, account)
    assert user.external_id is None and user.name != "Mallory"


def test_an_account_linked_to_someone_else_is_not_relinked(client, make, db):
    account = make.member(make.admin())
    account.user.external_id = "user_original"
    db.flush()
    event = identity.user_event("user.updated", "user_newcomer", email=account.user.email, first_name="Eve")
    assert deliver_identity(client, event).json()["outcome"] == "ignored"
    assert reload(db, account).external_id == "user_original"


def test_email_of_another_account_is_not_taken(client, make, db):
    admin = make.admin()
    account, other = make.member(admin), make.member(admin)
    account.user.external_id = "user_x"
    db.flush()
    event = identity.user_event("user.updated", "user_x", email=other.user.email, first_name="Renamed")
    assert deliver_identity(client, event).status_code == 200
    user = reload(db, account)
    assert user.name == "Renamed" and user.email != other.user.email


def test_deleted_deactivates_and_revokes_sessions(client, make, db):
    account = make.member(make.admin())
    account.user.external_id = "user_gone"
    db.flush()
    assert client.get("/api/auth/session", headers=account.headers).status_code == 200
    response = deliver_identity(client, identity.user_event("user.deleted", "user_gone"))
    assert response.json()["outcome"] == "processed"
    user = reload(db, account)
    assert user.active is False
    live = select(func.count()).select_from(Session).where(Session.user_id == user.id, Session.revoked_at.is_(None))
    assert db.scalar(live) == 0
    assert client.get("/api/auth/session", headers=account.headers).status_code == 401
    events = evidence.list_events(db, organization_id=account.organization_id, type=MEMBER_DEACTIVATED)[0]
    assert [(e["subject"]["id"], e["data"]) for e in events] == [(user.id, {"source": "identity_provider"})]


def test_deleted_for_an_unknown_user_is_ignored(client, make, db):
    account = make.member(make.admin())
    # A deleted event carries no email, so it never links by one.
    response = deliver_identity(client, identity.user_event("user.deleted", "user_unknown"))
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    assert reload(db, account).active is True


def test_replayed_delivery_is_processed_once(client, make, db):
    account = make.member(make.admin())
    account.user.external_id = "user_replay"
    db.flush()
    first = identity.user_event("user.updated", "user_replay", first_name="First")
    assert deliver_identity(client, first, delivery_id="msg_fixed").json()["outcome"] == "processed"
    assert (
        deliver_identity(client, identity.user_event("user.updated", "user_replay", first_name="Second")).status_code
        == 200
    )
    replay = deliver_identity(client, first, delivery_id="msg_fixed")
    assert replay.status_code == 200 and replay.json()["outcome"] == "duplicate"
    assert reload(db, account).name == "Second"
    stored = select(func.count()).select_from(InboundWebhookEvent).where(InboundWebhookEvent.event_id == "msg_fixed")
    assert db.scalar(stored) == 1


def test_bad_signatures_change_nothing(client, make, db):
    account = make.member(make.admin())
    account.user.external_id = "user_target"
    db.flush()
    payload, headers = identity.signed(identity.user_event("user.deleted", "user_target"))
    now = int(time.time())
    cases = [
        {**headers, "svix-signature": "v1,AAAA"},
        {**headers, "svix-signature": "garbage"},
        {**headers, "svix-signature": "v1,not base64!"},
        {**headers, "svix-id": "msg_other"},  # the id is signed too
        {**headers, "svix-timestamp": str(now + 10)},
        {**headers, "svix-timestamp": "yesterday"},
        identity.svix_headers(payload, secret="whsec_" + "c29tZW9uZSBlbHNl"),
        identity.svix_headers(payload, timestamp=now - 600),  # too old: the window is 5 minutes
        identity.svix_headers(payload, timestamp=now + 600),  # too new, however slow the run
        {k: v for k, v in headers.items() if k != "svix-signature"},
        {k: v for k, v in headers.items() if k != "svix-id"},
    ]
    for case in cases:
        response = client.post(URL, content=payload, headers=case)
        assert response.status_code == 400, case
    tampered = payload.replace(b"user_target", b"user_targex")
    assert client.post(URL, content=tampered, headers=headers).status_code == 400
    assert reload(db, account).active is True
    assert db.scalar(select(func.count()).select_from(InboundWebhookEvent)) == 0


def test_unhandled_event_types_are_ignored(client, db):
    response = deliver_identity(client, {"type": "session.created", "object": "event", "data": {"id": "sess_1"}})
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    assert db.scalar(select(func.count()).select_from(InboundWebhookEvent)) == 0


def test_not_configured_is_unavailable(client, settings_with):
    settings_with(auth_webhook_secret=None)
    response = deliver_identity(client, identity.user_event("user.deleted", "user_any"))
    assert response.status_code == 503 and response.json()["code"] == "webhook_not_configured"


def test_nul_characters_are_ignored_not_a_server_error(client, make, db):
    account = make.member(make.admin())
    event = identity.user_event("user.updated", "user_\x00", email=account.user.email, first_name="Nul\x00")
    response = deliver_identity(client, event)
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    assert reload(db, account).external_id is None
