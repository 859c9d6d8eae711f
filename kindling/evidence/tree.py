"""Each organization's log as an RFC 9162 tree, kept in `evidence_tree_nodes` (docs/evidence.md, "The tree").

An append writes the leaf and the complete subtrees it completes (two rows on average), growing
the frontier the head row keeps (kindling/evidence/log.py); a proof or a root reads O(log n)
nodes in one statement.
"""

from __future__ import annotations

import base64
import typing
from collections.abc import Iterable

from sqlalchemy import Table, bindparam, select, tuple_
from sqlalchemy.orm import Session

from kindling.errors import BadRequest
from kindling.evidence import merkle
from kindling.evidence.models import EvidenceEvent, EvidenceTreeNode

_nodes = typing.cast(Table, EvidenceTreeNode.__table__)
_events = typing.cast(Table, EvidenceEvent.__table__)
# Built once: every proof and root reads its nodes with it.
_READ_NODES = select(_nodes.c.level, _nodes.c.position, _nodes.c.hash).where(
    _nodes.c.organization_id == bindparam("organization"),
    tuple_(_nodes.c.level, _nodes.c.position).in_(bindparam("nodes", expanding=True)),
)
_STREAM_BATCH = 10_000


def reader(db: Session, organization_id: str) -> merkle.Nodes:
    """Reads the organization's stored nodes, all those asked for in one statement."""

    def read(wanted: Iterable[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        wanted = list(wanted)
        if not wanted:
            return {}
        rows = db.execute(_READ_NODES, {"organization": organization_id, "nodes": wanted})
        found = {(level, position): bytes(hash_) for level, position, hash_ in rows}
        if len(found) != len(wanted):
            missing = sorted(set(wanted) - found.keys())[0]
            raise LookupError(f"the tree of organization {organization_id} has no node {missing}")
        return found

    return read


def frontier(db: Session, *, organization_id: str, size: int, packed: bytes | None) -> merkle.Frontier:
    """The frontier of the organization's tree of `size` leaves: as the head row packs it, or, when
    it holds none or one that does not fit the size (a head row someone moved), as the stored
    nodes have it."""
    if packed is not None and len(packed) == merkle.HASH_SIZE * size.bit_count():
        return merkle.Frontier.unpack(size, packed)
    wanted = merkle.frontier_nodes(size)
    found = reader(db, organization_id)(wanted)
    return merkle.Frontier(size, (found[node] for node in wanted))


def grow(frontier: merkle.Frontier, *, organization_id: str, hash_: str) -> list[dict]:
    """Append the leaf of the event whose (hex) hash this is to `frontier`; the rows of the nodes
    it completes, to store in the event's transaction."""
    return [
        {"organization_id": organization_id, "level": level, "position": position, "hash": node}
        for level, position, node in frontier.append(merkle.leaf_hash(bytes.fromhex(hash_)))
    ]


def root(db: Session, *, organization_id: str, size: int) -> bytes:
    """The root of the organization's tree of `size` leaves, from the stored nodes."""
    return merkle.root(size, reader(db, organization_id))


def _sizes(size: int, tree_size: int, name: str) -> None:
    if size > tree_size:
        raise BadRequest(
            f"{name} {size} is beyond the tree, which has {tree_size} leaves",
            code="beyond_the_tree",
            details={"treeSize": tree_size},
        )


def inclusion(db: Session, *, organization_id: str, seq: int, tree_size: int, current_size: int) -> dict:
    """`{leafIndex, treeSize, leafHash, proof}`: event `seq` is in the tree of `tree_size` leaves."""
    _sizes(tree_size, current_size, "treeSize")
    if seq > tree_size:
        raise BadRequest(
            f"seq {seq} is not in a tree of {tree_size} leaves",
            code="beyond_the_tree",
            details={"treeSize": current_size},
        )
    read = reader(db, organization_id)
    leaf = read([(0, seq - 1)])[(0, seq - 1)]
    proof = merkle.inclusion_proof(seq - 1, tree_size, read)
    return {"leafIndex": seq - 1, "treeSize": tree_size, "leafHash": _b64(leaf), "proof": [_b64(p) for p in proof]}


def consistency(db: Session, *, organization_id: str, old: int, new: int, current_size: int) -> dict:
    """`{from, to, proof}`: the tree of `new` leaves extends the tree of `old` leaves."""
    _sizes(new, current_size, "to")
    if old > new:
        raise BadRequest(f"from {old} is after to {new}", code="beyond_the_tree", details={"treeSize": current_size})
    proof = merkle.consistency_proof(old, new, reader(db, organization_id))
    return {"from": old, "to": new, "proof": [_b64(p) for p in proof]}


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


class Recomputed(typing.NamedTuple):
    """The tree rebuilt from the stored events: its size, root, and the root at each size asked for."""

    size: int
    root: bytes
    roots: dict[int, bytes]


def from_events(db: Session, *, organization_id: str, up_to: int, sizes: Iterable[int] = ()) -> Recomputed:
    """Rebuild the organization's tree from its events' stored hashes up to seq `up_to`, never from
    the node table: the roots at `sizes` (those the events reach) and at the end."""
    statement = (
        select(_events.c.hash)
        .where(_events.c.organization_id == organization_id, _events.c.seq <= bindparam("up_to"))
        .order_by(_events.c.seq)
        .execution_options(yield_per=_STREAM_BATCH)
    )
    rows = db.execute(statement, {"up_to": up_to})
    return from_hashes((bytes.fromhex(hash_) for (hash_,) in rows), sizes=sizes)


def from_hashes(hashes: Iterable[bytes], *, sizes: Iterable[int] = ()) -> Recomputed:
    """The tree whose leaves are these event hashes, in seq order: the roots at `sizes` (those
    the hashes reach) and at the end."""
    wanted = sorted(set(sizes))
    roots: dict[int, bytes] = {}
    frontier = merkle.Frontier()
    position = 0
    if wanted and wanted[0] == 0:
        roots[0] = merkle.EMPTY_ROOT
        position = 1
    leaf_hash, append = merkle.leaf_hash, frontier.append
    for hash_ in hashes:
        append(leaf_hash(hash_))
        if position < len(wanted) and frontier.size == wanted[position]:
            roots[frontier.size] = frontier.root()
            position += 1
    return Recomputed(frontier.size, frontier.root(), roots)


def first_unmatched_leaf(db: Session, *, organization_id: str, up_to: int) -> int:
    """The first seq whose leaf in the node table is not its event's, or `up_to` when every leaf
    matches and a node above them does not: where the stored tree breaks from the events."""
    leaf = _nodes.alias("leaf")
    rows = db.execute(
        select(_events.c.seq, _events.c.hash, leaf.c.hash)
        .outerjoin(
            leaf,
            (leaf.c.organization_id == _events.c.organization_id)
            & (leaf.c.level == 0)
            & (leaf.c.position == _events.c.seq - 1),
        )
        .where(_events.c.organization_id == organization_id, _events.c.seq <= up_to)
        .order_by(_events.c.seq)
        .execution_options(yield_per=_STREAM_BATCH)
    )
    for seq, hash_, stored in rows:
        if stored is None or bytes(stored) != merkle.leaf_hash(bytes.fromhex(hash_)):
            return seq
    return up_to
