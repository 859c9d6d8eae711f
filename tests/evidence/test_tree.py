"""The RFC 9162 tree of each log and its proofs: known answers, every size up to a few hundred
against the RFC's own definitions (tests/helpers/rfc9162.py), and the proof endpoints."""

from __future__ import annotations

import hashlib

import pytest

from kindling.evidence import log as evidence
from kindling.evidence import merkle, tree
from kindling.evidence.models import EvidenceHead
from tests.helpers import assert_envelope, rfc9162

# RFC 6962's example tree of eight entries (the Certificate Transparency test data).
ENTRIES = [
    bytes.fromhex(text)
    for text in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f")
]
ROOTS = {
    1: "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    2: "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    3: "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    4: "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    5: "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    6: "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    7: "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    8: "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}
# Proofs in that tree, as CT's tests give them: leaf 0 of 8, and 1 → 8, which are the same path.
PATH_0_OF_8 = [
    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
]
PROOF_6_TO_8 = [
    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
]


def build(entries: list[bytes]) -> tuple[merkle.Frontier, dict[tuple[int, int], bytes]]:
    """A tree built one leaf at a time as the log builds it, and every node it stored."""
    frontier, stored = merkle.Frontier(), {}
    for entry in entries:
        for level, position, node in frontier.append(merkle.leaf_hash(entry)):
            assert (level, position) not in stored
            stored[level, position] = node
    return frontier, stored


def reader(stored: dict, reads: list | None = None):
    def read(wanted):
        wanted = list(wanted)
        if reads is not None:
            reads.append(len(wanted))
        return {node: stored[node] for node in wanted}

    return read


def test_rfc_6962s_example_tree():
    _, stored = build(ENTRIES)
    read = reader(stored)
    for size, root in ROOTS.items():
        assert merkle.root(size, read).hex() == root == rfc9162.mth(ENTRIES[:size]).hex()
    assert [node.hex() for node in merkle.inclusion_proof(0, 8, read)] == PATH_0_OF_8
    assert [node.hex() for node in merkle.consistency_proof(1, 8, read)] == PATH_0_OF_8
    assert [node.hex() for node in merkle.consistency_proof(6, 8, read)] == PROOF_6_TO_8
    root8, root6 = bytes.fromhex(ROOTS[8]), bytes.fromhex(ROOTS[6])
    proof = [bytes.fromhex(node) for node in PROOF_6_TO_8]
    assert merkle.verify_consistency(6, 8, root6, root8, proof)
    assert merkle.verify_inclusion(0, 8, merkle.leaf_hash(b""), [bytes.fromhex(n) for n in PATH_0_OF_8], root8)
    assert merkle.root(0, read) == hashlib.sha256(b"").digest()


SIZES = 300


def test_every_size_up_to_a_few_hundred_agrees_with_the_rfc():
    entries = [hashlib.sha256(str(i).encode()).digest() for i in range(SIZES)]
    frontier, stored = build(entries)
    # Two writes per leaf, amortised: the leaf and the subtrees it completes.
    assert len(stored) == 2 * SIZES - SIZES.bit_count()
    reads: list[int] = []
    read = reader(stored, reads)
    roots = [rfc9162.mth(entries[:size]) for size in range(SIZES + 1)]
    assert frontier.root() == roots[SIZES]
    for size in range(1, SIZES + 1):
        assert merkle.root(size, read) == roots[size]
        for index in range(size):
            proof = merkle.inclusion_proof(index, size, read)
            leaf = rfc9162.leaf(entries[index])
            assert rfc9162.root_from_inclusion(index, size, leaf, proof) == roots[size]
            assert merkle.verify_inclusion(index, size, leaf, proof, roots[size])
            if size <= 40:
                assert proof == rfc9162.path(index, entries[:size])
        for old in range(1, size):
            proof = merkle.consistency_proof(old, size, read)
            assert rfc9162.consistent(old, size, roots[old], roots[size], proof)
            assert merkle.verify_consistency(old, size, roots[old], roots[size], proof)
            if size <= 40:
                assert proof == rfc9162.proof(old, entries[:size])
    # One read a proof, of O(log n) nodes.
    assert max(reads) <= 2 * SIZES.bit_length()


def test_a_proof_altered_in_any_way_fails():
    entries = [hashlib.sha256(str(i).encode()).digest() for i in range(13)]
    _, stored = build(entries)
    read = reader(stored)
    root13, root7 = merkle.root(13, read), merkle.root(7, read)
    proof = merkle.inclusion_proof(4, 13, read)
    leaf = merkle.leaf_hash(entries[4])
    assert merkle.verify_inclusion(4, 13, leaf, proof, root13)
    for position in range(len(proof)):
        bad = list(proof)
        bad[position] = bytes(32)
        assert not merkle.verify_inclusion(4, 13, leaf, bad, root13)
    assert not merkle.verify_inclusion(5, 13, leaf, proof, root13)
    assert not merkle.verify_inclusion(4, 13, leaf, [*proof, bytes(32)], root13)
    assert not merkle.verify_inclusion(4, 13, leaf, proof[:-1], root13)
    assert not merkle.verify_inclusion(13, 13, leaf, proof, root13)
    consistency = merkle.consistency_proof(7, 13, read)
    assert merkle.verify_consistency(7, 13, root7, root13, consistency)
    for position in range(len(consistency)):
        bad = list(consistency)
        bad[position] = bytes(32)
        assert not merkle.verify_consistency(7, 13, root7, root13, bad)
    assert not merkle.verify_consistency(7, 13, root13, root13, consistency)
    assert not merkle.verify_consistency(6, 13, root7, root13, consistency)
    assert not merkle.verify_consistency(7, 13, root7, root13, [])
    assert not merkle.verify_consistency(0, 13, bytes(32), root13, [])  # nothing is proven of the empty tree
    assert not merkle.verify_consistency(13, 7, root13, root7, consistency)
    assert merkle.verify_consistency(13, 13, root13, root13, [])


