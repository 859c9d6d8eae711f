"""Nothing secret of single sign-on or of a token reaches a log line or an answer: a live server's
whole log, at DEBUG with its access log, read after sign-ins that succeed and fail."""

from __future__ import annotations

import urllib.parse
import uuid

import pytest
import requests

from kindling.platform.database import upgrade
from tests.helpers import call, sign_up
from tests.servers.openid_provider import CLIENT_ID, CLIENT_SECRET

pytestmark = pytest.mark.live


def _query(url: str) -> dict:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def test_no_secret_code_state_or_token_in_any_log_line_or_error(
    fresh_database_url, live_server, openid_provider, dns_server
):
    upgrade(fresh_database_url)
    server = live_server(
        DATABASE_URL=fresh_database_url,
        SECRET_KEY="s" * 40,
        WEBHOOK_ALLOW_PRIVATE_URLS="true",
        LOG_LEVEL="DEBUG",
        DNS_NAMESERVERS=f"127.0.0.1:{dns_server.port}",
    )
    domain = f"d{uuid.uuid4().hex[:8]}.test"
    admin = sign_up(server.url)
    secrets = {CLIENT_SECRET, admin.token}
    answers: list[requests.Response] = []
    body = {
        "issuer": openid_provider.url,
        "clientId": CLIENT_ID,
        "clientSecret": CLIENT_SECRET,
        "emailDomains": [domain],
        "jitProvisioning": True,
    }
    answers.append(call(server, "PUT", "/api/organization/sso", admin.token, json=body))
    record = answers[-1].json()["data"]["emailDomains"][0]["record"]
    dns_server.publish(record["name"], record["value"])
    answers.append(call(server, "POST", f"/api/organization/sso/domains/{domain}/verify", admin.token))
    answers.append(call(server, "GET", "/api/organization/sso", admin.token))
    token = call(server, "POST", "/api/auth/tokens", admin.token, json={"name": "ci", "expiresInDays": 1}).json()[
        "data"
    ]["token"]
    secrets.add(token)
    answers.append(call(server, "GET", "/api/auth/session", token))

    def begin(email: str) -> str:
        response = requests.get(
            f"{server.url}/api/auth/sso/start", params={"email": email}, allow_redirects=False, timeout=10
        )
        assert response.status_code == 302, response.text
        query = _query(response.headers["Location"])
        secrets.update({query["state"], query["nonce"]})
        return response.headers["Location"]

    def finish(callback: str, status: int) -> requests.Response:
        secrets.update(value for name, value in _query(callback).items() if name in ("code", "state"))
        response = requests.get(server.url + callback, allow_redirects=False, timeout=10)
        assert response.status_code == status, response.text
        answers.append(response)
        return response

    # A sign-in that works, then its replay.
    sub = openid_provider.person(email=f"ok@{domain}")
    callback = openid_provider.sign_in(begin(f"ok@{domain}"), sub)
    signed_in = finish(callback, 303)
    secrets.add(signed_in.cookies["kindling.session_token"])
    finish(callback, 400)
    # An ID token the server refuses, and a code the provider refuses.
    wrong_nonce = openid_provider.person(email=f"bad@{domain}", nonce="n" * 43)
    finish(openid_provider.sign_in(begin(f"bad@{domain}"), wrong_nonce), 401)
    forged = _query(begin(f"ok@{domain}"))["state"]
    finish(
        "/api/auth/sso/callback?"
        + urllib.parse.urlencode({"state": forged, "code": "forged-code-" + uuid.uuid4().hex}),
        401,
    )
    # A password sign-in that is refused, with the secret as the password.
    answers.append(
        requests.post(
            f"{server.url}/api/auth/sign-in", json={"email": admin.email, "password": CLIENT_SECRET}, timeout=10
        )
    )

    log = server.log()
    assert '"GET /api/auth/sso/callback?… HTTP/1.1" 303' in log  # the access log is there, without the query
    leaked = sorted(secret for secret in secrets if secret in log)
    assert not leaked, leaked
    for answer in answers:
        text = answer.text + str(
            {name: value for name, value in answer.headers.items() if name.lower() != "set-cookie"}
        )
        assert not [secret for secret in secrets if secret in text and secret != admin.token], (
            answer.status_code,
            text,
        )
