"""The Ed25519 key evidence is signed with, and the keys it was signed with before."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import logging
import os
import pathlib
import tempfile

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kindling.evidence import notes
from kindling.evidence.chain import ALGORITHM, canonical, decode_public_key, key_id

log = logging.getLogger(__name__)


def parse_private_key(text: str) -> bytes:
    """The 32-byte seed of an Ed25519 private key given as PEM (PKCS#8) or as a base64 seed.

    Raises ValueError with a short reason that never repeats the key."""
    text = text.strip()
    if text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_private_key(text.replace("\\n", "\n").encode(), password=None)
        except (ValueError, TypeError):
            raise ValueError("is not an unencrypted PEM private key") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("is a PEM key, but not an Ed25519 one")
        return key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
    try:
        seed = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError("must be a PEM Ed25519 private key or a base64 32-byte seed") from None
    if len(seed) != 32:
        raise ValueError(f"must be a base64 32-byte seed, this one decodes to {len(seed)} bytes")
    return seed


def parse_public_keys(text: str) -> tuple[bytes, ...]:
    """Base64 raw public keys separated by commas or white space."""
    return tuple(decode_public_key(part) for part in text.replace(",", " ").split())


@dataclasses.dataclass(frozen=True)
class Signer:
    """Signs with the current key; lists it with the keys used before it."""

    private_key: Ed25519PrivateKey
    previous_public_keys: tuple[bytes, ...] = ()
    # PUBLIC_URL, whose host names each log in its checkpoints' notes (`notes.origin`).
    public_url: str | None = None

    @property
    def public_key(self) -> bytes:
        return self.private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def key_id(self) -> str:
        return key_id(self.public_key)

    def sign(self, data: bytes) -> str:
        """The base64 Ed25519 signature of `data`."""
        return base64.b64encode(self.private_key.sign(data)).decode()

    def note_origin(self, organization_id: str) -> str:
        """The origin of the organization's checkpoints, and the key name that signs them."""
        return notes.origin(self.public_url, organization_id)

    def sign_note(self, text: str, name: str) -> str:
        """A signed note: `text`, a blank line and this key's signature line as `name` (c2sp.org/signed-note)."""
        signature = self.private_key.sign(text.encode())
        return text + "\n" + notes.signature_line(name, self.public_key, signature)

    def sign_statement(self, statement: dict) -> dict:
        """The signature of a compliance export (`export_statement`): the key, the statement's
        members and the signature of its canonical JSON, as a JSON export carries it in its body."""
        return {
            "keyId": self.key_id,
            "algorithm": ALGORITHM,
            **statement,
            "value": self.sign(canonical(statement)),
        }

    @staticmethod
    def signature_header(signed: dict) -> str:
        """`Kindling-Signature` of a compliance export: the members of a `sign_statement` answer."""
        head = signed["evidenceHead"]
        return (
            f"keyId={signed['keyId']}, algorithm={signed['algorithm']}, organizationId={signed['organizationId']}, "
            f"framework={signed['framework']}, period={signed['period']}, format={signed['format']}, "
            f"evidenceHead={head['seq']}:{head['hash']}, digest=sha256:{signed['digest']}, value={signed['value']}"
        )

    def listed_keys(self) -> list[dict]:
        """The current key first, then every previous one (so older signatures still verify)."""
        keys = [self.public_key, *(key for key in self.previous_public_keys if key != self.public_key)]
        return [
            {"keyId": key_id(key), "algorithm": ALGORITHM, "publicKey": base64.b64encode(key).decode()} for key in keys
        ]


def make_signer(
    seed: bytes | None, previous_public_keys: tuple[bytes, ...], database_url: str, public_url: str | None = None
) -> Signer:
    """The signer for the configured seed; without one, the key kept beside an embedded database
    (made on first start), or for PostgreSQL outside production a key for this process only."""
    if seed is not None:
        private_key = Ed25519PrivateKey.from_private_bytes(seed)
    else:
        path = embedded_key_path(database_url)
        if path is not None:
            private_key = kept_key(path)
        else:
            log.warning("EVIDENCE_SIGNING_KEY is not set: evidence is signed with a key that lasts this process only")
            private_key = Ed25519PrivateKey.generate()
    return Signer(private_key, previous_public_keys, public_url)


def embedded_key_path(database_url: str) -> pathlib.Path | None:
    """Where an embedded database keeps its signing key: beside the database file."""
    prefix = "sqlite:///"
    if not database_url.startswith(prefix) or database_url[len(prefix) :] in ("", ":memory:"):
        return None
    database = pathlib.Path(database_url[len(prefix) :].split("?", 1)[0])
    return database.with_name(database.name + ".evidence-key.pem")


def kept_key(path: pathlib.Path) -> Ed25519PrivateKey:
    try:
        return Ed25519PrivateKey.from_private_bytes(parse_private_key(path.read_text()))
    except FileNotFoundError:
        pass
    private_key = Ed25519PrivateKey.generate()
    pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # Written whole under another name (mkstemp: mode 0600), then linked into place: of two
    # processes starting together the first link wins, and no one reads a half-written key.
    descriptor, written = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
        os.link(written, path)
    except FileExistsError:
        return Ed25519PrivateKey.from_private_bytes(parse_private_key(path.read_text()))
    finally:
        os.unlink(written)
    log.info("made the evidence signing key %s", path)
    return private_key
