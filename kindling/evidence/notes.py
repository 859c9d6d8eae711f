"""Checkpoints as C2SP signed notes (c2sp.org/signed-note, c2sp.org/tlog-checkpoint), made and checked.

Standard library and `cryptography` only, so a verifier can be read on its own. A checkpoint's
text is three lines: the origin, the tree size in decimal and the base64 root hash. A blank line
follows, then one signature line per key: `— <key name> base64(key id ‖ signature)`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

ED25519 = 0x01
DASH = "\u2014 "
_NAME = re.compile(r"[^\s+]+")
_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")
# Limits of a note read: at most this many signature lines (the spec asks at least 16).
MAX_SIGNATURES = 64


class NoteError(ValueError):
    """A note that is malformed or whose signature does not verify; the message is one line."""


def origin(public_url: str | None, organization_id: str) -> str:
    """The log's origin and key name: `<host[:port] of PUBLIC_URL>/evidence/<organizationId>`."""
    host = "kindling.local"
    if public_url:
        host = public_url.split("://", 1)[1].split("/", 1)[0].lower()
    return f"{host}/evidence/{organization_id}"


def key_id(name: str, public_key: bytes, kind: int = ED25519) -> bytes:
    """The 4-byte key id: SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public_key).digest()[:4]


def vkey(name: str, public_key: bytes) -> str:
    """The verifier key `name+keyid+base64(0x01 ‖ key)` that note tools take (hex key id)."""
    return f"{name}+{key_id(name, public_key).hex()}+{base64.b64encode(bytes([ED25519]) + public_key).decode()}"


def parse_vkey(text: str, kind: int = ED25519) -> tuple[str, bytes]:
    """The key name and Ed25519 public key of a verifier key `name+keyid+base64(kind ‖ key)` (kind
    0x01 for note signatures); ValueError, with a one-line reason, unless its key id is the one
    computed from them."""
    parts = text.split("+", 2)  # base64 has '+' too; the name has none
    if len(parts) != 3 or not _NAME.fullmatch(parts[0]) or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise ValueError("a verifier key is name+keyid+base64: a name without spaces or '+', 8 lowercase hex digits")
    try:
        raw = base64.b64decode(parts[2], validate=True)
    except binascii.Error:
        raise ValueError("the verifier key's last part is not base64") from None
    if len(raw) != 33 or raw[0] != kind:
        raise ValueError(f"the verifier key is not of type 0x{kind:02x} with a 32-byte Ed25519 key")
    if key_id(parts[0], raw[1:], kind).hex() != parts[1]:
        raise ValueError(f"the verifier key's key id is not SHA-256(name ‖ 0x0A ‖ 0x{kind:02x} ‖ key)[:4]")
    return parts[0], raw[1:]


def checkpoint_text(origin_: str, size: int, root: bytes) -> str:
    """The text of a checkpoint note: origin, size and base64 root, each ending in a newline."""
    return f"{origin_}\n{size}\n{base64.b64encode(root).decode()}\n"


def signature_line(name: str, public_key: bytes, signature: bytes) -> str:
    return f"{DASH}{name} {base64.b64encode(key_id(name, public_key) + signature).decode()}\n"


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """A checkpoint read from a note whose log signature verified."""

    origin: str
    size: int
    root: bytes
    text: str
    # Every signature line as (key name, key id, signature), the verified one among them.
    signatures: tuple[tuple[str, bytes, bytes], ...]


def split(note: str) -> tuple[str, list[tuple[str, bytes, bytes]]]:
    """A note's text and its signature lines as (name, key id, signature); NoteError when malformed."""
    if any(ord(char) < 0x20 and char != "\n" for char in note):
        raise NoteError("the note holds a control character other than newline")
    cut = note.rfind("\n\n")
    if cut < 0 or not note.endswith("\n"):
        raise NoteError("the note has no blank line before its signatures, or does not end in a newline")
    text, lines = note[: cut + 1], note[cut + 2 :].splitlines()
    if not lines or len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note carries 1 to {MAX_SIGNATURES} signature lines")
    signatures = []
    for line in lines:
        parts = line[len(DASH) :].split(" ") if line.startswith(DASH) else []
        if len(parts) != 2 or not _NAME.fullmatch(parts[0]):
            raise NoteError(f"{line!r} is not a signature line (em dash, space, key name, space, base64)")
        try:
            raw = base64.b64decode(parts[1], validate=True)
        except binascii.Error:
            raise NoteError(f"the signature of {parts[0]} is not base64") from None
        if len(raw) < 5:
            raise NoteError(f"the signature of {parts[0]} is too short")
        signatures.append((parts[0], raw[:4], raw[4:]))
    return text, signatures


def parse_checkpoint_text(text: str) -> tuple[str, int, bytes]:
    """The origin, size and root of a checkpoint's text; NoteError when it is not one."""
    lines = text.split("\n")[:-1]
    if len(lines) < 3 or not lines[0] or not _SIZE.fullmatch(lines[1]):
        raise NoteError("a checkpoint's text is its origin, its size in decimal and its base64 root hash")
    try:
        root = base64.b64decode(lines[2], validate=True)
    except binascii.Error:
        root = b""
    if len(root) != 32 or base64.b64encode(root).decode() != lines[2]:
        raise NoteError("a checkpoint's root hash is the base64 of 32 bytes")
    return lines[0], int(lines[1]), root


def open_checkpoint(note: str, name: str, public_key: bytes) -> Checkpoint:
    """Read a checkpoint note and verify its signature by the key `name` with `public_key`;
    NoteError when there is none by that key or it does not verify."""
    text, signatures = split(note)
    wanted = key_id(name, public_key)
    ours = [signature for line_name, line_id, signature in signatures if (line_name, line_id) == (name, wanted)]
    if not ours:
        raise NoteError(f"the note carries no signature by {name} with key id {wanted.hex()}")
    try:
        for signature in ours:
            Ed25519PublicKey.from_public_bytes(public_key).verify(signature, text.encode())
    except InvalidSignature:
        raise NoteError(f"the note's signature by {name} does not verify") from None
    origin_, size, root = parse_checkpoint_text(text)
    if origin_ != name:
        raise NoteError(f"the checkpoint's origin {origin_} is not its key name {name}")
    return Checkpoint(origin_, size, root, text, tuple(signatures))
