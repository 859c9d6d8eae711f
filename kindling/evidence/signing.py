"""The signer a process's settings name, made once: an embedded database's key is read (or made)
on first use, and a key of this process only stays the same for every request it serves."""

from __future__ import annotations

import functools

from kindling.config import ConfigError, Settings
from kindling.evidence.keys import Signer, make_signer, parse_private_key, parse_public_keys


def configured_keys(settings: Settings) -> tuple[bytes | None, tuple[bytes, ...]]:
    """The seed of EVIDENCE_SIGNING_KEY, if set, and the public keys of EVIDENCE_PREVIOUS_KEYS.

    Raises ConfigError, one line that never repeats a key, for a value that does not parse."""
    return _parsed(settings.evidence_signing_key, settings.evidence_previous_keys)


def signer_for(settings: Settings) -> Signer:
    """The signer of `settings`' evidence key, its previous keys and its database."""
    seed, previous = configured_keys(settings)
    return _signer(seed, previous, settings.database_url, settings.public_url)


@functools.cache
def _parsed(signing_key: str | None, previous_keys: str) -> tuple[bytes | None, tuple[bytes, ...]]:
    try:
        seed = None if signing_key is None else parse_private_key(signing_key)
    except ValueError as exc:
        raise ConfigError(f"EVIDENCE_SIGNING_KEY {exc}") from None
    try:
        return seed, parse_public_keys(previous_keys)
    except ValueError as exc:
        raise ConfigError(f"EVIDENCE_PREVIOUS_KEYS: {exc}") from None


@functools.cache
def _signer(seed: bytes | None, previous: tuple[bytes, ...], database_url: str, public_url: str | None) -> Signer:
    return make_signer(seed, previous, database_url, public_url)
