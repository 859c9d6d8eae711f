"""A SAML response one server process accepted is refused by another: two `kindling serve`
processes behind one PUBLIC_URL, sharing PostgreSQL and Redis (docs/decisions.md §2). The
RelayState is spent in the database; behind it, so is the assertion, until its NotOnOrAfter."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import secrets

import pytest
import requests
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from kindling.accounts.models import SsoState
from kindling.platform.base import utcnow
from kindling.platform.database import upgrade
from tests.helpers import assert_envelope, call, sign_up
from tests.helpers.sso import domain
from tests.servers.saml_idp import IdentityProvider

pytestmark = pytest.mark.live
PUBLIC_URL = "https://kindling.test"


def _state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()  # how sso_states keys a state


def _acs(server, saml_response: str, relay_state: str) -> requests.Response:
    body = {"SAMLResponse": base64.b64encode(saml_response.encode()).decode(), "RelayState": relay_state}
    return requests.post(f"{server.url}/api/auth/saml/acs", data=body, allow_redirects=False, timeout=10)


def _assert_replay_refused(response: requests.Response, reason: str) -> None:
    body = assert_envelope(response, 400, "saml_response_invalid")
    assert body["details"] == {"reason": reason}
    assert "set-cookie" not in response.headers


def test_a_response_accepted_by_one_process_is_refused_by_the_other(
    settings, fresh_database_url, live_server, dns_server
):
    if settings.embedded or not settings.redis_url:
        pytest.skip("several server processes need PostgreSQL and Redis")
    upgrade(fresh_database_url)
    env = {
        "DATABASE_URL": fresh_database_url,
        "PUBLIC_URL": PUBLIC_URL,  # one service provider, as behind a load balancer
        "RATE_LIMIT_MULTIPLIER": "100",
        "SECRET_KEY": "s" * 40,
        "DNS_NAMESERVERS": f"127.0.0.1:{dns_server.port}",
    }
    first, second = live_server(**env), live_server(**env)
    admin = sign_up(first.url)
    name, idp = domain(), IdentityProvider()
    sso = {"protocol": "saml", "idpMetadataXml": idp.metadata(), "emailDomains": [name], "jitProvisioning": True}
    claim = call(first, "PUT", "/api/organization/sso", admin.token, json=sso).json()["data"]["emailDomains"][0]
    dns_server.publish(claim["record"]["name"], claim["record"]["value"])
    call(second, "POST", f"/api/organization/sso/domains/{name}/verify", admin.token)
    organization = call(first, "GET", "/api/auth/session", admin.token).json()["data"]["organization"]
    sp_metadata = requests.get(f"{second.url}/api/auth/saml/{organization['slug']}/metadata", timeout=10).text
    started = requests.get(
        f"{first.url}/api/auth/sso/start",
        params={"organization": organization["slug"], "returnTo": "/home"},
        allow_redirects=False,
        timeout=10,
    )
    assert started.status_code == 302, started.text
    xml, relay_state = idp.respond(sp_metadata, started.headers["Location"], f"sam@{name}")
    engine = create_engine(fresh_database_url)
    with Session(engine) as db:
        pending = db.get(SsoState, _state_hash(relay_state))
        assert pending is not None
        request_id = pending.nonce

    accepted = _acs(first, xml, relay_state)
    assert accepted.status_code == 303, accepted.text
    assert accepted.headers["location"] == "/home" and "kindling.session_token" in accepted.headers["set-cookie"]
    _assert_replay_refused(_acs(second, xml, relay_state), "relay_state")

    # Were the RelayState good again (here a second one for the same request, written into the
    # database, which no browser can make), the other process still refuses the spent assertion.
    other_state = secrets.token_urlsafe(32)
    with Session(engine) as db, db.begin():
        db.add(
            SsoState(
                state_hash=_state_hash(other_state),
                organization_id=organization["id"],
                nonce=request_id,
                code_verifier="",
                return_to="/home",
                expires_at=utcnow() + dt.timedelta(minutes=5),
            )
        )
    _assert_replay_refused(_acs(second, xml, other_state), "replayed")
    with Session(engine) as db:
        assert db.scalar(select(SsoState).where(SsoState.state_hash == _state_hash(other_state))) is None
    engine.dispose()
