"""`kindling witness serve`, the C2SP tlog-witness Kindling ships: every answer c2sp.org/tlog-witness
asks of add-checkpoint, through HTTP on loopback, and its compare-and-set under concurrent submissions."""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import threading

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from kindling.evidence import cosignatures, merkle, notes, witness_server
from kindling.evidence.keys import Signer

ORIGIN = "kindling.test/evidence/org-1"


class Log:
    """A log in memory: its leaves' subtrees, its signed checkpoints and its proofs."""

    def __init__(self, signer: Signer, origin: str = ORIGIN) -> None:
        self.signer, self.origin = signer, origin
        self.frontier = merkle.Frontier()
        self.nodes: dict[tuple[int, int], bytes] = {}

    def grow(self, count: int) -> None:
        for _ in range(count):
            leaf = hashlib.sha256(str(self.frontier.size).encode()).digest()
            for level, index, node in self.frontier.append(merkle.leaf_hash(leaf)):
                self.nodes[(level, index)] = node

    def read(self, wanted):
        return {node: self.nodes[node] for node in wanted}

    def root(self, size: int) -> bytes:
        return merkle.root(size, self.read)

    def note(self, size: int | None = None, root: bytes | None = None) -> str:
        size = self.frontier.size if size is None else size
        text = notes.checkpoint_text(self.origin, size, self.root(size) if root is None else root)
        return self.signer.sign_note(text, self.origin)

    def body(self, old: int, size: int | None = None, *, proof: list[bytes] | None = None, note: str | None = None):
        size = self.frontier.size if size is None else size
        proof = merkle.consistency_proof(old, size, self.read) if proof is None else proof
        lines = "".join(base64.b64encode(node).decode() + "\n" for node in proof)
        return f"old {old}\n{lines}\n{note or self.note(size)}".encode()


@pytest.fixture
def log_signer():
    return Signer(Ed25519PrivateKey.generate())


@pytest.fixture
def witness(tmp_path, log_signer):
    logs = witness_server.Logs({ORIGIN: [(ORIGIN, log_signer.public_key)]})
    return witness_server.Witness(
        "witness.test/w1", Ed25519PrivateKey.generate(), logs, witness_server.State(str(tmp_path / "w.sqlite"))
    )


@pytest.fixture
def served(witness):
    running = witness_server.server(witness, "127.0.0.1", 0)
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{running.server_address[1]}"
    running.shutdown()
    running.server_close()


def post(url: str, body: bytes) -> requests.Response:
    return requests.post(url + "/add-checkpoint", data=body, timeout=5)


def test_a_checkpoint_is_cosigned_once_it_is_proven_to_extend_the_last(served, witness, log_signer):
    log = Log(log_signer)
    log.grow(5)
    first = post(served, log.body(0))
    assert first.status_code == 200
    verifier = cosignatures.parse_vkey(requests.get(served + "/vkey", timeout=5).text.strip())
    cosigned = cosignatures.cosigned_by(log.note() + first.text, [verifier])
    line, timestamp = cosigned[verifier.vkey]
    assert line == first.text and timestamp > 0

    log.grow(8)
    second = post(served, log.body(5))
    assert second.status_code == 200
    assert cosignatures.cosigned_by(log.note() + second.text, [verifier])
    # The same checkpoint again, from its own size: cosigned again.
    assert post(served, log.body(13)).status_code == 200
    # The monitoring endpoint serves the latest cosigned checkpoint, log signature and cosignature.
    monitored = requests.get(f"{served}/{hashlib.sha256(ORIGIN.encode()).hexdigest()}/checkpoint", timeout=5)
    assert monitored.status_code == 200 and notes.parse_checkpoint_text(notes.split(monitored.text)[0])[1] == 13
    assert cosignatures.cosigned_by(monitored.text, [verifier])
    assert requests.get(f"{served}/{'0' * 64}/checkpoint", timeout=5).status_code == 404


def test_a_stale_old_size_is_409_with_the_witness_size(served, log_signer):
    log = Log(log_signer)
    log.grow(7)
    assert post(served, log.body(0)).status_code == 200
    log.grow(3)
    for old in (0, 4, 9):
        answer = post(served, log.body(old))
        assert answer.status_code == 409
        assert answer.headers["Content-Type"] == "text/x.tlog.size" and answer.text == "7\n"
    # A checkpoint smaller than the witness's, sent from size 0: 409 too, never cosigned.
    assert post(served, log.body(0, 3)).text == "7\n"


