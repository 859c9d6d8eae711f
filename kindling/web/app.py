"""The application factory: one place wires the spec, handlers, middleware and stores.

Every request passes these steps, in this order (`pipeline` below builds them; the test
tests/web/test_pipeline.py holds this list and the app to each other):

1. `EdgeMiddleware` (edge.py): answers every failure of the steps below with the one error
   envelope, and puts the rate-limit headers on every response.
2. `AuthenticationMiddleware` (authentication.py): the credentials of an /api request, resolved
   once; first, for the limits are per account for a signed-in caller.
3. `RateLimitMiddleware` (ratelimit.py): the caller's limit.
4. `SpecMiddleware` (apidocs.py) and Connexion's `SwaggerUIMiddleware`: the served spec and the
   Swagger UI, with API docs only.
5. `RequestGuardMiddleware` (requestguard.py): sizes, Content-Type and text any body may carry.
6. `RouteGuardMiddleware` (routeguard.py): paths the router would mishandle.
7. `ScimMiddleware` (scim.py): a /scim/v2 request's SCIM token and its organization's limit;
   after the guards, so an oversized request is refused before its token is looked up.
8. Connexion's `RoutingMiddleware`: the one router, which matches the request to its operation.
9. `OperationLimitMiddleware` (ratelimit.py): the routed operation's `x-rate-limit` class; before
   the security step, so a 401 counts too.
10. Connexion's `SecurityMiddleware`: 401 for an operation's missing or refused credential.
11. `AuthorizationMiddleware` (authorization.py): 403 for a caller the operation's `x-roles` does
    not name; after the security step, so a caller without a session gets its 401 first.
12. Connexion's `RequestValidationMiddleware`: the parameters and body against the spec.
13. Connexion's `ResponseValidationMiddleware`: the response against the spec, where the settings
    ask for it (the tests).
14. Connexion's `LifespanMiddleware` and `ContextMiddleware`, then Flask: the handler, between
    kindling/web/request_hooks.py's hooks and kindling/web/idempotency.py's.
"""

from __future__ import annotations

import pathlib
import sys
from functools import partial

import connexion
import yaml
from connexion.middleware.context import ContextMiddleware
from connexion.middleware.lifespan import LifespanMiddleware
from connexion.middleware.request_validation import RequestValidationMiddleware
from connexion.middleware.response_validation import ResponseValidationMiddleware
from connexion.middleware.routing import RoutingMiddleware
from connexion.middleware.security import SecurityMiddleware
from connexion.middleware.swagger_ui import SwaggerUIMiddleware
from connexion.options import SwaggerUIOptions

from kindling.compliance import load_frameworks
from kindling.config import Settings
from kindling.evidence.signing import signer_for
from kindling.platform.cache import make_cache, redis_breaker
from kindling.platform.database import make_engine, make_session_factory
from kindling.platform.health import DatabaseProbe
from kindling.platform.mail import make_mailer
from kindling.platform.ratelimit import RateLimiter
from kindling.platform.request import Runtime
from kindling.web.apidocs import SPEC_JSON_PATH, SpecMiddleware
from kindling.web.authentication import AuthenticationMiddleware
from kindling.web.authorization import AuthorizationMiddleware
from kindling.web.edge import EdgeMiddleware
from kindling.web.idempotency import KeyedOperations, keep_answers, keep_refusals
from kindling.web.operations import Operations
from kindling.web.overrides import validator_map
from kindling.web.overrides.connexion_log import drop_media_type_notices
from kindling.web.overrides.decorated_views import decorate_views
from kindling.web.overrides.json_encoding import OrjsonJsonifier, OrjsonProvider
from kindling.web.overrides.security_handlers import security_map
from kindling.web.ratelimit import OperationLimitMiddleware, RateLimitMiddleware
from kindling.web.request_hooks import keep_raw_form_bodies, own_request_transactions
from kindling.web.requestguard import RequestGuardMiddleware
from kindling.web.routeguard import RouteGuardMiddleware
from kindling.web.scim import ScimMiddleware

