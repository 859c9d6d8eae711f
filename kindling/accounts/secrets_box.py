"""Secrets Kindling must read back (an SSO client secret, a Slack bot token), encrypted at rest under a key derived from SECRET_KEY."""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = "v1."
# Distinct from every other use of SECRET_KEY, and per kind of secret: the same key never seals two kinds.
SSO_CLIENT_SECRET = b"kindling sso client secret v1"
SLACK_BOT_TOKEN = b"kindling slack bot token v1"


class UnreadableSecret(ValueError):
    """Stored under another SECRET_KEY, or altered."""


def _aead(secret_key: str, purpose: bytes) -> AESGCM:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(secret_key.encode())
    return AESGCM(key)


def seal(secret_key: str, plaintext: str, *, context: str, purpose: bytes = SSO_CLIENT_SECRET) -> str:
    """AES-256-GCM of `plaintext`, bound to `context` (the owning record's id) so it cannot be moved to another."""
    nonce = os.urandom(12)
    sealed = _aead(secret_key, purpose).encrypt(nonce, plaintext.encode(), context.encode())
    return VERSION + base64.urlsafe_b64encode(nonce + sealed).decode()


def open_sealed(secret_key: str, sealed: str, *, context: str, purpose: bytes = SSO_CLIENT_SECRET) -> str:
    """The plaintext `seal` sealed with the same key and context."""
    if not sealed.startswith(VERSION):
        raise UnreadableSecret("unknown format")
    raw = base64.urlsafe_b64decode(sealed.removeprefix(VERSION))
    try:
        return _aead(secret_key, purpose).decrypt(raw[:12], raw[12:], context.encode()).decode()
    except InvalidTag:
        raise UnreadableSecret("sealed under another SECRET_KEY, or altered") from None
