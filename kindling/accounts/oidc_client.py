"""Kindling's calls to an organization's OpenID provider: discovery, the code exchange, and the
keys its ID tokens are signed with. Authlib speaks OAuth 2.0 and joserfc checks the tokens; every
call follows the outbound destination rules and shares one 5-second budget per request."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
import typing

import requests
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc6749.errors import OAuth2Error
from joserfc import jwt
from joserfc.errors import BadSignatureError, ClaimError, InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet, KeySetSerialization

from kindling.platform import destinations
from kindling.platform.destinations import DestinationPolicy, RefusedDestination

log = logging.getLogger(__name__)

TIMEOUT = 5.0
# Asymmetric algorithms only: a provider's `HS256` would be keyed by the client secret, and `none` is no signature.
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
# A provider's keys are read again after this, and at once when a token names a key not seen yet.
KEYS_TTL = 3600.0
MAX_DOCUMENT = 512 * 1024


class DiscoveryFailed(Exception):
    """The provider's discovery document cannot be used; the message says why."""


class ProviderUnavailable(Exception):
    """The provider failed or did not answer in time."""


class TokenRefused(Exception):
    """The provider refused the code, or its ID token is not valid; the message says which check failed."""


@dataclasses.dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    signing_algorithms: tuple[str, ...]
    token_endpoint_auth_method: str


class Deadline:
    """What is left of one request's time for the provider."""

    def __init__(self, seconds: float = TIMEOUT) -> None:
        self._ends = time.monotonic() + seconds

    def left(self) -> float:
        left = self._ends - time.monotonic()
        if left <= 0:
            raise ProviderUnavailable("the identity provider did not answer in time")
        return left


def discover(issuer: str, policy: DestinationPolicy) -> Discovery:
    """The provider's endpoints, read from `{issuer}/.well-known/openid-configuration` and checked."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        document = _get_json(url, policy, Deadline())
    except RefusedDestination as exc:
        raise DiscoveryFailed(f"the issuer URL is not allowed: {exc}") from None
    except ProviderUnavailable as exc:
        raise DiscoveryFailed(f"the discovery document could not be read: {exc}") from None
    if document.get("issuer") != issuer:
        raise DiscoveryFailed("the discovery document names another issuer; use exactly the issuer it names")
    endpoints = {}
    for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        value = document.get(name)
        if not isinstance(value, str) or not value or len(value) > 2048:
            raise DiscoveryFailed(f"the discovery document has no usable {name}")
        try:
            destinations.check_url(value, policy)
        except RefusedDestination as exc:
            raise DiscoveryFailed(f"its {name} is not allowed: {exc}") from None
        endpoints[name] = value
    offered = document.get("id_token_signing_alg_values_supported") or ["RS256"]
    algorithms = tuple(algorithm for algorithm in SIGNING_ALGORITHMS if algorithm in offered)
    if not algorithms:
        raise DiscoveryFailed("the provider signs ID tokens with no asymmetric algorithm Kindling accepts")
    challenges = document.get("code_challenge_methods_supported")
    if isinstance(challenges, list) and "S256" not in challenges:
        raise DiscoveryFailed("the provider does not support PKCE with S256")
    auth_methods = document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    auth_method = next(
        (method for method in ("client_secret_basic", "client_secret_post") if method in auth_methods), None
    )
    if auth_method is None:
        raise DiscoveryFailed("the provider's token endpoint takes neither client_secret_basic nor client_secret_post")
    return Discovery(issuer=issuer, signing_algorithms=algorithms, token_endpoint_auth_method=auth_method, **endpoints)


def authorization_url(
    discovery: Discovery, *, client_id: str, redirect_uri: str, state: str, nonce: str, code_verifier: str
) -> str:
    """Where to send the person: the provider's authorization endpoint with state, nonce and an S256 code challenge."""
    client = OAuth2Session(
        client_id, scope="openid email profile", redirect_uri=redirect_uri, code_challenge_method="S256"
    )
    url, _ = client.create_authorization_url(
        discovery.authorization_endpoint, state=state, code_verifier=code_verifier, nonce=nonce
    )
    client.close()
    return url


