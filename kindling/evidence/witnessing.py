"""Getting checkpoints cosigned: each witness's `POST <url>/add-checkpoint` (c2sp.org/tlog-witness).

The body is `old <size>`, the consistency proof from that size, a blank line and the signed note.
A 200 answers cosignature lines, kept once they verify against the witness's vkey; a 409 answers
the witness's size, and the submission is made once more from there. A witness that has seen a
larger tree than the checkpoint's, or finds the proof from its own size wrong (422), has seen
another log than this one: a fork. Then `evidence.fork_detected` is raised and Kindling signs
nothing more of the log. 403 (the witness does not trust the log's key) and 404 (it does not
follow the origin) are kept as the witness's last error. Each call has a 5 s timeout and goes
through the outbound destination rules; the HTTP calls run outside any database transaction.
"""

from __future__ import annotations

import base64
import concurrent.futures
import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable

import requests
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from kindling import outbox
from kindling.evidence import checkpoints, cosignatures, merkle, notes, tree, witnesses
from kindling.evidence.chain import timestamp
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint, EvidenceCosignature, EvidenceWitness
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy, RefusedDestination, check_url, session

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 5.0
# How long an export or report waits for the quorum of cosignatures.
QUORUM_WAIT_SECONDS = 5.0
MAX_ANSWER = 16 * 1024


