"""The application factory: one place wires the spec, handlers, middleware and stores."""

from __future__ import annotations

import pathlib

import connexion
import flask
import yaml
from connexion.jsonifier import Jsonifier
from connexion.middleware import MiddlewarePosition
from connexion.options import SwaggerUIOptions

from kindling import errors, operations
from kindling.cache import make_cache, redis_breaker
from kindling.compliance import load_frameworks
from kindling.config import Settings
from kindling.persistence.database import make_engine, make_session_factory
from kindling.ratelimit import RateLimiter, RateLimitMiddleware
from kindling.requestguard import RequestGuardMiddleware
from kindling.routeguard import RouteGuardMiddleware
from kindling.runtime import Runtime, install
from kindling.security import SECURITY_MAP
from kindling.uploads import VALIDATOR_MAP_OVERRIDES

SPEC = pathlib.Path(__file__).with_name("openapi.yaml")


def load_spec() -> dict:
    # libyaml's parser: the pure-Python one takes half a second of every start over this document.
    return yaml.load(SPEC.read_text(), Loader=yaml.CSafeLoader)


def create_app(settings: Settings | None = None) -> connexion.FlaskApp:
    """Build a Kindling app for `settings` (by default, from the environment)."""
    settings = settings or Settings.from_env()
    operations.install()
    # A broken framework file stops the server here, not at the first compliance request.
    load_frameworks()
    engine = make_engine(settings.database_url)
    breaker = redis_breaker()
    state = Runtime(
        settings=settings,
        engine=engine,
        session_factory=make_session_factory(engine),
        cache=make_cache(settings.redis_url, breaker),
        limiter=RateLimiter(settings.redis_url, settings.rate_limit_multiplier, breaker=breaker),
    )
    # Compact JSON: Connexion pretty-prints by default, which triples the cost of encoding.
    app = connexion.FlaskApp(__name__, jsonifier=Jsonifier(flask.json), security_map=SECURITY_MAP)
    spec = load_spec()
    app.add_api(
        spec,
        strict_validation=True,
        validate_responses=settings.validate_responses,
        pythonic_params=True,
        validator_map=VALIDATOR_MAP_OVERRIDES,
        swagger_ui_options=SwaggerUIOptions(spec_path="/api/openapi.json", swagger_ui_path="/api/ui"),
    )
    app.add_middleware(
        RateLimitMiddleware,
        position=MiddlewarePosition.BEFORE_EXCEPTION,
        limiter=state.limiter,
        session_factory=state.session_factory,
        cache=state.cache,
    )
    app.add_middleware(RequestGuardMiddleware, position=MiddlewarePosition.BEFORE_ROUTING)
    app.add_middleware(
        RouteGuardMiddleware,
        position=MiddlewarePosition.BEFORE_ROUTING,
        paths=spec["paths"],
    )
    errors.register(app)
    install(app.app, state)
    return app


def app_from_environment() -> connexion.FlaskApp:
    """Factory for ASGI servers: `uvicorn --factory kindling.app:app_from_environment`."""
    return create_app(Settings.from_env())
