"""The request pipeline is the one the README's "kindling/web/" entry describes, step by step."""

from __future__ import annotations

import functools

from connexion.middleware.context import ContextMiddleware
from connexion.middleware.lifespan import LifespanMiddleware
from connexion.middleware.request_validation import RequestValidationMiddleware
from connexion.middleware.response_validation import ResponseValidationMiddleware
from connexion.middleware.routing import RoutingMiddleware
from connexion.middleware.security import SecurityMiddleware
from connexion.middleware.swagger_ui import SwaggerUIMiddleware

from kindling.web.apidocs import SpecMiddleware
from kindling.web.authentication import AuthenticationMiddleware
from kindling.web.authorization import AuthorizationMiddleware
from kindling.web.edge import EdgeMiddleware
from kindling.web.ratelimit import OperationLimitMiddleware, RateLimitMiddleware
from kindling.web.requestguard import RequestGuardMiddleware
from kindling.web.routeguard import RouteGuardMiddleware
from kindling.web.scim import ScimMiddleware


def steps(app) -> list[type]:
    return [step.func if isinstance(step, functools.partial) else step for step in app.middleware.middlewares]


def test_each_request_is_routed_once_and_passes_the_steps_in_order(app):
    # The caller's limit before anything that may refuse (its headers reach every error), the
    # router once, and everything that needs the operation after it.
    expected = [
        EdgeMiddleware,
        AuthenticationMiddleware,
        RateLimitMiddleware,
        SpecMiddleware,
        SwaggerUIMiddleware,
        RequestGuardMiddleware,
        RouteGuardMiddleware,
        ScimMiddleware,
        RoutingMiddleware,
        OperationLimitMiddleware,
        SecurityMiddleware,
        AuthorizationMiddleware,
        RequestValidationMiddleware,
        ResponseValidationMiddleware,
        LifespanMiddleware,
        ContextMiddleware,
    ]
    found = steps(app)
    # Swagger UI and response validation are in the stack only where the settings ask for them.
    assert [step for step in found if step in expected] == [step for step in expected if step in found]
    assert found.count(RoutingMiddleware) == 1
    assert {AuthenticationMiddleware, RateLimitMiddleware, OperationLimitMiddleware, AuthorizationMiddleware} <= set(
        found
    )