@dataclasses.dataclass(frozen=True)
class Target:
    witness_id: str
    url: str
    verifier: cosignatures.Verifier
    size: int


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a witness answered: a verified cosignature, a fork, or why there is neither."""

    witness_id: str
    size: int | None = None  # the witness's size, as it now stands
    cosignature: tuple[str, int] | None = None  # (line without its newline, timestamp)
    fork: bool = False
    error: str | None = None


def _body(old: int, proof: list[bytes], note: str) -> bytes:
    lines = "".join(base64.b64encode(node).decode() + "\n" for node in proof)
    return f"old {old}\n{lines}\n{note}".encode()


def submit(
    target: Target, note: str, size: int, prove: Callable[[int], list[bytes] | None], policy: DestinationPolicy
) -> Outcome:
    """Submit the checkpoint `note` (of `size` leaves) to one witness, from the size it was last
    known at, and once more from the size it answers in a 409. `prove(old)` is the consistency
    proof from `old`, or None once the caller no longer waits."""
    try:
        check_url(target.url, policy, resolve=False)
        with session(policy) as http:
            old = min(target.size, size)
            for attempt in range(2):
                proof = prove(old)
                if proof is None:
                    return Outcome(target.witness_id, error="the export stopped waiting before the retry")
                answer = http.post(
                    target.url + "/add-checkpoint",
                    data=_body(old, proof, note),
                    headers={"Content-Type": "text/plain; charset=utf-8"},
                    timeout=TIMEOUT_SECONDS,
                    allow_redirects=False,
                )
                text = answer.content[:MAX_ANSWER].decode("utf-8", "replace")
                if answer.status_code == 200:
                    return _cosigned(target, note, size, text)
                if answer.status_code == 409 and attempt == 0:
                    theirs = _size(text)
                    if theirs is None:
                        return Outcome(target.witness_id, error="409 without the witness's size")
                    if theirs > size:
                        return Outcome(target.witness_id, size=theirs, fork=True)
                    old = theirs
                    continue
                if answer.status_code == 422:
                    # The witness is at `old` (else it answers 409): our tree there is not the one it saw.
                    return Outcome(target.witness_id, size=old, fork=True)
                return Outcome(target.witness_id, error=_refusal(answer.status_code))
    except (requests.RequestException, RefusedDestination) as exc:
        return Outcome(target.witness_id, error=f"{type(exc).__name__}: {exc}"[:300])
    raise AssertionError("unreachable: the second attempt always returns")


def _size(text: str) -> int | None:
    line = text.removesuffix("\n")
    return int(line) if line.isascii() and line.isdigit() and len(line) < 20 else None


def _refusal(status: int) -> str:
    return {
        403: "403: the witness does not trust the log's key",
        404: "404: the witness does not follow this log's origin",
        409: "409 again after the retry from the witness's size",
    }.get(status, f"the witness answered {status}")


def _cosigned(target: Target, note: str, size: int, text: str) -> Outcome:
    try:
        found = cosignatures.cosigned_by(note + text, [target.verifier])
    except notes.NoteError as exc:
        return Outcome(target.witness_id, error=f"the witness's answer is not signature lines: {exc}"[:300])
    if target.verifier.vkey not in found:
        return Outcome(target.witness_id, error="no cosignature by the witness's verifier key verifies")
    line, stamp = found[target.verifier.vkey]
    return Outcome(target.witness_id, size=size, cosignature=(line.removesuffix("\n"), stamp))


def targets(db: Session, organization_id: str, checkpoint: EvidenceCheckpoint) -> list[Target]:
    """The witnesses still to cosign the checkpoint: listed, not forked, not cosigned yet."""
    done = set(
        db.scalars(select(EvidenceCosignature.witness_id).where(EvidenceCosignature.checkpoint_id == checkpoint.id))
    )
    return [
        Target(witness.id, witness.url, cosignatures.parse_vkey(witness.verifier_key), witness.size)
        for witness in witnesses.list_witnesses(db, organization_id=organization_id)
        if witness.id not in done and witness.fork_detected_at is None
    ]


def record(db: Session, checkpoint: EvidenceCheckpoint, outcomes: list[Outcome], now: dt.datetime | None = None) -> int:
    """Keep what the witnesses answered about the checkpoint; how many cosigned it."""
    now = now or utcnow()
    cosigned = 0
    for outcome in outcomes:
        witness = db.get(EvidenceWitness, outcome.witness_id)
        if witness is None:  # removed meanwhile
            continue
        witness.last_attempt_at, witness.last_error = now, outcome.error
        if outcome.size is not None:
            witness.size = outcome.size
        if outcome.cosignature is not None:
            line, stamp = outcome.cosignature
            db.add(
                EvidenceCosignature(
                    checkpoint_id=checkpoint.id,
                    witness_id=witness.id,
                    name=line[len(notes.DASH) :].split(" ", 1)[0],
                    line=line,
                    timestamp=stamp,
                    received_at=now,
                )
            )
            cosigned += 1
        if outcome.fork and witness.fork_detected_at is None:
            witness.fork_detected_at = now
            _raise_fork_alarm(db, checkpoint, witness, now)
    db.flush()
    return cosigned


def _raise_fork_alarm(db: Session, checkpoint: EvidenceCheckpoint, witness: EvidenceWitness, now: dt.datetime) -> None:
    log.error(
        "witness %s refused checkpoint %d of organization %s: it cosigned a log this one does not extend",
        witness.name,
        checkpoint.seq,
        checkpoint.organization_id,
    )
    checkpoints.emit(
        db,
        checkpoint.organization_id,
        outbox.EVIDENCE_FORK_DETECTED,
        {
            "organizationId": checkpoint.organization_id,
            "checkpoint": checkpoints.document(
                checkpoint, witnesses.cosignatures_of(db, [checkpoint.id]).get(checkpoint.id, [])
            ),
            "treeSize": checkpoint.seq,
            "detectedAt": timestamp(now),
            "witness": {"id": witness.id, "name": witness.name, "size": witness.size},
        },
    )


def _submit_all(
    found: list[Target],
    note: str,
    size: int,
    prove: Callable[[int], list[bytes] | None],
    policy: DestinationPolicy,
    wait: float,
) -> list[Outcome]:
    """Every witness at once; what answered within `wait` seconds (the rest are let run out)."""
    if not found:
        return []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(found))
    futures = [pool.submit(submit, target, note, size, prove, policy) for target in found]
    done, _ = concurrent.futures.wait(futures, timeout=wait)
    pool.shutdown(wait=False)
    return [future.result() for future in done]


def cosign_now(
    db: Session, checkpoint: EvidenceCheckpoint, policy: DestinationPolicy, *, wait: float = QUORUM_WAIT_SECONDS
) -> bool:
    """Ask every witness to cosign a checkpoint being exported, waiting at most `wait` seconds, and
    keep what they answer; whether the checkpoint is witnessed (cosigned by the quorum). 409
    `evidence_inconsistent` when a witness answers that it cosigned another log.

    The checkpoint must cover only committed events: a witness keeps what it cosigned even when
    the caller's transaction is then rolled back."""
    organization_id = checkpoint.organization_id
    found = targets(db, organization_id, checkpoint)
    if found and checkpoint.note:
        # The proofs are read in the caller's session, one thread at a time, and never once the
        # caller stopped waiting (it uses the session again).
        lock = threading.Lock()
        read = tree.reader(db, organization_id)
        waiting = [True]

        def prove(old: int) -> list[bytes] | None:
            with lock:
                return merkle.consistency_proof(old, checkpoint.seq, read) if waiting[0] else None

        started = time.monotonic()
        outcomes = _submit_all(found, checkpoint.note, checkpoint.seq, prove, policy, wait)
        with lock:
            waiting[0] = False
        record(db, checkpoint, outcomes)
        log.info("witnesses answered %d of %d in %.2f s", len(outcomes), len(found), time.monotonic() - started)
        if any(outcome.fork for outcome in outcomes):
            # The export signs nothing. Its transaction is rolled back with the alarm: the worker's
            # next round meets the same refusal and raises the alarm in a transaction of its own.
            checkpoints.refuse_witnessed_fork(db, organization_id)
    return witnessed(db, checkpoint)


