"""Hash-chained evidence events and signed bundles, checked without a server (docs/evidence.md)."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import hashlib
import json
import re
import typing
from collections.abc import Iterable

import orjson
import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from kindling.evidence import merkle, notes

GENESIS_HASH = "0" * 64
ALGORITHM = "Ed25519"
# Where `unsequenced_body` cuts: `prevHash` and `seq` as it fills them in, and the comma after.
_SEQUENCE_MARK = '"prevHash":"","seq":0,'
# The members an event is hashed over: everything but `hash` itself.
HASHED_MEMBERS = ("seq", "organizationId", "type", "subject", "actorId", "data", "occurredAt", "prevHash")


def timestamp(moment: dt.datetime) -> str:
    """An event time as it is hashed: UTC, microseconds, always the same length."""
    if moment.tzinfo is not dt.UTC:
        moment = moment.astimezone(dt.UTC)
    return moment.isoformat(timespec="microseconds")[:-6] + "Z"


_SAFE_INTEGER = 2**53 - 1


_NOT_PLAIN = object()


def _plain_form(value: typing.Any) -> typing.Any:
    """`value` in the form orjson writes exactly as RFC 8785 does, or `_NOT_PLAIN`.

    Plain are strings, booleans, null, safe integers, floats that print in plain decimals
    (1e-4 ≤ |x| < 1e16: there rfc8785 itself writes `repr(x)`), lists, and objects with ASCII keys.
    A whole float of at most 2**53 is plain too, as the integer RFC 8785 writes for it: the form
    is then a copy with that integer in its place (orjson would write `12.0`)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if -_SAFE_INTEGER <= value <= _SAFE_INTEGER else _NOT_PLAIN
    if kind is float:
        if value.is_integer():
            return int(value) if abs(value) <= _SAFE_INTEGER else _NOT_PLAIN
        return value if 1e-4 <= abs(value) < 1e16 else _NOT_PLAIN
    if kind is dict:
        form = value
        for key, item in value.items():
            if type(key) is not str or not key.isascii():
                return _NOT_PLAIN
            if type(item) is str:  # most members: no call
                continue
            part = _plain_form(item)
            if part is not item:
                if part is _NOT_PLAIN:
                    return _NOT_PLAIN
                if form is value:
                    form = dict(value)
                form[key] = part
        return form
    if kind is list:
        parts = [_plain_form(item) for item in value]
        if any(part is _NOT_PLAIN for part in parts):
            return _NOT_PLAIN
        return value if all(part is item for part, item in zip(parts, value, strict=True)) else parts
    return _NOT_PLAIN


def canonical(value: typing.Any) -> bytes:
    """RFC 8785 canonical JSON of `value`.

    rfc8785 writes it in pure Python, many times slower than orjson, and the chain of a million
    events is rehashed on every verification. For plain values (`_plain_form`) orjson's sorted compact
    output is the same bytes: ASCII keys sort alike by code point and by UTF-16 unit, integers and
    such floats print alike, and it escapes exactly the characters rfc8785 escapes, the same way.
    Everything else (very large or small floats, non-ASCII keys, lone surrogates) goes
    through rfc8785; tests/evidence/test_canonical.py compares the two.
    """
    form = _plain_form(value)
    quick = form is not _NOT_PLAIN and _orjson(form)
    if quick:
        return quick
    # RFC 8785 composes a value's form from its parts' forms, so a value with a few parts that are
    # not plain (a bundle of many events, say) is composed here, and rfc8785 writes only those parts.
    if type(value) is dict and all(type(name) is str for name in value):
        names = sorted(value, key=_utf16)
        return b"{" + b",".join(canonical(name) + b":" + canonical(value[name]) for name in names) + b"}"
    if type(value) is list:
        return b"[" + b",".join(canonical(item) for item in value) + b"]"
    return rfc8785.dumps(value)


