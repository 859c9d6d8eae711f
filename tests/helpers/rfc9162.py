"""RFC 9162 §2.1 written out as the RFC states it, recursively and with no stored nodes: the
tests' own reference for the tree, its proofs and their verification."""

from __future__ import annotations

import base64
import hashlib


def leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(entries: list[bytes]) -> bytes:
    """MTH(D[n]) of §2.1.1."""
    if not entries:
        return hashlib.sha256(b"").digest()
    if len(entries) == 1:
        return leaf(entries[0])
    k = _k(len(entries))
    return node(mth(entries[:k]), mth(entries[k:]))


def path(m: int, entries: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of §2.1.3.1."""
    if len(entries) == 1:
        return []
    k = _k(len(entries))
    if m < k:
        return path(m, entries[:k]) + [mth(entries[k:])]
    return path(m - k, entries[k:]) + [mth(entries[:k])]


def proof(m: int, entries: list[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of §2.1.4.1."""
    return _subproof(m, entries, True) if 0 < m < len(entries) else []


def _subproof(m: int, entries: list[bytes], whole: bool) -> list[bytes]:
    n = len(entries)
    if m == n:
        return [] if whole else [mth(entries)]
    k = _k(n)
    if m <= k:
        return _subproof(m, entries[:k], whole) + [mth(entries[k:])]
    return _subproof(m - k, entries[k:], False) + [mth(entries[:k])]


def root_from_inclusion(index: int, size: int, leaf_hash: bytes, audit: list[bytes]) -> bytes | None:
    """The root the audit path of §2.1.3.2 leads to, or None where the path is malformed."""
    if index >= size:
        return None
    fn, sn, r = index, size - 1, leaf_hash
    for p in audit:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = node(p, r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn //= 2
                    sn //= 2
        else:
            r = node(r, p)
        fn //= 2
        sn //= 2
    return r if sn == 0 else None


def consistent(first: int, second: int, first_hash: bytes, second_hash: bytes, consistency: list[bytes]) -> bool:
    """§2.1.4.2, for 0 < first < second."""
    if not consistency:
        return False
    if first & (first - 1) == 0:
        consistency = [first_hash, *consistency]
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn //= 2
        sn //= 2
    fr = sr = consistency[0]
    for c in consistency[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn //= 2
                sn //= 2
        else:
            sr = node(sr, c)
        fn //= 2
        sn //= 2
    return sn == 0 and fr == first_hash and sr == second_hash


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def event_leaves(events: list[dict]) -> list[bytes]:
    """The tree's entries of events: the 32 bytes of each one's hash, in seq order."""
    return [bytes.fromhex(event["hash"]) for event in events]
