"""Witnesses' cosignatures of checkpoints (c2sp.org/tlog-cosignature, the Ed25519 `cosignature/v1` kind).

Standard library and `cryptography` only, so a verifier can be read on its own. A cosignature is
a signature line `— <witness name> base64(key id ‖ timestamp ‖ signature)`: the key id is
SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4], the timestamp 8 bytes big-endian (POSIX seconds), and
the Ed25519 signature is over `cosignature/v1\\ntime <timestamp>\\n` followed by the checkpoint's text.
"""

from __future__ import annotations

import base64
import dataclasses

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kindling.evidence import notes

COSIGNATURE_V1 = 0x04
MAX_TIMESTAMP = 2**63 - 1


@dataclasses.dataclass(frozen=True)
class Verifier:
    """A witness's key, read from its vkey `name+hex(key id)+base64(0x04 ‖ Ed25519 public key)`."""

    name: str
    key_id: bytes
    public_key: bytes

    @property
    def vkey(self) -> str:
        return vkey(self.name, self.public_key)


def key_id(name: str, public_key: bytes) -> bytes:
    return notes.key_id(name, public_key, COSIGNATURE_V1)


def vkey(name: str, public_key: bytes) -> str:
    """The vkey of a witness's Ed25519 cosigning key."""
    encoded = base64.b64encode(bytes([COSIGNATURE_V1]) + public_key).decode()
    return f"{name}+{key_id(name, public_key).hex()}+{encoded}"


def parse_vkey(text: str) -> Verifier:
    """The witness key a vkey names; ValueError, with a one-line reason, unless it is an Ed25519
    cosignature/v1 key (type 0x04) whose key id is the one computed from its name and key."""
    name, public_key = notes.parse_vkey(text, COSIGNATURE_V1)
    return Verifier(name, key_id(name, public_key), public_key)


def signed_message(text: str, timestamp: int) -> bytes:
    """What a cosignature signs: the header line, the timestamp line, then the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def cosign(private_key: Ed25519PrivateKey, name: str, text: str, timestamp: int) -> str:
    """The cosignature line of a witness's key over a checkpoint's text, at `timestamp`."""
    public_key = private_key.public_key().public_bytes_raw()
    signature = private_key.sign(signed_message(text, timestamp))
    raw = key_id(name, public_key) + timestamp.to_bytes(8, "big") + signature
    return f"{notes.DASH}{name} {base64.b64encode(raw).decode()}\n"


def verify(verifier: Verifier, text: str, name: str, key_id_: bytes, signature: bytes) -> int | None:
    """The timestamp of a signature line `(name, key id, signature)` of a checkpoint's text when it is
    a valid cosignature by `verifier`; None when the line is another key's or does not verify."""
    if (name, key_id_) != (verifier.name, verifier.key_id) or len(signature) != 72:
        return None
    timestamp = int.from_bytes(signature[:8], "big")
    if timestamp > MAX_TIMESTAMP:
        return None
    try:
        Ed25519PublicKey.from_public_bytes(verifier.public_key).verify(signature[8:], signed_message(text, timestamp))
    except InvalidSignature:
        return None
    return timestamp


def cosigned_by(note: str, verifiers: list[Verifier]) -> dict[str, tuple[str, int]]:
    """The witnesses among `verifiers` that validly cosigned the note, by vkey: (signature line,
    timestamp). NoteError when the note is malformed."""
    text, lines = notes.split(note)
    found: dict[str, tuple[str, int]] = {}
    for name, line_id, signature in lines:
        for verifier in verifiers:
            timestamp = verify(verifier, text, name, line_id, signature)
            if timestamp is not None and verifier.vkey not in found:
                line = f"{notes.DASH}{name} {base64.b64encode(line_id + signature).decode()}\n"
                found[verifier.vkey] = (line, timestamp)
    return found