def _utf16(name: str) -> bytes:
    """What RFC 8785 sorts member names by: their UTF-16 code units (a lone surrogate is refused
    when the name itself is written)."""
    return name.encode("utf-16-be", "surrogatepass")


def _orjson(value: object) -> bytes | None:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # a lone surrogate: rfc8785 refuses it with its own error
        return None


def event_body(
    seq: int,
    organization_id: str,
    type_: str,
    subject_kind: str,
    subject_id: str,
    actor_id: str | None,
    data: typing.Mapping[str, object],
    occurred_at: dt.datetime,
    prev_hash: str,
) -> dict:
    """An event's body, the `HASHED_MEMBERS` it is hashed over, from its stored columns."""
    return {
        "seq": seq,
        "organizationId": organization_id,
        "type": type_,
        "subject": {"kind": subject_kind, "id": subject_id},
        "actorId": actor_id,
        "data": data,
        "occurredAt": timestamp(occurred_at),
        "prevHash": prev_hash,
    }


def event_hash(event: dict) -> str:
    """Lowercase hex SHA-256 of the RFC 8785 canonical JSON of the event without its `hash`."""
    return body_hash({name: event[name] for name in HASHED_MEMBERS})


def body_hash(body: dict) -> str:
    """`event_hash` of an event's body: a dict of exactly `HASHED_MEMBERS`."""
    return hashlib.sha256(_body_text(body)).hexdigest()


def _body_text(body: dict) -> bytes:
    # As `canonical`, with the members around `data` checked by shape: verification runs it a million times.
    data = body["data"]
    form = _plain_form(data) if _plain_envelope(body) else _NOT_PLAIN
    quick = form is not _NOT_PLAIN and _orjson(body if form is data else {**body, "data": form})
    return quick or canonical(body)


def unsequenced_body(body: dict) -> tuple[str, str]:
    """The canonical text of an event's body (its `seq` and `prevHash` aside) as the two parts
    around `<prevHash>","seq":<seq>`, where the database splices in the event's place in the
    chain (kindling/evidence/log.py). The members sort as actorId, data, occurredAt,
    organizationId, prevHash, seq, subject, type: the last `"prevHash":"` is the body's own, as
    nothing after it but two plain strings could hold one."""
    text = _body_text({**body, "seq": 0, "prevHash": ""}).decode()
    at = text.rindex(_SEQUENCE_MARK)
    return text[: at + len('"prevHash":"')], text[at + len(_SEQUENCE_MARK) - 1 :]


def _plain_envelope(body: dict) -> bool:
    """Every member of an event but `data` is plain."""
    seq, subject, actor_id = body["seq"], body["subject"], body["actorId"]
    return (
        type(seq) is int
        and 0 <= seq <= _SAFE_INTEGER
        and type(subject) is dict
        and len(subject) == 2
        and type(subject.get("kind")) is str
        and type(subject.get("id")) is str
        and type(body["organizationId"]) is str
        and type(body["type"]) is str
        and type(body["occurredAt"]) is str
        and type(body["prevHash"]) is str
        and (actor_id is None or type(actor_id) is str)
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
    # The bundle's checkpoint, once verified (`verify_tree`); None for a bundle without one.
    tree: TreeCheck | None = None

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
                self._broken(
                    self.last_seq + 1, f"the chain ends at seq {self.last_seq}, before its head seq {head_seq}"
                )
            else:
                self._broken(head_seq, f"the chain does not end at its head seq {head_seq}")

    @property
    def intact(self) -> bool:
        return self.first_broken_seq is None

    def _broken(self, seq: int, fault: str) -> None:
        self.first_broken_seq, self.fault = seq, fault


class BundleError(ValueError):
    """A bundle that does not verify; the message is one line saying why."""


def strict_json(text: bytes) -> object:
    """JSON parsed with no room for two readings: a member name twice in one object (where readers
    disagree on which one wins), NaN or Infinity is refused with BundleError; malformed JSON
    raises ValueError."""

    def members(pairs: list[tuple[str, object]]) -> dict:
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            duplicated = next(name for name in names if names.count(name) > 1)
            raise BundleError(f"the member name {duplicated!r} appears twice in one object")
        return dict(pairs)

    def constant(name: str) -> object:
        raise BundleError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=members, parse_constant=constant)


