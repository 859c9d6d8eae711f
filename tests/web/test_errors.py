"""Every failure, from a handler or from Connexion itself, answers with the envelope (docs/decisions.md §10)."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import socket

import pytest
from sqlalchemy import func, select

from kindling.accounts import service as accounts
from kindling.accounts.models import User
from kindling.errors import PayloadTooLarge
from kindling.web.requestguard import RequestGuardMiddleware
from tests.helpers import assert_envelope, spec


def test_body_validation(client):
    response = client.post("/api/auth/sign-in", json={"email": "a@b.test"})
    body = assert_envelope(response, 400, "validation_error")
    assert "password" in body["error"]


def test_body_of_the_wrong_type(client):
    assert_envelope(client.post("/api/auth/sign-in", json=["not", "an", "object"]), 400, "validation_error")


def test_malformed_json(client):
    response = client.post("/api/auth/sign-in", content=b"{not json", headers={"Content-Type": "application/json"})
    assert_envelope(response, 400, "validation_error")


def test_body_that_is_not_utf8(client):
    response = client.post(
        "/api/auth/sign-in", content=b'{"email": "\xa8"}', headers={"Content-Type": "application/json"}
    )
    assert_envelope(response, 400, "validation_error")


def test_unknown_route(client):
    assert_envelope(client.get("/api/no-such-thing"), 404, "not_found")


def test_wrong_method(client):
    assert_envelope(client.delete("/api/health"), 405, "method_not_allowed")


def test_unsupported_media_type(client):
    response = client.post("/api/auth/sign-in", content=b"email=a", headers={"Content-Type": "text/plain"})
    assert_envelope(response, 415, "unsupported_media_type")


def test_body_too_large_by_content_length(client):
    response = client.post("/api/auth/sign-in", json={"email": "a@b.test", "password": "x" * (70 * 1024)})
    assert_envelope(response, 413, "payload_too_large")


def test_body_too_large_while_streaming():
    """A chunked body without Content-Length is counted as it arrives and refused mid-stream."""
    chunks = [{"type": "http.request", "body": b" " * 1024, "more_body": True} for _ in range(70)]

    async def receive():
        return chunks.pop(0)

    async def read_everything(scope, receive, send):
        while (await receive())["more_body"]:
            pass

    scope = {"type": "http", "path": "/api/auth/sign-in", "headers": [(b"content-type", b"application/json")]}
    with pytest.raises(PayloadTooLarge):
        asyncio.run(RequestGuardMiddleware(read_everything)(scope, receive, None))
    assert len(chunks) == 70 - 65  # stopped at the first chunk past 64 KB


@pytest.mark.parametrize(
    "path, body",
    [
        (
            "/api/auth/sign-up",
            b'{"email": "a@b.test", "password": "correct horse battery", "name": "A\\u0000", "organizationName": "N"}',
        ),
        ("/api/auth/sign-in", b'{"email": "a\\u0000@b.test", "password": "x"}'),
        ("/api/auth/sign-in?x=%00", b'{"email": "a@b.test", "password": "x"}'),
    ],
)
def test_nul_characters_are_refused(client, db, path, body):
    before = db.scalar(select(func.count()).select_from(User))
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert_envelope(response, 400, "validation_error")
    assert db.scalar(select(func.count()).select_from(User)) == before


def test_escaped_backslash_before_u0000_is_plain_text(client):
    body = b'{"email": "a\\\\u0000@b.test", "password": "wrong password"}'
    assert (
        client.post("/api/auth/sign-in", content=body, headers={"Content-Type": "application/json"}).status_code == 401
    )


def test_unhandled_exception_is_logged_not_shown(client, make, monkeypatch, caplog):
    account = make.admin()

    def explode(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(accounts, "get_user", explode)
    with caplog.at_level(logging.ERROR, logger="kindling.web.errors"):
        response = client.get("/api/auth/session", headers=account.headers)
    body = assert_envelope(response, 500, "internal_error")
    assert "secret internals" not in response.text and body["error"] == "Internal server error"
    assert any("secret internals" in str(record.exc_info[1]) for record in caplog.records if record.exc_info)


@pytest.mark.parametrize("path", ["/api/auth/session", "/api/auth/sign-out"])
def test_unauthenticated(client, path):
    method = client.post if path.endswith("sign-out") else client.get
    assert_envelope(method(path), 401, "unauthenticated")


@pytest.mark.parametrize(
    "headers, words",
    [
        ({}, "No authorization token provided"),
        ({"Authorization": "Bearer not-a-token"}, "Provided token is not valid"),
        ({"Authorization": "Bearer"}, "Invalid authorization header"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "No authorization token provided"),
        ({"Cookie": "kindling.session_token=not-a-token"}, "Provided apikey is not valid"),
        ({"Cookie": "other=1"}, "No authorization token provided"),
    ],
)
def test_a_refused_credential_is_named_in_the_401(client, headers, words):
    assert assert_envelope(client.get("/api/auth/session", headers=headers), 401, "unauthenticated")["error"] == words


def test_a_cookie_and_a_bearer_token_that_differ_authenticate_nobody(client, make):
    account = make.admin()
    token = account.headers["Authorization"].removeprefix("Bearer ")
    assert client.get("/api/auth/session", headers=account.headers).status_code == 200
    both = {**account.headers, "Cookie": f"kindling.session_token={token}"}
    assert client.get("/api/auth/session", headers=both).status_code == 200
    mixed = {**account.headers, "Cookie": "kindling.session_token=another"}
    assert_envelope(client.get("/api/auth/session", headers=mixed), 401, "unauthenticated")
    empty = {"Authorization": "Bearer", "Cookie": f"kindling.session_token={token}"}
    assert_envelope(client.get("/api/auth/session", headers=empty), 401, "unauthenticated")


# Validation errors name the field and where it is, and repeat nothing the client sent.

SECRETS = {
    "password": "Hunter2-super-secret!",
    "token": "tok-7f3a9c1e5b2d4f6a8c0e",
    "secret": "whsec-9b8a7c6d5e4f3a2b1c0d",
    "signature": "v1,c2lnbmF0dXJlLXZhbHVlLXNlY3JldA==",
}
MAX_ERROR_BODY = 8 * 1024


def assert_refused(response, location: str, field: str, *, status: int = 400, code: str = "validation_error") -> dict:
    body = assert_envelope(response, status, code)
    first = body["details"]["errors"][0]
    assert (first["location"], first["field"]) == (location, field), body
    assert body["error"].startswith(field + ":")
    assert_discreet(response)
    return first


def assert_discreet(response) -> None:
    text = response.get_data(as_text=True) if hasattr(response, "get_data") else response.text
    assert len(response.content) < MAX_ERROR_BODY
    assert "Failed validating" not in text and "{'type'" not in text and "On instance" not in text
    for value in SECRETS.values():
        assert value not in text


def test_sign_up_names_the_offending_field_and_not_the_password(client):
    body = {"email": "not-an-email", "password": SECRETS["password"], "name": "n", "organizationName": "Z"}
    first = assert_refused(client.post("/api/auth/sign-up", json=body), "body", "email")
    assert first["message"] == "is not in the expected format"


@pytest.mark.parametrize(
    "body, field, message",
    [
        (
            {"email": "a@b.test", "password": "short", "name": "n", "joinCode": "Z"},
            "password",
            "must be at least 12 characters",
        ),
        ({"email": "a@b.test", "password": "long enough pass", "name": "n"}, "organizationName", "is required"),
        (
            {
                "email": "a@b.test",
                "password": "long enough pass",
                "name": "n",
                "accountType": "consultant",
                "organizationName": "x",
            },
            "organizationName",
            "is not allowed",
        ),
        (
            {
                "email": "a@b.test",
                "password": "long enough pass",
                "name": "n",
                "accountType": "consultant",
                "firmName": 7,
            },
            "firmName",
            "must be a string",
        ),
    ],
)
def test_sign_up_reports_the_shape_the_body_comes_closest_to(client, body, field, message):
    first = assert_refused(client.post("/api/auth/sign-up", json=body), "body", field)
    assert first["message"] == message


def test_body_errors_are_listed_field_by_field(client):
    response = client.post("/api/auth/sign-in", json={"email": 5, "extra": True})
    body = assert_refused(response, "body", "email") and response.json()
    assert {(e["field"], e["message"]) for e in body["details"]["errors"]} == {
        ("email", "must be a string"),
        ("extra", "is not allowed"),
        ("password", "is required"),
    }


def test_nested_fields_are_dotted_paths(client, make):
    account = make.admin()
    response = client.post(
        "/api/wellbeing", json={"mood": 4, "stress": 2, "nope": {"deep": 1}}, headers=account.headers
    )
    assert_refused(response, "body", "nope")
    theme = client.post(
        "/api/theme/check", json={"theme": {"light": {"primary": 5}}}, headers=make.consultant().headers
    )
    fields = [e["field"] for e in theme.json()["details"]["errors"]]
    assert any(field.startswith("theme.") for field in fields), theme.json()


def test_query_parameter(client, make):
    account = make.admin()
    first = assert_refused(client.get("/api/kindness?limit=0", headers=account.headers), "query", "limit")
    assert first["message"] == "must be at least 1"
    first = assert_refused(client.get("/api/kindness?limit=many", headers=account.headers), "query", "limit")
    assert first["message"] == "must be an integer"


def test_unknown_query_parameter(client, make):
    account = make.admin()
    first = assert_refused(client.get("/api/kindness?colour=red", headers=account.headers), "query", "colour")
    assert first["message"] == "is not a parameter of this operation"
    # An operation that takes no parameters at all refuses them the same way.
    first = assert_refused(client.get("/api/kindness/stats?colour=red", headers=account.headers), "query", "colour")
    assert first["message"] == "is not a parameter of this operation"


def test_path_parameter(client, make):
    account = make.admin()
    first = assert_refused(client.get("/api/theme/" + "x" * 60, headers=account.headers), "path", "organizationId")
    assert first["message"] == "must be at most 36 characters"


def test_header_parameter(client):
    headers = {"Content-Type": "application/json", "Stripe-Signature": SECRETS["signature"] * 200}
    first = assert_refused(
        client.post("/webhooks/payments", content=b"{}", headers=headers), "header", "Stripe-Signature"
    )
    assert first["message"] == "must be at most 4096 characters"
    assert_refused(
        client.post("/webhooks/payments", content=b"{}", headers={"Content-Type": "application/json"}),
        "header",
        "Stripe-Signature",
    )


def test_multipart_field(client, make):
    consultant = make.consultant()
    response = client.post("/api/bulk/invite", files={"note": (None, SECRETS["secret"])}, headers=consultant.headers)
    first = assert_refused(response, "body", "note")
    assert first["message"] == "is not allowed"


def test_a_huge_value_is_not_repeated(client, make):
    account = make.admin()
    act = {"description": "k" * 60_000, "category": "community", "verificationLevel": 1, "recipientId": "someone"}
    response = client.post("/api/kindness", json=act, headers=account.headers)
    assert_refused(response, "body", "description")
    assert "kkkkkkkkkk" not in response.text


def _secret_request(operation: dict, path: str) -> tuple[str, dict, dict, dict]:
    """A request to this operation that carries every secret in its body, in each query, path
    and header parameter and in extra fields, each value longer than any bound of a value of
    the kind but small enough that the request reaches validation (no 414 or 431)."""
    secret = " ".join(SECRETS.values()) * 3
    for parameter in operation["parameters"]:
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", SECRETS["token"] + "!" + "x" * 40)
    query = {p["name"]: secret for p in operation["parameters"] if p["in"] == "query"} | SECRETS
    headers = {
        p["name"]: secret for p in operation["parameters"] if p["in"] == "header" and p["name"].lower() != "user-agent"
    }
    headers["X-Api-Secret"] = SECRETS["secret"]
    body = {name: [secret] for name in (spec.body_schema(operation) or {}).get("properties", {})} | SECRETS
    return path, query, headers, body


def test_no_refused_request_repeats_a_secret(client, make):
    """Every operation of the spec, sent secrets where validation refuses them, by a caller its
    `x-roles` admits (authorization comes before validation)."""
    admin, consultant = make.admin(), make.consultant()
    statuses = collections.Counter()
    for (method, path), operation in spec.operations().items():
        url, query, headers, body = _secret_request(operation, path)
        response = client.request(
            method,
            url,
            params=query,
            json=body if method in ("POST", "PUT", "PATCH") else None,
            headers={**(admin if "admin" in operation["x-roles"] else consultant).headers, **headers},
        )
        assert 400 <= response.status_code < 500 and response.status_code not in (414, 431), (
            method,
            path,
            response.status_code,
        )
        assert response.headers["content-type"] == "application/json", (method, path)
        assert_discreet(response)
        statuses[response.status_code] += 1
    assert sum(statuses.values()) == len(spec.operations()) > 40
    # Nearly all are refused by validation, which is where submitted values could be repeated.
    assert statuses[400] >= len(spec.operations()) - 2, statuses


def test_a_content_type_is_not_repeated(client, make):
    content_type = "application/" + SECRETS["password"] + "s" * 15_000
    response = client.post(
        "/api/kindness", content=b"{}", headers={**make.admin().headers, "Content-Type": content_type}
    )
    first = assert_refused(response, "header", "Content-Type", status=415, code="unsupported_media_type")
    assert first["message"] == "must be one of: application/json"
    assert_discreet(response)


def test_a_long_path_and_query_is_414_with_the_envelope(client):
    assert_envelope(client.get("/api/kindness?q=" + "a" * 9000), 414, "uri_too_long")


def test_large_headers_are_431_with_the_envelope(client):
    assert_envelope(
        client.get("/api/auth/session", headers={"X-Padding": "a" * 17_000}), 431, "request_header_fields_too_large"
    )


def _raw_request(server, request: bytes) -> tuple[int, str, bytes]:
    """Status, Content-Type and body of a request sent byte for byte."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except ConnectionResetError:  # a server that answers before reading the body resets it
            assert answer
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    content_type = next(
        (line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("content-type:")), ""
    )
    return int(lines[0].split()[1]), content_type, body


