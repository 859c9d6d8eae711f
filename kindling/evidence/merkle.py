"""The RFC 9162 Merkle tree over a log's events, its proofs and their verification (docs/evidence.md).

Standard library only, so a verifier can be read on its own. Leaf `i` is the 32 raw bytes of the
`hash` of event seq `i + 1`. A node `(level, index)` is the hash of the complete subtree of leaves
`[index · 2^level, (index + 1) · 2^level)`: the stored nodes are exactly these, and every other
hash of a proof is folded from them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

# A reader of complete subtrees: the hashes of the nodes asked for, by (level, index).
Nodes = Callable[[Iterable[tuple[int, int]]], dict[tuple[int, int], bytes]]

EMPTY_ROOT = hashlib.sha256(b"").digest()
HASH_SIZE = 32


def leaf_hash(leaf: bytes) -> bytes:
    """SHA-256(0x00 ‖ leaf)."""
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 ‖ left ‖ right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two smaller than `size` (≥ 2): where RFC 9162 splits a tree."""
    return 1 << ((size - 1).bit_length() - 1)


class Frontier:
    """The hashes of the complete subtrees covering the leaves so far, largest first: a tree built
    one leaf at a time in O(1) amortised hashing, its root at any size in O(log n)."""

    def __init__(self, size: int = 0, nodes: Iterable[bytes] = ()) -> None:
        self.size = size
        self.nodes = list(nodes)
        if len(self.nodes) != size.bit_count():
            raise ValueError(f"a frontier of {size} leaves has {size.bit_count()} nodes")

    @classmethod
    def unpack(cls, size: int, packed: bytes) -> Frontier:
        """The frontier of `size` leaves whose hashes `packed` holds one after another, as `packed()` gives them."""
        return cls(size, (packed[start : start + HASH_SIZE] for start in range(0, len(packed), HASH_SIZE)))

    def packed(self) -> bytes:
        """The hashes, largest subtree first, one after another."""
        return b"".join(self.nodes)

    def append(self, leaf_hash_: bytes) -> list[tuple[int, int, bytes]]:
        """Add a leaf's hash; the complete subtrees it completes, as (level, index, hash), itself first."""
        index, node, level = self.size, leaf_hash_, 0
        made = [(0, index, node)]
        while index & 1:
            node = node_hash(self.nodes.pop(), node)
            index >>= 1
            level += 1
            made.append((level, index, node))
        self.nodes.append(node)
        self.size += 1
        return made

    def root(self) -> bytes:
        if not self.nodes:
            return EMPTY_ROOT
        node = self.nodes[-1]
        for left in reversed(self.nodes[:-1]):
            node = node_hash(left, node)
        return node


def frontier_nodes(size: int) -> list[tuple[int, int]]:
    """The (level, index) of the complete subtrees covering leaves [0, size), largest first."""
    return _cover(0, size)


def _cover(start: int, end: int) -> list[tuple[int, int]]:
    """The complete subtrees covering leaves [start, end), left to right, for a range of RFC 9162's
    recursion (`start` a multiple of the largest power of two not above end − start)."""
    found = []
    while start < end:
        level = (end - start).bit_length() - 1
        found.append((level, start >> level))
        start += 1 << level
    return found


def _range_hash(start: int, end: int, nodes: dict[tuple[int, int], bytes]) -> bytes:
    """MTH of leaves [start, end), folded from its complete subtrees."""
    cover = _cover(start, end)
    node = nodes[cover[-1]]
    for part in reversed(cover[:-1]):
        node = node_hash(nodes[part], node)
    return node


def _inclusion_ranges(index: int, start: int, end: int) -> list[tuple[int, int]]:
    """The ranges whose hashes form PATH(index, D[start:end]) (RFC 9162 §2.1.3.1), leaf side first."""
    ranges = []
    while end - start > 1:
        k = _split(end - start)
        if index - start < k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    return ranges[::-1]


def _consistency_ranges(m: int, start: int, end: int, whole: bool) -> list[tuple[int, int]]:
    """The ranges whose hashes form SUBPROOF(m, D[start:end], whole) (RFC 9162 §2.1.4.1), in proof order."""
    ranges: list[tuple[int, int]] = []
    while True:
        n = end - start
        if m == n:
            if not whole:
                ranges.append((start, end))
            return ranges[::-1]
        k = _split(n)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start, m, whole = start + k, m - k, False


def _hashes(ranges: list[tuple[int, int]], read: Nodes) -> list[bytes]:
    wanted = {part for start, end in ranges for part in _cover(start, end)}
    nodes = read(sorted(wanted))
    return [_range_hash(start, end, nodes) for start, end in ranges]


def root(size: int, read: Nodes) -> bytes:
    """The root of the tree of the first `size` leaves, from its complete subtrees."""
    return EMPTY_ROOT if size == 0 else _hashes([(0, size)], read)[0]


def inclusion_proof(index: int, size: int, read: Nodes) -> list[bytes]:
    """The audit path of leaf `index` in the tree of `size` leaves (0 ≤ index < size)."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size} leaves")
    return _hashes(_inclusion_ranges(index, 0, size), read)


def consistency_proof(old: int, new: int, read: Nodes) -> list[bytes]:
    """The proof that the tree of `new` leaves extends the tree of `old` (0 ≤ old ≤ new); empty
    when old is 0 or old is new."""
    if not 0 <= old <= new:
        raise ValueError(f"no consistency proof from {old} to {new}")
    if old == 0 or old == new:
        return []
    return _hashes(_consistency_ranges(old, 0, new, True), read)


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], expected_root: bytes) -> bool:
    """RFC 9162 §2.1.3.2: whether `proof` shows leaf hash `leaf` at `index` in the tree `expected_root`."""
    if not 0 <= index < size or not _hashes_of_32(leaf, expected_root, *proof):
        return False
    fn, sn, node = index, size - 1, leaf
    for sibling in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            node = node_hash(sibling, node)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            node = node_hash(node, sibling)
        fn >>= 1
        sn >>= 1
    return sn == 0 and node == expected_root


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 §2.1.4.2: whether `proof` shows the tree `new_root` of `new` leaves extends the tree
    `old_root` of `old` leaves. Nothing is proven of the empty tree (old 0): False."""
    if not 0 < old <= new:
        return False
    if old == new:
        return not proof and old_root == new_root
    if not proof or not _hashes_of_32(old_root, new_root, *proof):
        return False
    if old & (old - 1) == 0:  # a power of two: the old root is the proof's first node
        proof = [old_root, *proof]
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for node in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(node, fr), node_hash(node, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, node)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root


def _hashes_of_32(*hashes: bytes) -> bool:
    return all(type(node) is bytes and len(node) == 32 for node in hashes)


def tree_root(leaves: Iterable[bytes]) -> tuple[int, bytes]:
    """The size and root of the tree of these leaves (raw, before leaf hashing), in order."""
    frontier = Frontier()
    for leaf in leaves:
        frontier.append(leaf_hash(leaf))
    return frontier.size, frontier.root()