# A bundle made before checkpoints were notes has no `checkpoint`; every bundle since has one.
BUNDLE_MEMBERS = frozenset({"organizationId", "prevHash", "events", "head", "signedAt", "signature"})
TREE_BUNDLE_MEMBERS = BUNDLE_MEMBERS | {"checkpoint"}
BUNDLE_CHECKPOINT_MEMBERS = frozenset({"note", "treeSize", "rootHash"})
EXCERPT_CHECKPOINT_MEMBERS = BUNDLE_CHECKPOINT_MEMBERS | {"prefix", "proof"}
# Bundles made since witnesses also say whether the quorum cosigned the checkpoint.
WITNESSED = "witnessed"
EVENT_MEMBERS = frozenset((*HASHED_MEMBERS, "hash"))
CHECKPOINT_MEMBERS = frozenset({"organizationId", "seq", "hash", "at", "signature"})
# A checkpoint as GET /api/evidence/checkpoints lists it since checkpoints are notes.
LISTED_CHECKPOINT_MEMBERS = CHECKPOINT_MEMBERS | {"note", "treeSize", "rootHash", "cosignatures"}
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def _members(value: object, names: frozenset, what: str) -> dict:
    """`value` as an object with exactly the members `names`; BundleError otherwise."""
    if not isinstance(value, dict):
        raise BundleError(f"{what} is not a JSON object")
    if value.keys() != names:
        extra, missing = sorted(value.keys() - names), sorted(names - value.keys())
        raise BundleError(
            f"{what} has {'members ' + ', '.join(extra) + ' it should not' if extra else ''}"
            f"{' and ' if extra and missing else ''}{'no ' + ', '.join(missing) if missing else ''}"
        )
    return value


def _seq(value: object, what: str) -> int:
    if type(value) is not int or not 0 <= value <= _SAFE_INTEGER:
        raise BundleError(f"{what} is not a whole number from 0 to 2^53 - 1")
    return value


def _hash(value: object, what: str) -> str:
    if type(value) is not str or not _HEX64.fullmatch(value):
        raise BundleError(f"{what} is not 64 lowercase hex digits")
    return value


def _check_event(event: object, organization_id: str, position: int) -> None:
    """An event has the nine members, each of its type, and belongs to the bundle's organization."""
    what = f"event {position + 1} of the file"
    event = _members(event, EVENT_MEMBERS, what)
    _seq(event["seq"], f"{what}: seq")
    _members(event["subject"], frozenset({"kind", "id"}), f"{what}: subject")
    if not all(type(event["subject"][name]) is str for name in ("kind", "id")):
        raise BundleError(f"{what}: subject kind and id must be strings")
    if type(event["type"]) is not str or not (event["actorId"] is None or type(event["actorId"]) is str):
        raise BundleError(f"{what}: type must be a string and actorId a string or null")
    if not isinstance(event["data"], dict):
        raise BundleError(f"{what}: data is not a JSON object")
    if type(event["occurredAt"]) is not str or not _TIME.fullmatch(event["occurredAt"]):
        raise BundleError(f"{what}: occurredAt is not YYYY-MM-DDTHH:MM:SS.ffffffZ")
    _hash(event["prevHash"], f"{what}: prevHash")
    _hash(event["hash"], f"{what}: hash")
    if event["organizationId"] != organization_id:
        raise BundleError(f"seq {event['seq']} belongs to another organization")


# The members of what a compliance export's signature is over, in the order its header names them.
EXPORT_STATEMENT_MEMBERS = ("organizationId", "framework", "period", "format", "evidenceHead", "digest")