@pytest.mark.live
def test_the_server_refuses_oversized_requests_with_the_envelope(live_server):
    """`kindling serve` leaves the refusal of long targets and large headers to the app, and
    refuses a head over 64 KB itself, in the same envelope, without reading all of it; a body
    is not part of the head. Only what is not HTTP at all gets a plain-text 400."""
    server = live_server()
    close = b"Host: x\r\nConnection: close\r\n\r\n"
    for request, status, code in [
        (b"GET /api/kindness?q=" + b"a" * 30_000 + b" HTTP/1.1\r\n" + close, 414, "uri_too_long"),
        (b"GET /api/kindness?q=" + b"a" * 70_000 + b" HTTP/1.1\r\n" + close, 414, "uri_too_long"),
        (
            b"GET /api/kindness HTTP/1.1\r\nX-Padding: " + b"a" * 30_000 + b"\r\n" + close,
            431,
            "request_header_fields_too_large",
        ),
        (
            b"GET /api/kindness HTTP/1.1\r\nX-Padding: " + b"a" * 1_000_000 + b"\r\n" + close,
            431,
            "request_header_fields_too_large",
        ),
        (
            b"POST /api/kindness HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n"
            + close
            + b"[" * 200_000,
            413,
            "payload_too_large",
        ),
    ]:
        answer = _raw_request(server, request)
        assert (answer[0], answer[1], json.loads(answer[2])["code"]) == (status, "application/json", code), answer[:2]
    status, content_type, _body = _raw_request(server, b"\x16\x03\x01 not HTTP\r\n\r\n")
    assert (status, content_type.split(";")[0]) == (400, "text/plain")