def witnessed(db: Session, checkpoint: EvidenceCheckpoint) -> bool:
    count = len(witnesses.cosignatures_of(db, [checkpoint.id]).get(checkpoint.id, []))
    return count > 0 and count >= witnesses.quorum(db, organization_id=checkpoint.organization_id)


def submit_due(session_factory: sessionmaker[Session], policy: DestinationPolicy) -> int:
    """The worker's round: each organization's latest checkpoint to each witness that has not
    cosigned it yet; how many cosignatures came. No transaction is held while witnesses answer."""
    with session_factory() as db:
        work: list[tuple[EvidenceCheckpoint, str, list[Target]]] = []
        for organization_id in db.scalars(select(EvidenceWitness.organization_id).distinct()).all():
            checkpoint = checkpoints.latest(db, organization_id)
            if checkpoint is not None and checkpoint.note:
                found = targets(db, organization_id, checkpoint)
                if found:
                    work.append((checkpoint, checkpoint.note, found))
    cosigned = 0
    for checkpoint, note, found in work:

        def prove(
            old: int, organization_id: str = checkpoint.organization_id, size: int = checkpoint.seq
        ) -> list[bytes]:
            with session_factory() as db:
                return merkle.consistency_proof(old, size, tree.reader(db, organization_id))

        outcomes = [submit(target, note, checkpoint.seq, prove, policy) for target in found]
        with session_factory.begin() as db:
            cosigned += record(db, db.merge(checkpoint), outcomes)
    return cosigned


class Cosigner:
    """The worker's checkpoints of growing logs, each round followed by their submission to the
    witnesses that have not cosigned them yet."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        signer: Signer,
        policy: DestinationPolicy,
        *,
        every_seconds: float = 30.0,
    ) -> None:
        self.session_factory, self.policy = session_factory, policy
        self.checkpointer = checkpoints.Checkpointer(session_factory, signer, every_seconds=every_seconds)

    def __call__(self) -> None:
        if not self.checkpointer():
            return
        try:
            submit_due(self.session_factory, self.policy)
        except Exception as exc:  # a database outage must not end the worker
            log.warning("evidence cosignatures failed: %s: %s", type(exc).__name__, exc)