def export_statement(
    *, organization_id: str, framework: str, period: str, file_format: str, head: dict, body: bytes
) -> dict:
    """What a compliance export's signature covers: the report's identity, its evidence head and
    the hex SHA-256 of `body`, so no part of it can be swapped for another's. `body` is a CSV's or
    PDF's exact bytes, and a JSON export's `json_digested` form."""
    return {
        "organizationId": organization_id,
        "framework": framework,
        "period": period,
        "format": file_format,
        "evidenceHead": {"seq": head["seq"], "hash": head["hash"]},
        "digest": hashlib.sha256(body).hexdigest(),
    }


def json_digested(document: dict) -> bytes:
    """What the digest of a JSON compliance export is over: the RFC 8785 canonical JSON of its
    body without `signature`, so the file carries its own signature and a reader's spacing does
    not matter."""
    return canonical({name: value for name, value in document.items() if name != "signature"})


def signed_bytes(bundle: dict) -> bytes:
    """What a bundle's signature is over: the RFC 8785 canonical JSON of the bundle without `signature`."""
    return canonical({name: value for name, value in bundle.items() if name != "signature"})


def _verify_signature(signature: object, message: bytes, keys: dict[str, bytes], what: str) -> str:
    """Check `signature` `{keyId, algorithm, value}` over `message` with the key it names; its key id."""
    signature = _members(signature, frozenset({"keyId", "algorithm", "value"}), f"{what}'s signature")
    if signature["algorithm"] != ALGORITHM:
        raise BundleError(f"unsupported signature algorithm {signature['algorithm']!r}")
    public_key = keys.get(signature["keyId"]) if type(signature["keyId"]) is str else None
    if public_key is None:
        raise BundleError(f"{what} is signed with key {signature['keyId']}, which is not among the given public keys")
    try:
        value = base64.b64decode(signature["value"], validate=True)
        Ed25519PublicKey.from_public_bytes(public_key).verify(value, message)
    except (binascii.Error, InvalidSignature, TypeError, ValueError):
        raise BundleError(f"the {what}'s signature does not verify with key {signature['keyId']}") from None
    return signature["keyId"]


def verify_bundle(bundle: object, public_keys: Iterable[bytes]) -> ChainCheck:
    """Check a bundle's members, chain, every hash, its head and its signature by one of `public_keys`.

    Raises BundleError naming the first fault; returns the chain check when all is well.
    """
    keys = {key_id(key): key for key in public_keys}
    if not keys:
        raise BundleError("no public key given: nothing can be vouched for")
    bundle = _members(
        bundle,
        TREE_BUNDLE_MEMBERS if isinstance(bundle, dict) and "checkpoint" in bundle else BUNDLE_MEMBERS,
        "the bundle",
    )
    if type(bundle["organizationId"]) is not str or type(bundle["signedAt"]) is not str:
        raise BundleError("the bundle's organizationId and signedAt must be strings")
    events = bundle["events"]
    if not isinstance(events, list):
        raise BundleError("the bundle's events are not a list")
    head = _members(bundle["head"], frozenset({"seq", "hash"}), "the bundle's head")
    _seq(head["seq"], "the head's seq")
    _hash(head["hash"], "the head's hash")
    # Events are checked in the order the file holds them: a file out of seq order is broken.
    for position, event in enumerate(events):
        _check_event(event, bundle["organizationId"], position)
    check = ChainCheck(
        prev_hash=_hash(bundle["prevHash"], "prevHash"), last_seq=(events[0]["seq"] - 1) if events else head["seq"]
    )
    for event in events:
        check.add(event)
    check.end(head["seq"], head["hash"])
    if not check.intact:
        raise BundleError(f"chain broken at seq {check.first_broken_seq}: {check.fault}")
    _verify_signature(bundle["signature"], signed_bytes(bundle), keys, "bundle")
    if "checkpoint" in bundle:
        check.tree = verify_tree(bundle, keys.values())
    return check


