"""Behaviour guards of kindling/web/overrides: each fails if the framework stops doing what an
override relies on. The multipart parser's guards are in tests/web/test_uploads.py and the HTTP
protocol's in tests/web/test_errors.py (they need uploads and a live server)."""

from __future__ import annotations

import logging

import connexion
from connexion.apps.flask import FlaskOperation
from connexion.decorators import FlaskDecorator
from connexion.middleware import MiddlewarePosition
from connexion.resolver import Resolver

from kindling.web.authentication import CREDENTIAL_KEY, Credential
from kindling.web.overrides.connexion_log import LOGGER, NOTICE
from kindling.web.overrides.decorated_views import decorate_views
from kindling.web.overrides.security_handlers import security_map
from tests.helpers import assert_envelope


def test_the_body_validator_names_every_fault_and_repeats_none(client):
    response = client.post("/api/auth/sign-in", json={"email": 5, "password": "hunter2-and-then-some", "extra": 1})
    errors = assert_envelope(response, 400, "validation_error")["details"]["errors"]
    assert {(e["location"], e["field"]) for e in errors} == {("body", "email"), ("body", "extra")}
    assert "hunter2" not in response.text


def test_the_body_validator_fills_in_the_specs_defaults(client, make):
    admin = make.admin()
    opportunity = {
        "title": "Beach clean",
        "startsAt": "2030-01-01T09:00:00Z",
        "endsAt": "2030-01-01T12:00:00Z",
        "location": {"latitude": 51.5, "longitude": -0.1},
    }
    response = client.post("/api/volunteer", json=opportunity, headers=admin.headers)
    assert response.status_code == 201, response.text
    created = response.json()["data"]
    assert (created["location"]["radiusMeters"], created["requireCode"]) == (200, False)


def test_the_parameter_validator_names_every_fault(client, make):
    response = client.get("/api/kindness?limit=0&nope=1", headers=make.admin().headers)
    errors = assert_envelope(response, 400, "validation_error")["details"]["errors"]
    assert {(e["location"], e["field"]) for e in errors} == {("query", "limit"), ("query", "nope")}


def test_connexion_decorates_a_handler_on_every_request_and_the_override_once(monkeypatch):
    """Connexion rebuilds the decorators each request (the reason for decorated_views); the
    override builds them once, and the handler still receives the arguments Connexion passes."""

    def handler(flag=None):
        return {"received": flag}, 200

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "probe", "version": "1"},
        "paths": {
            "/probe": {
                "get": {
                    "operationId": "probe",
                    "parameters": [{"name": "flag", "in": "query", "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    built = []
    decorate = FlaskDecorator.decorate
    monkeypatch.setattr(
        FlaskDecorator, "decorate", lambda self, function: built.append(function) or decorate(self, function)
    )

    def probe(override: bool) -> list:
        built.clear()
        app = connexion.FlaskApp(__name__)
        app.add_api(spec, resolver=Resolver(function_resolver=lambda _operation_id: handler))
        if override:
            decorate_views(app.app)
        client = app.test_client()
        for flag in (1, 2, 3):
            assert client.get(f"/probe?flag={flag}").json() == {"received": flag}
        return list(built)

    assert len(probe(override=False)) == 3
    assert len(probe(override=True)) == 1


def test_every_operation_view_of_the_app_is_decorated_once(client, app):
    assert client.get("/api/health").status_code == 200
    views = app.app.view_functions.values()
    assert len(views) > 100 and not any(isinstance(view, FlaskOperation) for view in views)


def test_responses_are_encoded_by_orjson(client, app):
    # Connexion's own jsonifier indents and ends with a newline; orjson writes compactly.
    text = client.get("/api/health").text
    assert text.startswith('{"status":') and "\n" not in text
    with app.app.app_context():
        assert app.app.json.dumps({"a": [1, 2]}) == '{"a":[1,2]}'


def test_connexions_own_400s_and_415s_are_worded_from_their_text(client):
    # What kindling.web.overrides.problem_text reads: the decoder's sentence, "…required…", and
    # "Invalid Content-type (…), expected […]".
    def refusal(response, status: int) -> tuple[str, str, str]:
        error = assert_envelope(response, status)["details"]["errors"][0]
        return error["location"], error["field"], error["message"]

    headers = {"Content-Type": "application/json"}
    malformed = client.post("/api/auth/sign-in", content=b"{not json", headers=headers)
    assert refusal(malformed, 400) == (
        "body",
        "",
        "is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    )
    assert refusal(client.post("/api/auth/sign-in", headers=headers), 400) == ("body", "", "is required")
    unsupported = client.post("/api/auth/sign-in", content=b"email=a", headers={"Content-Type": "text/plain"})
    assert refusal(unsupported, 415) == ("header", "Content-Type", "must be one of: application/json")
    assert "text/plain" not in unsupported.text


def test_connexion_notes_an_operation_of_two_media_types_on_every_request_and_the_filter_drops_it(app, caplog):
    def handler(body):
        return body, 200

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "probe", "version": "1"},
        "paths": {
            "/probe": {
                "post": {
                    "operationId": "probe",
                    "requestBody": {
                        "content": {
                            media_type: {"schema": {"type": "object"}}
                            for media_type in ("application/scim+json", "application/json")
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    probe = connexion.FlaskApp(__name__)
    probe.add_api(spec, resolver=Resolver(function_resolver=lambda _operation_id: handler))
    client = probe.test_client()
    logger = logging.getLogger(LOGGER)
    # The app's factory added the filter.
    assert NOTICE in logger.filters
    logger.removeFilter(NOTICE)
    try:
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            for _ in range(2):
                assert client.post("/probe", json={"a": 1}).status_code == 200
    finally:
        logger.addFilter(NOTICE)
    notices = [record for record in caplog.records if record.name == LOGGER]
    assert len(notices) >= 2 and not any(NOTICE.filter(record) for record in notices)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert client.post("/probe", json={"a": 1}).status_code == 200
    assert [record for record in caplog.records if record.name == LOGGER] == []


def probe_token_info(scope) -> dict | None:
    return {"sub": "probe"} if scope["state"][CREDENTIAL_KEY].bearer == "resolved" else None


def test_connexion_checks_security_through_the_handlers_it_is_given():
    class Resolved:
        """Leaves a bearer credential in the request's state, as kindling.web.authentication does."""

        def __init__(self, app) -> None:
            self.app = app

        async def __call__(self, scope, receive, send):
            scope.setdefault("state", {})[CREDENTIAL_KEY] = Credential(scheme="bearer", bearer="resolved")
            await self.app(scope, receive, send)

    def handler(token_info):
        return {"sub": token_info["sub"]}, 200

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "probe", "version": "1"},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "x-bearerInfoFunc": f"{__name__}.probe_token_info"}
            }
        },
        "security": [{"bearer": []}],
        "paths": {"/probe": {"get": {"operationId": "probe", "responses": {"200": {"description": "ok"}}}}},
    }
    app = connexion.FlaskApp(__name__)
    app.add_api(spec, resolver=Resolver(function_resolver=lambda _operation_id: handler), security_map=security_map())
    app.add_middleware(Resolved, position=MiddlewarePosition.BEFORE_SECURITY)
    # No Authorization header: Connexion's own bearer handler would find no token and answer 401.
    assert app.test_client().get("/probe").json() == {"sub": "probe"}