@pytest.mark.live
def test_a_head_is_refused_as_soon_as_it_passes_the_bound(live_server):
    """Headers sent without end are answered once 64 KB have arrived, and the connection closed."""
    server = live_server()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(b"GET /api/kindness HTTP/1.1\r\nHost: x\r\n")
        answer = b""
        try:
            for n in range(10_000):
                connection.sendall(b"X-Padding-%d: %s\r\n" % (n, b"a" * 1000))
        except (BrokenPipeError, ConnectionResetError):
            pass
        while chunk := connection.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 431 ") and b'"request_header_fields_too_large"' in answer


def test_many_long_faults_stay_under_8_kb(client, make):
    account = make.admin()
    body = {f"unknown-{i}-" + "x" * 1000: {"y" * 500: [1] * 10} for i in range(30)}
    response = client.post("/api/wellbeing", json=body, headers=account.headers)
    assert_envelope(response, 400, "validation_error")
    assert_discreet(response)
    errors = response.json()["details"]["errors"]
    assert len(errors) == 15 and all(len(error["field"]) <= 60 for error in errors)


def test_every_missing_field_is_named_once(client):
    response = client.post("/api/auth/sign-in", json={})
    errors = assert_refused(response, "body", "email") and response.json()["details"]["errors"]
    assert errors == [
        {"location": "body", "field": "email", "message": "is required"},
        {"location": "body", "field": "password", "message": "is required"},
    ]