EVENTS = 21


@pytest.fixture
def grown(make, db):
    """An organization with a log of 21 events: its admin's joining, then imported facts."""
    admin = make.admin()
    joined, _ = evidence.list_events(db, organization_id=admin.organization_id)
    for number in range(EVENTS - len(joined)):
        evidence.append(
            db,
            organization_id=admin.organization_id,
            type=evidence.IMPORTED,
            subject=("act", f"act-{number}"),
            actor_id=None,
            data={"number": number},
        )
    events, _ = evidence.list_events(db, organization_id=admin.organization_id)
    assert len(events) == EVENTS
    return admin, rfc9162.event_leaves(events)


def test_the_head_row_keeps_the_frontier_the_events_make(db, grown):
    admin, leaves = grown
    frontier = merkle.Frontier()
    for leaf in leaves:
        frontier.append(merkle.leaf_hash(leaf))
    assert db.get(EvidenceHead, admin.organization_id).frontier == frontier.packed()


@pytest.mark.parametrize("packed", [None, b"", bytes(32)], ids=["none", "empty", "a size's too few"])
def test_a_frontier_that_does_not_fit_the_head_is_read_from_the_nodes(db, grown, packed):
    admin, _ = grown
    kept = db.get(EvidenceHead, admin.organization_id).frontier
    read = tree.frontier(db, organization_id=admin.organization_id, size=EVENTS, packed=packed)
    assert (read.size, read.packed()) == (EVENTS, kept)


def test_inclusion_proofs_over_http_prove_every_event_in_every_tree(client, grown):
    admin, leaves = grown
    for size in (1, 2, 7, 8, 16, EVENTS):
        root = rfc9162.mth(leaves[:size])
        for seq in range(1, size + 1):
            response = client.get(f"/api/evidence/proofs/inclusion?seq={seq}&treeSize={size}", headers=admin.headers)
            assert response.status_code == 200, response.text
            found = response.json()
            assert found["leafIndex"] == seq - 1 and found["treeSize"] == size
            assert rfc9162.unb64(found["leafHash"]) == rfc9162.leaf(leaves[seq - 1])
            proof = [rfc9162.unb64(node) for node in found["proof"]]
            assert rfc9162.root_from_inclusion(seq - 1, size, rfc9162.leaf(leaves[seq - 1]), proof) == root
    whole = client.get("/api/evidence/proofs/inclusion?seq=3", headers=admin.headers).json()
    assert whole["treeSize"] == EVENTS


def test_consistency_proofs_over_http_prove_every_tree_extends_every_smaller_one(client, grown):
    admin, leaves = grown
    roots = [rfc9162.mth(leaves[:size]) for size in range(EVENTS + 1)]
    for new in range(EVENTS + 1):
        for old in range(new + 1):
            response = client.get(f"/api/evidence/proofs/consistency?from={old}&to={new}", headers=admin.headers)
            assert response.status_code == 200, response.text
            found = response.json()
            assert (found["from"], found["to"]) == (old, new)
            proof = [rfc9162.unb64(node) for node in found["proof"]]
            if 0 < old < new:
                assert rfc9162.consistent(old, new, roots[old], roots[new], proof)
            else:
                assert proof == []
    assert client.get("/api/evidence/proofs/consistency?from=4", headers=admin.headers).json()["to"] == EVENTS


@pytest.mark.parametrize(
    "query",
    [
        f"inclusion?seq={EVENTS + 1}",
        f"inclusion?seq=3&treeSize={EVENTS + 1}",
        "inclusion?seq=5&treeSize=4",
        f"consistency?from=0&to={EVENTS + 1}",
        "consistency?from=6&to=5",
        f"consistency?from={EVENTS + 1}",
    ],
)
def test_a_size_beyond_the_tree_is_400(client, grown, query):
    admin, _ = grown
    response = client.get(f"/api/evidence/proofs/{query}", headers=admin.headers)
    assert_envelope(response, 400, "beyond_the_tree")
    assert response.json()["details"]["treeSize"] == EVENTS


@pytest.mark.parametrize("query", ["inclusion?seq=0", "inclusion?seq=x", "consistency?from=-1", "consistency"])
def test_malformed_sizes_are_400(client, grown, query):
    admin, _ = grown
    assert client.get(f"/api/evidence/proofs/{query}", headers=admin.headers).status_code == 400


def test_only_admins_read_proofs(client, make, grown):
    admin, _ = grown
    for query in ("inclusion?seq=1", "consistency?from=1"):
        assert client.get(f"/api/evidence/proofs/{query}").status_code == 401
        assert client.get(f"/api/evidence/proofs/{query}", headers=make.member(admin).headers).status_code == 403
