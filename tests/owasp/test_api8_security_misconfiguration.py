"""API8 Security Misconfiguration: no CORS to reflect, failures that show nothing of the server,
methods outside the spec refused, and parsers that cannot be played against each other."""

from __future__ import annotations

import logging
import re

import pytest

from kindling.accounts import service as accounts
from kindling.kindness import acts as kindness
from tests.helpers import assert_envelope, spec
from tests.owasp.operations import url_for

EVIL = "https://evil.example"
# SCIM answers its own error body: tests/accounts/scim/test_tokens.py covers its 405s.
PATHS = sorted(path for path in spec.document()["paths"] if not path.startswith("/scim/v2"))


def _documented(method: str, path: str) -> bool:
    """True when some operation of `method` serves `path`, as written or through its template
    (PUT /api/kindness/stats is PUT /api/kindness/{id} for the act "stats")."""
    return any(
        m == method and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path) for m, template in spec.operations()
    )


UNDOCUMENTED = sorted(
    (method, path)
    for path in PATHS
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")
    if not _documented(method, path)
)


@pytest.mark.parametrize("path", PATHS)
def test_no_origin_is_granted_access(client, make, path):
    """There is no CORS: browsers keep other sites' scripts away from the API and its cookie."""
    account = make.admin()
    url = url_for(path)
    for response in (
        client.get(url, headers={"Origin": EVIL, **account.headers}),
        client.post(url, headers={"Origin": EVIL, **account.headers}, json={}),
        client.options(
            url,
            headers={
                "Origin": EVIL,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization",
            },
        ),
    ):
        granted = {name for name in response.headers if name.lower().startswith("access-control-")}
        assert not granted, (path, granted)
        assert EVIL not in response.text


@pytest.mark.parametrize(("method", "path"), UNDOCUMENTED, ids=[f"{m} {p}" for m, p in UNDOCUMENTED])
def test_methods_outside_the_spec_are_405(client, make, method, path):
    response = client.request(method, url_for(path), headers=make.admin().headers)
    assert_envelope(response, 405, "method_not_allowed")
    documented = {m for m, p in spec.operations() if p == path} | {"HEAD", "OPTIONS"}
    allowed = {m.strip() for m in response.headers.get("allow", "").split(",") if m.strip()}
    assert allowed <= documented, allowed - documented


@pytest.mark.parametrize(
    ("target", "caller"),
    [(accounts, "get_user"), (kindness, "list_acts")],
    ids=["session", "kindness list"],
)
def test_server_errors_show_nothing_of_the_server(client, make, monkeypatch, caplog, target, caller):
    member = make.member(make.admin())

    def explode(*args, **kwargs):
        raise RuntimeError("password=hunter2 at /srv/kindling/services.py line 42")

    monkeypatch.setattr(target, caller, explode)
    url = "/api/auth/session" if target is accounts else "/api/kindness"
    with caplog.at_level(logging.ERROR, logger="kindling.web.errors"):
        response = client.get(url, headers=member.headers)
    assert response.json() == {"error": "Internal server error", "code": "internal_error"}
    assert response.status_code == 500 and response.headers["content-type"] == "application/json"
    for leak in ("hunter2", "Traceback", "/srv/", ".py", "RuntimeError"):
        assert leak not in response.text
    assert any(
        "hunter2" in str(record.exc_info[1]) for record in caplog.records if record.exc_info
    )  # logged, not shown


@pytest.mark.parametrize(
    "path", ["/api/clients/abc%0A", "/api/clients/%0A", "/api/clients/a%0Ab", "/api/clients/ab%0A%0A"]
)
def test_paths_the_two_routers_read_differently_reach_no_handler(client, make, path):
    """Starlette (Connexion) and Werkzeug (Flask) disagree on paths with a newline: what the
    spec's router matched to no operation must not reach a handler through Flask's."""
    assert_envelope(client.delete(path, headers=make.consultant().headers), 404, "not_found")


@pytest.mark.parametrize(
    "path", ["/api/kindness/ab%09c", "/api/volunteer/%0D", "/api/donations/a%7Fb", "/api/wellbeing/%1B"]
)
def test_other_control_characters_in_a_path_are_ids_like_any_other(client, make, path):
    assert_envelope(client.get(path, headers=make.member(make.admin()).headers), 404, "not_found")


def test_a_body_without_a_content_type_is_415(client, make):
    """Validation would read it as JSON, and the handler as bytes."""
    member = make.member(make.admin())
    body = b'{"description": "x", "category": "community", "verificationLevel": 1, "recipientId": "r"}'
    refused = assert_envelope(
        client.post("/api/kindness", content=body, headers=member.headers), 415, "unsupported_media_type"
    )
    assert refused["details"]["errors"] == [
        {"location": "header", "field": "Content-Type", "message": "is required with a body"}
    ]
    assert client.get("/api/kindness", headers=member.headers).json()["data"] == []


def test_unpaired_surrogates_and_nul_are_400(client, make):
    member = make.member(make.admin())
    headers = {**member.headers, "Content-Type": "application/json"}
    for text in ("\\ud800", "a\\udfffb", "\\u0000"):
        body = '{"mood": 3, "stress": 3, "comment": "%s"}' % text
        assert_envelope(client.post("/api/wellbeing", content=body, headers=headers), 400, "validation_error")
    paired = '{"mood": 3, "stress": 3, "comment": "\\ud83d\\ude00"}'  # an emoji, escaped as a surrogate pair
    assert client.post("/api/wellbeing", content=paired, headers=headers).status_code == 201


def test_dates_at_the_ends_of_the_calendar_leave_that_side_open(client, make):
    member = make.member(make.admin())
    for query in ("startDate=9999-12-31T23:59:59-23:59", "endDate=9999-12-31", "endDate=0001-01-01T00:00:00%2B23:59"):
        assert client.get(f"/api/kindness?{query}", headers=member.headers).status_code == 200, query
