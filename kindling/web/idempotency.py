"""Idempotency-Key on the writes whose contract declares it (openapi.yaml, `IdempotencyKey`).

The key is looked up after validation, so a refused request is never stored and may be retried
as it is. A success is stored by the request's own transaction, with its effect. A refusal by
the operation's own rules (403, 404, 409 and the like) is stored once that transaction has
rolled back, in one of its own. A 5xx is never stored.
"""

from __future__ import annotations

import hashlib
import json

import flask

from kindling.errors import ApiError, invalid
from kindling.idempotency import responses
from kindling.idempotency.responses import Answer, Attempt
from kindling.platform.base import utcnow
from kindling.platform.request import KEYED, Runtime, db
from kindling.web.authentication import principal_of
from kindling.web.errors import envelope

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
PARAMETER = "#/components/parameters/IdempotencyKey"
WRITES = frozenset({"POST", "PUT", "PATCH"})


class KeyedOperations:
    """The operations that take a key, each with the response headers its contract names."""

    def __init__(self, spec: dict) -> None:
        self.headers: dict[str, frozenset[str]] = {}
        for item in spec["paths"].values():
            for method, operation in item.items():
                if method.upper() in WRITES and {"$ref": PARAMETER} in operation.get("parameters", []):
                    # Named as Connexion's router names it: the controller's module, then the function.
                    name = f"{operation['x-openapi-router-controller']}.{operation['operationId']}"
                    self.headers[name] = _named_headers(spec, operation)


def _named_headers(spec: dict, operation: dict) -> frozenset[str]:
    names = {"content-type"}
    for response in operation["responses"].values():
        if "$ref" in response:
            response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        # Rate-limit headers tell of the moment of each request, a replay's included.
        names.update(name.lower() for name in response.get("headers", {}) if not name.startswith("X-RateLimit-"))
    return frozenset(names)


def keep_answers(flask_app: flask.Flask, operations: KeyedOperations) -> None:
    """Answer a used key with its stored response, and store a new key's success with its
    effect; registered after the request's commit, so that it runs before it."""

    @flask_app.before_request
    def begin() -> flask.Response | None:
        request = flask.request
        key = request.headers.get(HEADER)
        if key is None or request.method not in WRITES:
            return None
        scope = request.environ["asgi.scope"]
        operation_id = scope.get("extensions", {}).get("connexion_routing", {}).get("operation_id")
        if operation_id not in operations.headers:
            raise invalid(
                "header",
                HEADER,
                "this operation takes no Idempotency-Key: a retry of it is not safe",
                code="idempotency_not_supported",
            )
        caller = principal_of(scope)
        assert caller is not None, "an operation that takes a key is for signed-in callers"
        attempt = Attempt(caller.user_id, key, f"{request.method} {request.path}", _body_sha256(request))
        answer = responses.begin(db(), attempt, now=utcnow())
        if answer is not None:
            return flask.Response(answer.body, status=answer.status, headers={**answer.headers, REPLAYED: "true"})
        setattr(flask.g, KEYED, (attempt, operations.headers[operation_id]))
        return None

    @flask_app.after_request
    def keep(response: flask.Response) -> flask.Response:
        keyed = flask.g.pop(KEYED, None)
        if keyed is None:
            return response
        attempt, named = keyed
        headers = {name: value for name, value in response.headers.items() if name.lower() in named}
        answer = Answer(response.status_code, headers, response.get_data())
        if response.status_code < 400:
            if not responses.keep(db(), attempt, answer, now=utcnow()):
                # Answered by another request meanwhile: this one's effect rolls back, and its
                # retry is answered what the other stored.
                error = responses.key_in_use()
                return flask.Response(
                    envelope(error), status=error.status, headers=error.headers, mimetype="application/json"
                )
        elif response.status_code < 500:
            flask.g.idempotency_refusal = (attempt, answer)
        return response


def keep_refusals(flask_app: flask.Flask, state: Runtime) -> None:
    """Store the refusals of keyed writes; registered before the request's own clean-up, so that
    it runs after it, once the request's transaction has ended."""

    @flask_app.teardown_request
    def keep_refusal(error: BaseException | None) -> None:
        refusal = flask.g.pop("idempotency_refusal", None)
        keyed = flask.g.pop(KEYED, None)
        if keyed is not None and isinstance(error, ApiError) and error.status < 500:
            attempt, _named = keyed
            headers = {"Content-Type": "application/json", **error.headers}
            refusal = (attempt, Answer(error.status, headers, envelope(error)))
        if refusal is not None:
            with state.session_factory() as session:
                # A request that stored an answer for the key meanwhile keeps it.
                responses.keep(session, *refusal, now=utcnow())
                session.commit()


def _body_sha256(request: flask.Request) -> str:
    """The SHA-256 of the raw body; of a multipart body, of its parts, so that a retry with another
    boundary is the same request (docs/decisions.md §16)."""
    if request.mimetype != "multipart/form-data":
        return responses.body_sha256(request.get_data(cache=True))
    parts: list[list[str]] = [[name, value] for name, value in request.form.items(multi=True)]
    for name, upload in request.files.items(multi=True):
        content = upload.stream.read()
        upload.stream.seek(0)
        parts.append([name, upload.filename or "", upload.mimetype, hashlib.sha256(content).hexdigest()])
    return responses.body_sha256(json.dumps(parts).encode())
