"""A real OpenID provider on loopback (oidc-provider-mock, which runs Authlib's server); the
provider that hangs is silent.py's server."""

from __future__ import annotations

import secrets
import threading
import urllib.parse
import warnings

import flask
import pytest
import requests
import werkzeug.serving

CLIENT_ID = "kindling-test-client"
CLIENT_SECRET = "sso-client-secret-" + "7f3a9c2e5b"


class _QuietHandler(werkzeug.serving.WSGIRequestHandler):
    def log_request(self, *_args) -> None:
        pass


class OpenIdProvider:
    """The provider, on a thread of the test process: any client id and secret are accepted, and
    each person's claims are set by the test, including ones that override `aud`, `exp`,
    `iat` or `nonce` in the ID tokens it signs."""

    def __init__(self) -> None:
        # It imports Authlib's deprecated JOSE module, whose warning Authlib forces on ("always").
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import oidc_provider_mock

        app = oidc_provider_mock.app()

        @app.post("/test/rotate-key")
        def rotate_key():
            # The key type the provider itself makes (Authlib's).
            flask.g.oidc_provider_mock_storage.jwk = type(flask.g.oidc_provider_mock_storage.jwk).generate_key(
                is_private=True
            )
            return "", 204

        self.server = werkzeug.serving.make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def person(self, *, email: str, email_verified: bool | None = True, **claims) -> str:
        """A new person at the provider with these claims; their `sub`."""
        sub = "sub-" + secrets.token_hex(8)
        body = {"email": email, "name": "Sam Provider", **claims}
        if email_verified is not None:
            body["email_verified"] = email_verified
        response = requests.put(f"{self.url}/users/{sub}", json=body, timeout=10)
        assert response.status_code == 204, response.text
        return sub

    def sign_in(self, authorization_url: str, sub: str) -> str:
        """The person `sub` signs in at the provider: the callback URL (path and query) it sends the browser back to."""
        response = requests.post(authorization_url, data={"sub": sub}, allow_redirects=False, timeout=10)
        assert response.status_code == 302, response.text
        location = urllib.parse.urlsplit(response.headers["Location"])
        return f"{location.path}?{location.query}"

    def rotate_key(self) -> None:
        assert requests.post(f"{self.url}/test/rotate-key", timeout=10).status_code == 204

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def openid_provider():
    provider = OpenIdProvider()
    yield provider
    provider.stop()
