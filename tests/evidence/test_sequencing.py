"""Sequencing an event: on PostgreSQL the database's evidence_append, on SQLite Python. Both must
give every event the hash, and the tree the nodes and frontier, that kindling/evidence/chain.py
and merkle.py compute from the stored columns, as every verifier does."""

from __future__ import annotations

from sqlalchemy import select, text

from kindling.evidence import log as evidence
from kindling.evidence import merkle
from kindling.evidence.chain import event_hash
from kindling.evidence.models import EvidenceHead, EvidenceTreeNode

# Data whose canonical text holds what the database's splice looks for, and what JSON escapes.
AWKWARD = {
    "prevHash": "",
    "seq": 0,
    "subject": {"id": "x", "kind": "act"},
    "copied": '"prevHash":"","seq":0,"subject":',
    "nested": [{"prevHash": "", "seq": 0}, {}],
    "text": 'ünïcödé 😀 \u0000\u001f\u2028 "quoted" \\ back',
    "numbers": [0, -1, 2**53 - 1, 1.5, 1e-7],
    "nothing": None,
}


def _events(db, organization_id):
    return evidence.list_events(db, organization_id=organization_id, limit=1000)[0]


def _expected_tree(events):
    frontier, nodes = merkle.Frontier(), set()
    for event in events:
        made = frontier.append(merkle.leaf_hash(bytes.fromhex(event["hash"])))
        nodes.update(made)
    return frontier, nodes


def _stored_tree(db, organization_id):
    nodes = db.execute(
        select(EvidenceTreeNode.level, EvidenceTreeNode.position, EvidenceTreeNode.hash).where(
            EvidenceTreeNode.organization_id == organization_id
        )
    )
    head = db.execute(
        select(EvidenceHead.seq, EvidenceHead.frontier).where(EvidenceHead.organization_id == organization_id)
    )
    return {(level, position, bytes(hash_)) for level, position, hash_ in nodes}, head.one()


def _append(db, organization_id, count, data=None):
    for number in range(count):
        evidence.append(
            db,
            organization_id=organization_id,
            type=evidence.IMPORTED,
            subject=("act", f"act-{number}"),
            actor_id=None if number % 2 else "someone",
            data=data if data is not None else {"recordedAt": f"n{number}"},
        )


def test_every_event_is_chained_and_hashed_as_the_verifiers_compute_it(db, make):
    organization_id = make.admin().organization_id
    _append(db, organization_id, 3, AWKWARD)
    _append(db, organization_id, 2, {})
    events = _events(db, organization_id)
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    for before, event in zip([None, *events], events, strict=False):
        assert event["prevHash"] == (before["hash"] if before else "0" * 64)
        assert event["hash"] == event_hash(event)
    assert events[-3]["data"] == AWKWARD


def test_the_tree_has_every_node_and_the_frontier_of_each_size(db, make):
    organization_id = make.admin().organization_id
    for size in range(1, 200, 7):
        # Sizes of every shape: each batch of appends goes to the database in one round trip.
        _append(db, organization_id, 7)
        events = _events(db, organization_id)
        frontier, expected = _expected_tree(events)
        nodes, (seq, packed) = _stored_tree(db, organization_id)
        assert seq == len(events) >= size
        assert nodes == expected
        assert bytes(packed) == frontier.packed()


def test_a_head_that_lost_its_frontier_is_extended_from_the_stored_nodes(db, make):
    organization_id = make.admin().organization_id
    _append(db, organization_id, 10)
    # The one change beside an advance that the head row accepts.
    db.execute(text("UPDATE evidence_heads SET frontier = NULL WHERE organization_id = :org"), {"org": organization_id})
    _append(db, organization_id, 3)
    frontier, expected = _expected_tree(_events(db, organization_id))
    nodes, (_seq, packed) = _stored_tree(db, organization_id)
    assert nodes == expected and bytes(packed) == frontier.packed()
