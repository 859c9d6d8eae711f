"""The signer a process's settings name, made once: an embedded database's key is read (or made)
on first use, and a key of this process only stays the same for every request it serves."""

from __future__ import annotations

import functools

from kindling.config import Settings
from kindling.evidence.keys import Signer, make_signer


def signer_for(settings: Settings) -> Signer:
    """The signer of `settings`' evidence key, its previous keys and its database."""
    return _signer(
        settings.evidence_signing_key, settings.evidence_previous_keys, settings.database_url, settings.public_url
    )


@functools.cache
def _signer(seed: bytes | None, previous: tuple[bytes, ...], database_url: str, public_url: str | None) -> Signer:
    return make_signer(seed, previous, database_url, public_url)
