"""The witnesses that cosign an organization's checkpoints, who added them, and the quorum.

Admins add, list and remove the organization's witnesses and set how many cosignatures make a
checkpoint `witnessed`; a consultant of the organization adds witnesses of its own and lists
those (the consulting slice checks the relationship). A witness is a name, the URL prefix of its
c2sp.org/tlog-witness submission API, checked by the outbound destination rules, and its vkey.
"""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from kindling.errors import Conflict, NotFound, invalid
from kindling.evidence import cosignatures
from kindling.evidence.chain import timestamp
from kindling.evidence.models import EvidenceCosignature, EvidenceWitness, EvidenceWitnessPolicy
from kindling.platform.base import utcnow
from kindling.platform.database import changed_rows
from kindling.platform.destinations import DestinationPolicy, RefusedDestination, check_url

MAX_WITNESSES = 20
DEFAULT_QUORUM = 1


def add_witness(
    db: Session,
    *,
    organization_id: str,
    name: str,
    url: str,
    verifier_key: str,
    policy: DestinationPolicy,
    consultant_id: str | None = None,
) -> EvidenceWitness:
    """A new witness of the organization's log; 400 for a URL the destination rules refuse or a
    vkey that is not an Ed25519 cosignature key, 409 past the limit or for a key already listed."""
    try:
        cosignatures.parse_vkey(verifier_key)
    except ValueError as exc:
        raise invalid("body", "verifierKey", str(exc), code="invalid_verifier_key") from None
    try:
        check_url(url, policy)
    except RefusedDestination as refused:
        raise invalid("body", "url", str(refused), code=refused.code) from None
    listed = db.scalars(select(EvidenceWitness.verifier_key).where(EvidenceWitness.organization_id == organization_id))
    keys = list(listed)
    if verifier_key in keys:
        raise Conflict("A witness with this verifier key is already listed", code="witness_exists")
    if len(keys) >= MAX_WITNESSES:
        raise Conflict(f"An organization may list at most {MAX_WITNESSES} witnesses", code="witness_limit_reached")
    witness = EvidenceWitness(
        organization_id=organization_id,
        consultant_id=consultant_id,
        name=name.strip(),
        url=url.rstrip("/"),
        verifier_key=verifier_key,
        created_at=utcnow(),
        size=0,
    )
    db.add(witness)
    db.flush()
    return witness


def list_witnesses(db: Session, *, organization_id: str, consultant_id: str | None = None) -> list[EvidenceWitness]:
    """The organization's witnesses, oldest first; only the consultant's own when one is given."""
    statement = select(EvidenceWitness).where(EvidenceWitness.organization_id == organization_id)
    if consultant_id is not None:
        statement = statement.where(EvidenceWitness.consultant_id == consultant_id)
    return list(db.scalars(statement.order_by(EvidenceWitness.created_at, EvidenceWitness.id)))


def remove_witness(db: Session, *, organization_id: str, witness_id: str) -> None:
    """Remove a witness; its cosignatures stay with the checkpoints they vouch for."""
    removed = changed_rows(
        db,
        delete(EvidenceWitness).where(
            EvidenceWitness.organization_id == organization_id, EvidenceWitness.id == witness_id
        ),
    )
    if not removed:
        raise NotFound("No such witness")


def quorum(db: Session, *, organization_id: str) -> int:
    found = db.get(EvidenceWitnessPolicy, organization_id)
    return found.quorum if found else DEFAULT_QUORUM


def set_quorum(db: Session, *, organization_id: str, quorum: int) -> int:
    found = db.get(EvidenceWitnessPolicy, organization_id)
    if found is None:
        db.add(EvidenceWitnessPolicy(organization_id=organization_id, quorum=quorum))
    else:
        found.quorum = quorum
    db.flush()
    return quorum


def policy_document(db: Session, *, organization_id: str) -> dict:
    count = db.scalar(select(func.count()).where(EvidenceWitness.organization_id == organization_id))
    return {"quorum": quorum(db, organization_id=organization_id), "witnesses": count}


def document(witness: EvidenceWitness) -> dict:
    return {
        "id": witness.id,
        "name": witness.name,
        "url": witness.url,
        "verifierKey": witness.verifier_key,
        "addedBy": "consultant" if witness.consultant_id else "organization",
        "consultantId": witness.consultant_id,
        "createdAt": timestamp(witness.created_at),
        "cosignedSize": witness.size,
        "lastAttemptAt": timestamp(witness.last_attempt_at) if witness.last_attempt_at else None,
        "lastError": witness.last_error,
        "forkDetectedAt": timestamp(witness.fork_detected_at) if witness.fork_detected_at else None,
    }


def cosignatures_of(db: Session, checkpoint_ids: list[str]) -> dict[str, list[EvidenceCosignature]]:
    """The stored cosignatures of these checkpoints, by checkpoint, in the order they came."""
    found: dict[str, list[EvidenceCosignature]] = {}
    if checkpoint_ids:
        rows = db.scalars(
            select(EvidenceCosignature)
            .where(EvidenceCosignature.checkpoint_id.in_(checkpoint_ids))
            .order_by(EvidenceCosignature.received_at, EvidenceCosignature.witness_id)
        )
        for row in rows:
            found.setdefault(row.checkpoint_id, []).append(row)
    return found


def fork_document(witness: EvidenceWitness) -> dict:
    """A witness's report of a fork, as verification shows it."""
    assert witness.fork_detected_at is not None, "only a witness that reported a fork"
    return {
        "witnessId": witness.id,
        "name": witness.name,
        "size": witness.size,
        "detectedAt": timestamp(witness.fork_detected_at),
    }


def forked(db: Session, *, organization_id: str) -> EvidenceWitness | None:
    """A witness that refused a checkpoint inconsistent with what it cosigned, if one did."""
    return db.scalar(
        select(EvidenceWitness)
        .where(EvidenceWitness.organization_id == organization_id, EvidenceWitness.fork_detected_at.is_not(None))
        .order_by(EvidenceWitness.fork_detected_at)
        .limit(1)
    )