@dataclasses.dataclass
class TreeCheck:
    """A bundle's checkpoint, verified: the note, and the tree its events rebuild from `start`
    leaves (0 for a whole log, or the excerpt's prefix) as `frontier`, with the leaf hashes after."""

    checkpoint: notes.Checkpoint
    start: int
    prefix: list[bytes]
    leaves: list[bytes]

    def root_at(self, size: int) -> bytes:
        """The tree's root at `size`, from `start` to the bundle's head."""
        frontier = merkle.Frontier(self.start, self.prefix)
        for leaf in self.leaves[: size - self.start]:
            frontier.append(leaf)
        return frontier.root()


def _tree_hash(value: object, what: str) -> bytes:
    raw = base64.b64decode(value, validate=True) if type(value) is str and len(value) == 44 else b""
    if len(raw) != 32:
        raise BundleError(f"{what} is not the base64 of 32 bytes")
    return raw


def open_note(note: object, public_keys: Iterable[bytes], organization_id: str) -> notes.Checkpoint:
    """A checkpoint note of the organization's log signed by one of `public_keys`, under its origin
    as the key name; BundleError otherwise."""
    if type(note) is not str:
        raise BundleError("the checkpoint's note is not a string")
    try:
        text, signatures = notes.split(note)
        origin, _, _ = notes.parse_checkpoint_text(text)
        if not origin.endswith(f"/evidence/{organization_id}"):
            raise BundleError(f"the note's origin {origin} is not the log of organization {organization_id}")
        for key in public_keys:
            if any((name, line_id) == (origin, notes.key_id(origin, key)) for name, line_id, _ in signatures):
                return notes.open_checkpoint(note, origin, key)
    except notes.NoteError as exc:
        raise BundleError(str(exc)) from None
    raise BundleError("the note carries no signature by any of the given public keys")


def verify_tree(bundle: dict, public_keys: Iterable[bytes]) -> TreeCheck:
    """Check a (verified) bundle's checkpoint: its note's signature, and that the tree rebuilt from
    the bundle's events has the note's root (an excerpt's through its prefix and consistency
    proof). Raises BundleError."""
    events, head = bundle["events"], bundle["head"]
    first = events[0]["seq"] if events else head["seq"] + 1
    if not isinstance(bundle["checkpoint"], dict):
        raise BundleError("the bundle's checkpoint is not a JSON object")
    excerpt = first != 1 or head["seq"] != bundle["checkpoint"].get("treeSize")
    members = EXCERPT_CHECKPOINT_MEMBERS if excerpt else BUNDLE_CHECKPOINT_MEMBERS
    cp = _members(
        bundle["checkpoint"], members | {WITNESSED} if WITNESSED in bundle["checkpoint"] else members, "the checkpoint"
    )
    if type(cp.get(WITNESSED, False)) is not bool:
        raise BundleError("the checkpoint's witnessed is not true or false")
    size = _seq(cp["treeSize"], "the checkpoint's treeSize")
    root = _tree_hash(cp["rootHash"], "the checkpoint's rootHash")
    note = open_note(cp["note"], public_keys, bundle["organizationId"])
    if (note.size, note.root) != (size, root):
        raise BundleError("the checkpoint's note is not of its treeSize and rootHash")
    if size < head["seq"]:
        raise BundleError(f"the checkpoint's tree has {size} leaves, fewer than the bundle's head seq {head['seq']}")
    if excerpt and not (isinstance(cp["prefix"], list) and isinstance(cp["proof"], list)):
        raise BundleError("the checkpoint's prefix and proof are not lists")
    prefix = [_tree_hash(node, "a node of the checkpoint's prefix") for node in cp["prefix"]] if excerpt else []
    if len(prefix) != (first - 1).bit_count():
        raise BundleError(f"the checkpoint's prefix must hold {(first - 1).bit_count()} nodes for {first - 1} leaves")
    leaves = [merkle.leaf_hash(bytes.fromhex(event["hash"])) for event in events]
    check = TreeCheck(note, first - 1, prefix, leaves)
    at_head = check.root_at(head["seq"])
    if not excerpt:
        if at_head != root:
            raise BundleError("the tree of the bundle's events does not have the checkpoint's root")
        return check
    proof = [_tree_hash(node, "a node of the checkpoint's proof") for node in cp["proof"]]
    if not merkle.verify_consistency(head["seq"], size, at_head, root, proof):
        raise BundleError("the excerpt's events are not in the checkpoint's tree: its prefix or proof does not verify")
    return check


