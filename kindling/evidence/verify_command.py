"""`kindling evidence verify`: checks a bundle with no server and no database, and says no unless it is sure."""

from __future__ import annotations

import sys
from typing import Any

from kindling.evidence import cosignatures
from kindling.evidence.chain import (
    BundleError,
    ChainCheck,
    decode_public_key,
    is_excerpt,
    key_id,
    strict_json,
    verify_bundle,
    verify_checkpoint,
    verify_older_note,
    verify_receipt,
    verify_receipt_later,
    verify_report_signature,
)

# Exit codes: verified; not verified; nothing checked (bad input, or no key to vouch with).
VERIFIED, NOT_VERIFIED, UNUSABLE = 0, 1, 2


class Unusable(Exception):
    """Input the command cannot work with; the message is one line."""


def verify_bundle_file(
    path: str,
    public_keys: list[str],
    *,
    keys_file: str | None = None,
    checkpoint: str | None = None,
    report: str | None = None,
    proof: str | None = None,
    witnesses: tuple[str, ...] = (),
    quorum: int | None = None,
) -> int:
    """Print what the bundle holds and whether it verifies; 0 when it does, 1 when not, 2 when nothing could be checked."""
    try:
        keys = [decode_public_key(key) for key in public_keys] + (_keys_from_file(keys_file) if keys_file else [])
        if not keys:
            raise Unusable("give --public-key or --keys FILE: without a key nothing can be vouched for")
        verifiers = _witnesses(witnesses)
        # Every witness given must cosign unless --quorum says how many.
        needed = len(verifiers) if quorum is None else quorum
        if quorum is not None and not 1 <= quorum <= len(verifiers):
            raise Unusable(f"--quorum must be 1 to the number of --witness keys given ({len(verifiers)})")
        bundle = _read(path)
        extra = {name: _read(file) for name, file in (("report", report), ("proof", proof)) if file}
        if checkpoint:
            extra["checkpoint"] = _read_checkpoint(checkpoint)
    except (Unusable, ValueError) as exc:  # a BundleError is JSON with two readings
        return _unread(exc)
    try:
        check = verify_bundle(bundle, keys)
        if isinstance(extra.get("checkpoint"), str):
            if check.tree is None:
                raise BundleError("the bundle has no checkpoint of its tree: export it again to check a note")
            verify_older_note(bundle, check.tree, extra["checkpoint"], keys, extra.get("proof"))
        elif "checkpoint" in extra:
            verify_checkpoint(bundle, extra["checkpoint"], keys)
        if "report" in extra:
            from kindling.evidence.report_check import check_report

            # The file's own signature first: figures nobody signed, or edited since, prove nothing.
            verify_report_signature(extra["report"], keys)
            check_report(bundle, extra["report"])
        cosigned = _check_cosignatures(bundle, check, verifiers, needed) if verifiers else []
    except BundleError as exc:
        print(f"NOT VERIFIED: {exc}", file=sys.stderr)
        return NOT_VERIFIED
    head, events = bundle["head"], bundle["events"]
    if is_excerpt(bundle):
        first = events[0]["seq"] if events else head["seq"] + 1
        held = (
            f"an EXCERPT of {check.events} events, seq {first} to {head['seq']}, chained from hash {bundle['prevHash']}"
        )
    else:
        held = f"the whole log up to seq {head['seq']}, {check.events} events"
    if check.tree is not None:
        tree = f"; its tree of {check.tree.checkpoint.size} leaves has the root of its checkpoint note, signed"
    else:
        tree = "; no checkpoint of its tree (a bundle made before checkpoints were notes)"
    if verifiers:
        tree += f"; cosigned by {len(cosigned)} of {len(verifiers)} witnesses ({', '.join(cosigned)}), quorum {needed}"
    also = tree + "".join(
        f"; {what} verified"
        for what, given in (("checkpoint", checkpoint), ("report's signature", report), ("report's figures", report))
        if given
    )
    print(
        f"verified: {held} of organization {bundle['organizationId']}, head {head['seq']}:{head['hash']}; "
        f"signature by key {bundle['signature']['keyId']} verified{also}"
    )
    return VERIFIED