SPEC = pathlib.Path(__file__).parent.parent / "openapi.yaml"


def load_spec() -> dict:
    # libyaml's parser: the pure-Python one takes half a second of every start over this document.
    return yaml.load(SPEC.read_text(), Loader=yaml.CSafeLoader)


def create_app(settings: Settings | None = None) -> connexion.FlaskApp:
    """Build a Kindling app for `settings` (by default, from the environment)."""
    settings = settings or Settings.from_env()
    # A broken framework file stops the server here, not at the first compliance request.
    load_frameworks()
    # So is a signing key that does not parse; an embedded database's key is made here, at start.
    signer_for(settings)
    engine = make_engine(settings.database_url)
    breaker = redis_breaker()
    state = Runtime(
        settings=settings,
        engine=engine,
        database_probe=DatabaseProbe(engine),
        session_factory=make_session_factory(engine),
        cache=make_cache(settings.redis_target, breaker),
        limiter=RateLimiter(settings.redis_target, settings.rate_limit_multiplier, breaker=breaker),
        mailer=make_mailer(settings.smtp_url, settings.mail_from, settings.mail_timeout),
    )
    spec = load_spec()
    operations = Operations(spec["paths"])
    # Compact JSON by orjson: Connexion pretty-prints with the standard library by default.
    app = connexion.FlaskApp(
        __name__, jsonifier=OrjsonJsonifier(), middlewares=pipeline(settings, state, spec, operations)
    )
    app.app.json = OrjsonProvider(app.app)
    drop_media_type_notices()
    app.add_api(
        spec,
        strict_validation=True,
        validate_responses=settings.validate_responses,
        pythonic_params=True,
        validator_map=validator_map(),
        security_map=security_map(),
        # The spec itself is served as written by SpecMiddleware; the Swagger UI loads it from there.
        swagger_ui_options=SwaggerUIOptions(
            swagger_ui=settings.api_docs, serve_spec=False, spec_path=SPEC_JSON_PATH, swagger_ui_path="/api/ui"
        ),
    )
    decorate_views(app.app)
    # Flask runs teardowns in reverse order and after-request hooks too: a keyed write's success
    # is stored before the request's commit, its refusal after the request's transaction ended.
    keep_refusals(app.app, state)
    own_request_transactions(app.app, state)
    keep_raw_form_bodies(app.app)
    keep_answers(app.app, KeyedOperations(spec))
    return app


def pipeline(settings: Settings, state: Runtime, spec: dict, operations: Operations) -> list:
    """Every request's steps, in the order of this module's docstring."""
    docs = [partial(SpecMiddleware, spec=spec), SwaggerUIMiddleware] if settings.api_docs else []
    validation = [ResponseValidationMiddleware] if settings.validate_responses else []
    return [
        partial(EdgeMiddleware, operations=operations),
        partial(AuthenticationMiddleware, session_factory=state.session_factory),
        partial(RateLimitMiddleware, limiter=state.limiter),
        *docs,
        RequestGuardMiddleware,
        partial(RouteGuardMiddleware, operations=operations),
        partial(ScimMiddleware, session_factory=state.session_factory, limiter=state.limiter),
        RoutingMiddleware,
        partial(OperationLimitMiddleware, limiter=state.limiter, operations=operations),
        SecurityMiddleware,
        partial(AuthorizationMiddleware, operations=operations),
        RequestValidationMiddleware,
        *validation,
        LifespanMiddleware,
        ContextMiddleware,
    ]


def app_from_environment() -> connexion.FlaskApp:
    """Factory for ASGI servers: `uvicorn --factory kindling.web.app:app_from_environment`."""
    # A request holding an organization's lock waits for the interpreter after each of its
    # statements while other threads run; a 1 ms switch interval (CPython's default is 5 ms)
    # hands it back sooner: one organization's creates +20% (`python -m benchmarks.contention`).
    sys.setswitchinterval(0.001)
    return create_app(Settings.from_env())