def verify_older_note(
    bundle: dict, tree: TreeCheck, note: str, public_keys: Iterable[bytes], proof: object = None
) -> notes.Checkpoint:
    """Check that the bundle's tree extends an older checkpoint note: by recomputing its root from
    the events where the bundle holds them, else by `proof`, a saved answer of
    `GET /api/evidence/proofs/consistency` from the note's size to the bundle checkpoint's. A log
    shortened or rewritten since fails here, whatever key signed it. Raises BundleError."""
    older = open_note(note, public_keys, bundle["organizationId"])
    newer = tree.checkpoint
    if older.origin != newer.origin:
        raise BundleError(f"the checkpoint is of {older.origin}, the bundle of {newer.origin}")
    if older.size > newer.size:
        raise BundleError(
            f"the bundle's tree has {newer.size} leaves, fewer than the checkpoint's {older.size}: the log was shortened"
        )
    if tree.start <= older.size <= bundle["head"]["seq"]:
        if tree.root_at(older.size) != older.root:
            raise BundleError(
                f"the bundle's tree at size {older.size} does not have the checkpoint's root: the log was rewritten"
            )
        return older
    if proof is None:
        raise BundleError(
            f"the excerpt does not hold the tree of {older.size} leaves: give --proof, the consistency proof "
            f"from {older.size} to {newer.size} (GET /api/evidence/proofs/consistency)"
        )
    _check_consistency(
        older, newer, proof, f"the bundle's tree of {newer.size} leaves does not extend the checkpoint's"
    )
    return older


def _check_consistency(older: notes.Checkpoint, newer: notes.Checkpoint, proof: object, refusal: str) -> None:
    """Check `proof`, a saved `GET /api/evidence/proofs/consistency` answer, from `older`'s tree to
    `newer`'s; BundleError (`refusal`, when the proof does not verify) otherwise."""
    proof = _members(proof, frozenset({"from", "to", "proof"}), "the consistency proof")
    if (proof["from"], proof["to"]) != (older.size, newer.size) or not isinstance(proof["proof"], list):
        raise BundleError(f"the consistency proof is not from {older.size} to {newer.size}")
    nodes = [_tree_hash(node, "a node of the consistency proof") for node in proof["proof"]]
    if not merkle.verify_consistency(older.size, newer.size, older.root, newer.root, nodes):
        raise BundleError(f"{refusal}: the log was rewritten")


def is_excerpt(bundle: dict) -> bool:
    """Whether the bundle starts after the log's first event rather than at the genesis."""
    first = bundle["events"][0]["seq"] if bundle["events"] else bundle["head"]["seq"] + 1
    return bundle["prevHash"] != GENESIS_HASH or first != 1


def checkpoint_statement(checkpoint: dict) -> bytes:
    """What a checkpoint's signature is over: the canonical JSON of `{organizationId, seq, hash, at}`."""
    return canonical({name: checkpoint[name] for name in ("organizationId", "seq", "hash", "at")})


