"""Connexion's security step for openapi.yaml's schemes, reading the credential
kindling.web.authentication resolved instead of parsing the headers again.

Connexion's own handlers read the Cookie and Authorization headers anew and hand the token they
find to the scheme's function. This one takes their place through Connexion's public
`security_map` setting (a scheme type to a handler class whose `get_fn(scheme, required_scopes)`
returns the check). Its checks call the function the scheme names (`x-apikeyInfoFunc`,
`x-bearerInfoFunc`) with the request's scope, and refuse as Connexion's own do, with the same
problems in the same words; Connexion still picks the 401 among the schemes an operation takes.
What it gains is that a credential is read once, by one module. `tests/web/test_overrides.py`
fails if Connexion stops checking through the handlers it is given.
"""

from __future__ import annotations

from collections.abc import Callable

from connexion.exceptions import OAuthProblem, OAuthResponseProblem
from connexion.lifecycle import ConnexionRequest
from connexion.security import NO_VALUE, AbstractSecurityHandler
from connexion.utils import get_function_from_name
from starlette.types import Scope

from kindling.web.authentication import credential_of

# The function a scheme names, from the request's scope to its token info (None: not valid).
Info = Callable[[Scope], dict | None]
# A scheme's check: the request's token info, or NO_VALUE where the request does not use the scheme.
Check = Callable[[ConnexionRequest], object]


class ResolvedCredentialHandler(AbstractSecurityHandler):
    """For the session cookie (`apiKey` in a cookie) and for `http` bearer schemes."""

    def get_fn(self, security_scheme: dict, required_scopes: list[str]) -> Check:
        if security_scheme["type"] == "apiKey":
            if security_scheme["in"] != "cookie":
                raise ValueError("Kindling resolves only cookie API keys")
            return _cookie_check(get_function_from_name(security_scheme["x-apikeyInfoFunc"]))
        return _bearer_check(get_function_from_name(security_scheme["x-bearerInfoFunc"]))


def security_map() -> dict:
    return {"apiKey": ResolvedCredentialHandler, "bearer": ResolvedCredentialHandler}


def _cookie_check(info: Info) -> Check:
    def check(request: ConnexionRequest) -> object:
        if credential_of(request.scope).cookie is None:
            return NO_VALUE
        return _found(info(request.scope), "Provided apikey is not valid")

    return check


def _bearer_check(info: Info) -> Check:
    def check(request: ConnexionRequest) -> object:
        scheme = credential_of(request.scope).scheme
        if scheme is None:
            raise OAuthProblem(detail="Invalid authorization header")
        if scheme != "bearer":
            return NO_VALUE
        return _found(info(request.scope), "Provided token is not valid")

    return check


def _found(token_info: dict | None, refusal: str) -> dict:
    if token_info is None:
        raise OAuthResponseProblem(detail=refusal)
    return token_info