def exchange_code(
    discovery: Discovery,
    policy: DestinationPolicy,
    deadline: Deadline,
    *,
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    code: str,
    code_verifier: str,
) -> str:
    """The ID token the provider's token endpoint gives for `code` and its PKCE verifier."""
    client = OAuth2Session(
        client_id,
        client_secret,
        token_endpoint_auth_method=discovery.token_endpoint_auth_method,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
    )
    destinations.guard(client, policy)
    try:
        token = client.fetch_token(
            discovery.token_endpoint,
            grant_type="authorization_code",
            code=code,
            code_verifier=code_verifier,
            timeout=deadline.left(),
            allow_redirects=False,
        )
    except (OAuthError, OAuth2Error) as exc:
        # The provider's own error code only: its description may repeat what was sent.
        raise TokenRefused(f"the provider refused the authorization code ({getattr(exc, 'error', 'error')})") from None
    except (requests.RequestException, RefusedDestination, ValueError) as exc:
        log.warning("identity provider token endpoint failed: %s", exc.__class__.__name__)
        raise ProviderUnavailable("the identity provider's token endpoint failed") from None
    finally:
        client.close()
    id_token = token.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise TokenRefused("the provider answered without an ID token")
    return id_token


def validate_id_token(
    id_token: str, discovery: Discovery, policy: DestinationPolicy, deadline: Deadline, *, client_id: str, nonce: str
) -> dict:
    """The ID token's claims, once its signature (against the provider's keys, read again when it
    names a key not seen yet), `iss`, `aud`, `exp`, `iat` (5 minutes of skew) and `nonce` hold."""
    keys = _keys.get(discovery.jwks_uri, policy, deadline)
    try:
        try:
            token = jwt.decode(id_token, keys, algorithms=list(discovery.signing_algorithms))
        except (InvalidKeyIdError, BadSignatureError):
            # A key rotated at the provider: read its keys again, once.
            keys = _keys.get(discovery.jwks_uri, policy, deadline, refresh=True)
            token = jwt.decode(id_token, keys, algorithms=list(discovery.signing_algorithms))
        claims = jwt.JWTClaimsRegistry(
            leeway=300,
            iss={"essential": True, "value": discovery.issuer},
            aud={"essential": True, "value": client_id},
            exp={"essential": True},
            iat={"essential": True},
            sub={"essential": True},
            nonce={"essential": True, "value": nonce},
        )
        claims.validate(token.claims)
    except ClaimError as exc:
        # joserfc's descriptions name the claim and the check, never a claim's value.
        raise TokenRefused(f"the ID token is not valid ({exc.claim}: {exc.description})") from None
    except JoseError as exc:
        raise TokenRefused(f"the ID token is not valid ({exc.error})") from None
    except ValueError:
        raise TokenRefused("the ID token is not valid (malformed)") from None
    azp = token.claims.get("azp")
    if isinstance(token.claims.get("aud"), list) and len(token.claims["aud"]) > 1 and azp != client_id:
        raise TokenRefused("the ID token is not valid (azp)")
    return token.claims


class _KeyCache:
    """Each provider's signing keys, kept in this process for KEYS_TTL seconds."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, KeySet]] = {}
        self._lock = threading.Lock()

    def get(self, jwks_uri: str, policy: DestinationPolicy, deadline: Deadline, *, refresh: bool = False) -> KeySet:
        entry = self._entries.get(jwks_uri)
        if entry is not None and not refresh and entry[0] > time.monotonic():
            return entry[1]
        try:
            document = _get_json(jwks_uri, policy, deadline)
            keys = KeySet.import_key_set(typing.cast(KeySetSerialization, document))
        except RefusedDestination:
            raise ProviderUnavailable("the identity provider's keys are at an address that is not allowed") from None
        except (JoseError, KeyError, TypeError, ValueError):
            raise ProviderUnavailable("the identity provider's keys cannot be read") from None
        with self._lock:
            self._entries[jwks_uri] = (time.monotonic() + KEYS_TTL, keys)
        return keys

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_keys = _KeyCache()


def _get_json(url: str, policy: DestinationPolicy, deadline: Deadline) -> dict:
    destinations.check_url(url, policy, resolve=False)
    with destinations.session(policy) as http:
        try:
            response = http.get(
                url, timeout=deadline.left(), allow_redirects=False, headers={"Accept": "application/json"}, stream=True
            )
            body = response.raw.read(MAX_DOCUMENT + 1, decode_content=True)
        except (requests.RequestException, OSError) as exc:
            log.warning("identity provider request failed: %s", exc.__class__.__name__)
            raise ProviderUnavailable("the identity provider did not answer") from None
    if response.status_code != 200:
        raise ProviderUnavailable(f"the identity provider answered HTTP {response.status_code}")
    if len(body) > MAX_DOCUMENT:
        raise ProviderUnavailable("the identity provider's answer is too large")
    try:
        document = json.loads(body)
    except ValueError:
        raise ProviderUnavailable("the identity provider's answer is not JSON") from None
    if not isinstance(document, dict):
        raise ProviderUnavailable("the identity provider's answer is not a JSON object")
    return document