def verify_receipt_file(
    path: str,
    public_keys: list[str],
    *,
    keys_file: str | None = None,
    checkpoint: str | None = None,
    proof: str | None = None,
) -> int:
    """Print what the receipt proves and whether it verifies, with a newer checkpoint when given;
    0 when it does, 1 when not, 2 when nothing could be checked."""
    try:
        keys = [decode_public_key(key) for key in public_keys] + (_keys_from_file(keys_file) if keys_file else [])
        if not keys:
            raise Unusable("give --public-key or --keys FILE: without a key nothing can be vouched for")
        receipt = _read(path)
        newer = _read_checkpoint(checkpoint) if checkpoint else None
        if newer is not None and type(newer) is not str:
            raise Unusable(f"{checkpoint} holds no signed note: a receipt is checked against a checkpoint's note")
        consistency = _read(proof) if proof else None
    except (Unusable, ValueError) as exc:  # a BundleError is JSON with two readings
        return _unread(exc)
    try:
        held = verify_receipt(receipt, keys)
        later = verify_receipt_later(receipt, held, newer, keys, consistency) if newer is not None else None
    except BundleError as exc:
        print(f"NOT VERIFIED: {exc}", file=sys.stderr)
        return NOT_VERIFIED
    subject, events = receipt["subject"], receipt["events"]
    seqs = ", ".join(str(event["seq"]) for event in events) or "none"
    also = f"; the newer checkpoint of {later.size} leaves, signed, extends it" if later else ""
    print(
        f"verified: {len(events)} events about {subject['kind']} {subject['id']} of organization "
        f"{receipt['organizationId']} (seq {seqs}) are in the tree of {held.size} leaves of its signed "
        f"checkpoint note{also}"
    )
    return VERIFIED


def _witnesses(vkeys: tuple[str, ...]) -> list[cosignatures.Verifier]:
    found = []
    for vkey in vkeys:
        try:
            found.append(cosignatures.parse_vkey(vkey))
        except ValueError as exc:
            raise Unusable(f"--witness {vkey}: {exc}") from None
    return found


def _check_cosignatures(
    bundle: dict, check: ChainCheck, verifiers: list[cosignatures.Verifier], needed: int
) -> list[str]:
    """The names of the given witnesses that cosigned the bundle's checkpoint; BundleError below the quorum."""
    if check.tree is None:
        raise BundleError("the bundle has no checkpoint note, so no witness cosigned it")
    cosigned = cosignatures.cosigned_by(bundle["checkpoint"]["note"], verifiers)
    names = [verifier.name for verifier in verifiers if verifier.vkey in cosigned]
    if len(names) < needed:
        raise BundleError(
            f"the checkpoint is cosigned by {len(names)} of the {len(verifiers)} witnesses given, fewer than "
            f"the quorum of {needed}"
        )
    return names


def _unread(exc: Exception) -> int:
    """What a file or an argument that could not be read ends the command with, said on stderr."""
    if isinstance(exc, BundleError):
        print(f"NOT VERIFIED: {exc}", file=sys.stderr)
        return NOT_VERIFIED
    if isinstance(exc, Unusable):
        print(f"kindling: {exc}", file=sys.stderr)
        return UNUSABLE
    print(f"kindling: --public-key: {exc}", file=sys.stderr)
    return UNUSABLE


def _read(path: str) -> Any:
    try:
        with open(path, "rb") as file:
            return strict_json(file.read())
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc.strerror}") from None
    except BundleError:
        raise
    except ValueError as exc:
        raise Unusable(f"cannot read {path}: {exc}") from None


def _read_checkpoint(path: str) -> Any:
    """A checkpoint: a signed note (its text), or a checkpoint of the JSON form (its object)."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc.strerror}") from None
    if raw.lstrip().startswith(b"{"):
        listed = _read(path)
        # A checkpoint as listed: its note, where it has one, says more than the JSON form.
        return listed["note"] if isinstance(listed, dict) and type(listed.get("note")) is str else listed
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise Unusable(f"{path} is neither a signed note (UTF-8 text) nor a JSON checkpoint") from None


def _keys_from_file(path: str) -> list[bytes]:
    """The keys of a saved `GET /api/evidence/keys` answer, each checked against its key id."""
    listed = _read(path)
    entries = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(entries, list) or not entries:
        raise Unusable(f"{path} is not a saved answer of GET /api/evidence/keys")
    keys = []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or entry.get("algorithm") != "Ed25519"
            or type(entry.get("publicKey")) is not str
        ):
            raise Unusable(f"{path}: every key must be {{keyId, algorithm: Ed25519, publicKey}}")
        key = decode_public_key(entry["publicKey"])
        if entry.get("keyId") != key_id(key):
            raise Unusable(f"{path}: key id {entry.get('keyId')!r} is not the key's (lowercase hex of its SHA-256)")
        keys.append(key)
    return keys