def test_refusals_follow_the_spec(served, witness, log_signer):
    log = Log(log_signer)
    log.grow(6)
    assert post(served, log.body(0, 4)).status_code == 200
    other = Log(Signer(Ed25519PrivateKey.generate()))
    other.grow(6)
    # Signed by a key the witness does not trust for the origin: 403.
    assert post(served, other.body(4)).status_code == 403
    # A trusted key's signature line that does not verify: 403.
    text = notes.checkpoint_text(ORIGIN, 6, log.root(6))
    forged = text + "\n" + notes.signature_line(ORIGIN, log_signer.public_key, b"\x00" * 64)
    assert post(served, log.body(4, note=forged)).status_code == 403
    # An origin the witness does not follow: 404.
    stranger = Log(log_signer, origin="elsewhere.test/log")
    stranger.grow(2)
    assert post(served, stranger.body(0)).status_code == 404
    # The old size beyond the checkpoint's: 400.
    assert post(served, log.body(4, 4, proof=[]).replace(b"old 4\n", b"old 5\n")).status_code == 400
    # A proof that does not verify: 422, and so is another root at the same size.
    bad = [bytes(32)] * len(merkle.consistency_proof(4, 6, log.read))
    assert post(served, log.body(4, 6, proof=bad)).status_code == 422
    assert post(served, log.body(4, 4, proof=[], note=log.note(4, root=log.root(6)))).status_code == 422
    # Malformed bodies: 400.
    for body in (b"", b"old 01\n\n" + log.note().encode(), b"old 4\nnot-base64\n\n" + log.note().encode()):
        assert post(served, body).status_code == 400
    # Not one refusal moved the witness.
    assert witness.state.latest(ORIGIN)[0] == 4


def test_size_zero_needs_the_empty_root_and_no_proof(served, log_signer):
    log = Log(log_signer)
    assert post(served, log.body(0, 0, note=log.note(0, root=bytes(32)))).status_code == 422
    log.grow(3)
    assert post(served, log.body(0, 3, proof=[bytes(32)])).status_code == 422
    assert post(served, log.body(0, 0)).status_code == 200
    assert post(served, log.body(0, 3)).status_code == 200


def test_concurrent_submissions_never_roll_the_log_back(served, witness, log_signer):
    """Every submission from size 0 races; exactly one wins, and the rest are 409 at its size."""
    log = Log(log_signer)
    log.grow(40)
    sizes = list(range(1, 41))
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda size: (size, post(served, log.body(0, size))), sizes))
    won = [size for size, answer in answers if answer.status_code == 200]
    assert len(won) == 1
    assert all(answer.status_code == 409 and answer.text == f"{won[0]}\n" for size, answer in answers if size != won[0])
    assert witness.state.latest(ORIGIN)[0] == won[0]

    # Then every size above from the winner's, racing: the witness's size only ever grows.
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        later = list(pool.map(lambda size: post(served, log.body(won[0], size)), range(won[0], 41)))
    assert sum(answer.status_code == 200 for answer in later) >= 1
    assert all(answer.status_code in (200, 409) for answer in later)
    final = witness.state.latest(ORIGIN)[0]
    assert final >= won[0] and all(int(answer.text) >= won[0] for answer in later if answer.status_code == 409)


def test_a_prefix_follows_every_log_signed_by_its_key_under_its_origin(tmp_path, log_signer):
    vkey = notes.vkey("anything", log_signer.public_key)
    logs = witness_server.load_logs([], [f"kindling.test/evidence/={vkey}"])
    witness = witness_server.Witness(
        "witness.test/w2", Ed25519PrivateKey.generate(), logs, witness_server.State(str(tmp_path / "p.sqlite"))
    )
    for organization in ("org-a", "org-b"):
        log = Log(log_signer, origin=f"kindling.test/evidence/{organization}")
        log.grow(2)
        assert witness.add_checkpoint(log.body(0)).startswith("\u2014 witness.test/w2 ")
    with pytest.raises(witness_server.Refused) as refused:
        other = Log(log_signer, origin="other.test/evidence/org-a")
        other.grow(1)
        witness.add_checkpoint(other.body(0))
    assert refused.value.status == 404
