"""Hash-chained evidence events and signed bundles, checked without a server (docs/evidence.md)."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import hashlib
import json
import typing
from collections.abc import Iterable

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

GENESIS_HASH = "0" * 64
ALGORITHM = "Ed25519"
# The members an event is hashed over: everything but `hash` itself.
HASHED_MEMBERS = ("seq", "organizationId", "type", "subject", "actorId", "data", "occurredAt", "prevHash")


def timestamp(moment: dt.datetime) -> str:
    """An event time as it is hashed: UTC, microseconds, always the same length."""
    return moment.astimezone(dt.UTC).isoformat(timespec="microseconds")[:-6] + "Z"


_SAFE_INTEGER = 2**53 - 1


def _plain(value: object) -> bool:
    """Holds only what the standard library's JSON writes exactly as RFC 8785 does: strings,
    booleans, null, safe integers, floats that print in plain decimals and are not whole
    (1e-4 ≤ |x| < 1e16: there rfc8785 itself writes `repr(x)`), lists, and objects with ASCII keys."""
    stack: list[typing.Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -_SAFE_INTEGER <= item <= _SAFE_INTEGER:
                return False
        elif kind is float:
            if not 1e-4 <= abs(item) < 1e16 or item.is_integer():
                return False
        elif kind is dict:
            for key in item:
                if type(key) is not str or not key.isascii():
                    return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        else:
            return False
    return True


def canonical(value: typing.Any) -> bytes:
    """RFC 8785 canonical JSON of `value`.

    rfc8785 writes it in pure Python, several times slower than the standard library, and the
    chain of a million events is rehashed on every verification. For plain values (`_plain`) the
    standard library's output is the same bytes: ASCII keys sort alike by code point and by UTF-16
    unit, integers and such floats print alike, and it escapes exactly the characters rfc8785
    escapes, the same way. Everything else (whole or very large or small floats, non-ASCII keys)
    goes through rfc8785; tests/evidence/test_canonical.py compares the two.
    """
    return (_plain(value) and _standard_json(value)) or rfc8785.dumps(value)


def _standard_json(value: object) -> bytes | None:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: rfc8785 refuses it with its own error
        return None


def event_hash(event: dict) -> str:
    """Lowercase hex SHA-256 of the RFC 8785 canonical JSON of the event without its `hash`."""
    body = {name: event[name] for name in HASHED_MEMBERS}
    # As `canonical`, with the members around `data` checked by shape: verification runs it a million times.
    quick = _plain_envelope(body) and _plain(body["data"]) and _standard_json(body)
    return hashlib.sha256(quick or rfc8785.dumps(body)).hexdigest()


def _plain_envelope(body: dict) -> bool:
    """Every member of an event but `data` is plain."""
    seq, subject = body["seq"], body["subject"]
    return (
        type(seq) is int
        and 0 <= seq <= _SAFE_INTEGER
        and type(subject) is dict
        and subject.keys() == {"kind", "id"}
        and all(type(value) is str for value in subject.values())
        and all(type(body[name]) is str for name in ("organizationId", "type", "occurredAt", "prevHash"))
        and (body["actorId"] is None or type(body["actorId"]) is str)
    )


def key_id(public_key: bytes) -> str:
    """A public key's id: the first 16 hex characters of the SHA-256 of its 32 raw bytes."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def decode_public_key(text: str) -> bytes:
    """The 32 raw bytes of a base64 public key; ValueError for anything else."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except binascii.Error:
        raise ValueError("a public key must be base64") from None
    if len(raw) != 32:
        raise ValueError(f"an Ed25519 public key is 32 bytes, this one is {len(raw)}")
    return raw


@dataclasses.dataclass
class ChainCheck:
    """Walks events in order and finds the first one that breaks the chain."""

    prev_hash: str = GENESIS_HASH
    last_seq: int = 0
    events: int = 0
    first_broken_seq: int | None = None
    fault: str | None = None

    def add(self, event: dict) -> None:
        """Check the next event; after the first fault, only count."""
        self.events += 1
        if self.first_broken_seq is not None:
            return
        expected = self.last_seq + 1
        if event["seq"] != expected:
            self._broken(expected, f"seq {expected} is missing or out of order (found seq {event['seq']})")
        elif event["prevHash"] != self.prev_hash:
            self._broken(expected, f"seq {expected}: prevHash does not match the hash of the event before it")
        elif event_hash(event) != event["hash"]:
            self._broken(expected, f"seq {expected}: the event's content does not match its hash")
        else:
            self.last_seq, self.prev_hash = expected, event["hash"]

    def end(self, head_seq: int, head_hash: str) -> None:
        """Compare where the chain ended with the head it should have reached."""
        if self.first_broken_seq is None and (self.last_seq, self.prev_hash) != (head_seq, head_hash):
            if self.last_seq < head_seq:
                self._broken(self.last_seq + 1, f"the chain ends at seq {self.last_seq}, before its head seq {head_seq}")
            else:
                self._broken(head_seq, f"the chain does not end at its head seq {head_seq}")

    @property
    def intact(self) -> bool:
        return self.first_broken_seq is None

    def _broken(self, seq: int, fault: str) -> None:
        self.first_broken_seq, self.fault = seq, fault


class BundleError(ValueError):
    """A bundle that does not verify; the message is one line saying why."""


def signed_bytes(bundle: dict) -> bytes:
    """What a bundle's signature is over: the RFC 8785 canonical JSON of the bundle without `signature`."""
    return canonical({name: value for name, value in bundle.items() if name != "signature"})


def verify_bundle(bundle: dict, public_keys: Iterable[bytes] = ()) -> ChainCheck:
    """Check a bundle's chain, every hash, its head and, given public keys, its signature.

    Raises BundleError naming the first fault; returns the chain check when all is well.
    """
    try:
        events = bundle["events"]
        head = bundle["head"]
        signature = bundle["signature"]
        if not isinstance(signature, dict) or not isinstance(events, list):
            raise TypeError("signature must be an object and events a list")
        check = ChainCheck(prev_hash=bundle["prevHash"], last_seq=(events[0]["seq"] - 1) if events else head["seq"])
        for event in events:
            if event["organizationId"] != bundle["organizationId"]:
                raise BundleError(f"seq {event['seq']} belongs to another organization")
            check.add(event)
        check.end(head["seq"], head["hash"])
    except (KeyError, TypeError, IndexError) as exc:
        raise BundleError(f"not an evidence bundle: {type(exc).__name__} {exc}") from None
    if not check.intact:
        raise BundleError(f"chain broken at seq {check.first_broken_seq}: {check.fault}")
    keys = {key_id(key): key for key in public_keys}
    if keys:
        if signature.get("algorithm") != ALGORITHM:
            raise BundleError(f"unsupported signature algorithm {signature.get('algorithm')!r}")
        public_key = keys.get(str(signature.get("keyId")))
        if public_key is None:
            raise BundleError(f"signed with key {signature.get('keyId')}, which is not among the given public keys")
        try:
            value = base64.b64decode(signature["value"], validate=True)
            Ed25519PublicKey.from_public_bytes(public_key).verify(value, signed_bytes(bundle))
        except (binascii.Error, InvalidSignature, KeyError, TypeError):
            raise BundleError(f"the signature does not verify with key {signature.get('keyId')}") from None
    return check