def verify_checkpoint(bundle: dict, checkpoint: object, public_keys: Iterable[bytes]) -> None:
    """Check a signed checkpoint and that the (verified) bundle holds the chain it vouches for:
    a shortened or rewritten log fails here. Raises BundleError."""
    keys = {key_id(key): key for key in public_keys}
    listed = isinstance(checkpoint, dict) and "note" in checkpoint
    checkpoint = _members(checkpoint, LISTED_CHECKPOINT_MEMBERS if listed else CHECKPOINT_MEMBERS, "the checkpoint")
    seq, hash_ = _seq(checkpoint["seq"], "the checkpoint's seq"), _hash(checkpoint["hash"], "the checkpoint's hash")
    if type(checkpoint["at"]) is not str or checkpoint["organizationId"] != bundle["organizationId"]:
        raise BundleError("the checkpoint is of another organization, or its time is not a string")
    _verify_signature(checkpoint["signature"], checkpoint_statement(checkpoint), keys, "checkpoint")
    head = bundle["head"]
    if seq > head["seq"]:
        raise BundleError(
            f"the bundle ends at seq {head['seq']}, before the checkpoint's seq {seq}: the log was shortened"
        )
    events = bundle["events"]
    first = events[0]["seq"] if events else head["seq"] + 1
    if seq == 0:
        found = GENESIS_HASH
    elif seq == first - 1:
        found = bundle["prevHash"]
    elif seq >= first:
        found = events[seq - first]["hash"]
    else:
        raise BundleError(
            f"the excerpt starts at seq {first}, after the checkpoint's seq {seq}: give a bundle that holds it"
        )
    if found != hash_:
        raise BundleError(f"seq {seq} has hash {found}, not the checkpoint's {hash_}: the log was rewritten")


REPORT_SIGNATURE_MEMBERS = frozenset({"keyId", "algorithm", *EXPORT_STATEMENT_MEMBERS, "value"})


def verify_report_signature(document: object, public_keys: Iterable[bytes]) -> str:
    """Check the signature a JSON compliance export carries in its body, by one of `public_keys`:
    its digest is the file's (`json_digested`), its statement is signed, and it names the report
    the file holds. Raises BundleError for an unsigned, edited or wrongly signed file; returns the
    signing key's id."""
    keys = {key_id(key): key for key in public_keys}
    if not isinstance(document, dict) or "signature" not in document:
        raise BundleError("the report file is unsigned: a JSON compliance export carries its signature as `signature`")
    signed = _members(document["signature"], REPORT_SIGNATURE_MEMBERS, "the report's signature")
    digest = hashlib.sha256(json_digested(document)).hexdigest()
    if signed["digest"] != digest:
        raise BundleError(
            f"the report file was edited: its signature is over digest {signed['digest']}, the file's is {digest}"
        )
    statement = {name: signed[name] for name in EXPORT_STATEMENT_MEMBERS}
    signer = _verify_signature(
        {name: signed[name] for name in ("keyId", "algorithm", "value")}, canonical(statement), keys, "the report"
    )
    data = document.get("data")
    stated = {
        "organizationId": data.get("organizationId") if isinstance(data, dict) else None,
        "framework": data.get("framework") if isinstance(data, dict) else None,
        "period": data.get("period") if isinstance(data, dict) else None,
        "format": "json",
        "evidenceHead": data.get("evidenceHead") if isinstance(data, dict) else None,
    }
    for name, value in stated.items():
        if signed[name] != value:
            raise BundleError(f"the report's signature is for {name} {signed[name]!r}, the file holds {value!r}")
    return signer


RECEIPT_MEMBERS = frozenset({"organizationId", "subject", "events", "inclusionProofs", "checkpoint"})
RECEIPT_CHECKPOINT_MEMBERS = frozenset({"note", "treeSize", "rootHash", "cosignatures"})
INCLUSION_MEMBERS = frozenset({"leafIndex", "treeSize", "leafHash", "proof"})
RECEIPT_KINDS = frozenset({"act", "check_in", "donation"})


def verify_receipt(receipt: object, public_keys: Iterable[bytes]) -> notes.Checkpoint:
    """Check a receipt (`GET /api/evidence/receipts/{kind}/{id}`): its checkpoint note is signed by
    one of `public_keys`, each event is about the receipt's record and matches its hash, and each
    inclusion proof leads from the leaf of that hash to the note's root. Returns the note; raises
    BundleError naming the first fault."""
    receipt = _members(receipt, RECEIPT_MEMBERS, "the receipt")
    organization_id = receipt["organizationId"]
    if type(organization_id) is not str:
        raise BundleError("the receipt's organizationId is not a string")
    subject = _members(receipt["subject"], frozenset({"kind", "id"}), "the receipt's subject")
    if subject["kind"] not in RECEIPT_KINDS or type(subject["id"]) is not str:
        raise BundleError("the receipt's subject is not an act, check_in or donation with a string id")
    cp = _members(receipt["checkpoint"], RECEIPT_CHECKPOINT_MEMBERS, "the receipt's checkpoint")
    size = _seq(cp["treeSize"], "the checkpoint's treeSize")
    root = _tree_hash(cp["rootHash"], "the checkpoint's rootHash")
    note = open_note(cp["note"], public_keys, organization_id)
    if (note.size, note.root) != (size, root):
        raise BundleError("the checkpoint's note is not of its treeSize and rootHash")
    events, proofs = receipt["events"], receipt["inclusionProofs"]
    if not isinstance(events, list) or not isinstance(proofs, list) or len(events) != len(proofs):
        raise BundleError("the receipt's events and inclusionProofs are not lists of the same length")
    last = 0
    for position, (event, proof) in enumerate(zip(events, proofs, strict=True)):
        _check_event(event, organization_id, position)
        seq = event["seq"]
        if event["subject"] != subject:
            raise BundleError(f"seq {seq} is about another record than the receipt's")
        if seq <= last:
            raise BundleError(f"seq {seq} is out of order: a receipt's events are in seq order")
        last = seq
        if event_hash(event) != event["hash"]:
            raise BundleError(f"seq {seq}: the event's content does not match its hash")
        proof = _members(proof, INCLUSION_MEMBERS, f"the inclusion proof of seq {seq}")
        leaf = merkle.leaf_hash(bytes.fromhex(event["hash"]))
        if (proof["leafIndex"], proof["treeSize"]) != (seq - 1, size) or not isinstance(proof["proof"], list):
            raise BundleError(f"the inclusion proof of seq {seq} is not of leaf {seq - 1} in a tree of {size} leaves")
        if _tree_hash(proof["leafHash"], f"the leaf hash of seq {seq}") != leaf:
            raise BundleError(f"the leaf hash of seq {seq} is not SHA-256(0x00 ‖ its hash)")
        path = [_tree_hash(node, f"a node of the inclusion proof of seq {seq}") for node in proof["proof"]]
        if not merkle.verify_inclusion(seq - 1, size, leaf, path, root):
            raise BundleError(f"seq {seq} is not in the checkpoint's tree: its inclusion proof does not verify")
    return note


def verify_receipt_later(
    receipt: dict, held: notes.Checkpoint, newer: str, public_keys: Iterable[bytes], proof: object
) -> notes.Checkpoint:
    """Check that a newer checkpoint note still holds a (verified) receipt's events: it is signed,
    of the same log, and `proof` (a saved `GET /api/evidence/proofs/consistency` from the receipt's
    tree size to the note's) shows its tree extends the receipt's. Raises BundleError."""
    later = open_note(newer, public_keys, receipt["organizationId"])
    if later.origin != held.origin:
        raise BundleError(f"the checkpoint is of {later.origin}, the receipt of {held.origin}")
    if later.size < held.size:
        raise BundleError(f"the checkpoint's tree has {later.size} leaves, fewer than the receipt's {held.size}")
    if later.size == held.size:
        if later.root != held.root:
            raise BundleError(f"the checkpoint's tree of {later.size} leaves has another root: the log was rewritten")
        return later
    if proof is None:
        raise BundleError(
            f"give --proof, the consistency proof from {held.size} to {later.size} (GET /api/evidence/proofs/consistency)"
        )
    _check_consistency(
        held, later, proof, f"the checkpoint's tree of {later.size} leaves does not extend the receipt's"
    )
    return later
