"""Handlers of the evidence log: verification, exports, checkpoints, proofs, witnesses and receipts."""

from __future__ import annotations

import datetime as dt

from connexion import NoContent

from kindling.evidence import checkpoints, receipts, witnesses
from kindling.evidence import log as evidence
from kindling.evidence.signing import signer_for
from kindling.platform import access
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.request import Reply, db, runtime


def _moment(text: str | None) -> dt.datetime | None:
    # The spec has checked the RFC 3339 form, which always carries a zone.
    return None if text is None else dt.datetime.fromisoformat(text)


def list_events(
    token_info: dict,
    limit: int,
    from_: str | None = None,
    to: str | None = None,
    subject_id: str | None = None,
    type_: str | None = None,
    cursor: str | None = None,
) -> Reply:
    caller = access.principal(token_info)
    events, next_cursor = evidence.list_events(
        db(),
        organization_id=caller.member_of,
        since=_moment(from_),
        until=_moment(to),
        subject_id=subject_id,
        type=type_,
        limit=limit,
        cursor=cursor,
    )
    return {"data": events, "nextCursor": next_cursor}, 200


def verify_chain(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return evidence.verify(db(), organization_id=caller.member_of), 200


def export_bundle(token_info: dict, body: dict) -> Reply:
    caller = access.principal(token_info)
    bundle = evidence.export(
        db(),
        signer_for(runtime().settings),
        organization_id=caller.member_of,
        since=_moment(body.get("from")),
        until=_moment(body.get("to")),
        policy=_policy(),
    )
    return bundle, 200


def list_checkpoints(token_info: dict, cursor: str | None = None, limit: int = 100) -> Reply:
    caller = access.principal(token_info)
    found, next_cursor = checkpoints.list_checkpoints(
        db(), organization_id=caller.member_of, limit=limit, cursor=cursor
    )
    return {"data": found, "nextCursor": next_cursor}, 200


def list_keys() -> Reply:
    return {"data": signer_for(runtime().settings).listed_keys()}, 200


def inclusion_proof(token_info: dict, seq: int, tree_size: int | None = None) -> Reply:
    caller = access.principal(token_info)
    return evidence.inclusion_proof(db(), organization_id=caller.member_of, seq=seq, tree_size=tree_size), 200


def consistency_proof(token_info: dict, from_: int, to: int | None = None) -> Reply:
    caller = access.principal(token_info)
    return evidence.consistency_proof(db(), organization_id=caller.member_of, old=from_, new=to), 200


def get_receipt(token_info: dict, kind: str, id_: str) -> Reply:
    return receipts.receipt(
        db(), signer_for(runtime().settings), caller=access.principal(token_info), kind=kind, record_id=id_
    ), 200


def list_witnesses(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    found = witnesses.list_witnesses(db(), organization_id=caller.member_of)
    return {"data": [witnesses.document(witness) for witness in found]}, 200


def add_witness(token_info: dict, body: dict) -> Reply:
    caller = access.principal(token_info)
    witness = witnesses.add_witness(
        db(),
        organization_id=caller.member_of,
        name=body["name"],
        url=body["url"],
        verifier_key=body["verifierKey"],
        policy=_policy(),
    )
    return {"data": witnesses.document(witness)}, 201


def remove_witness(token_info: dict, witness_id: str) -> Reply:
    caller = access.principal(token_info)
    witnesses.remove_witness(db(), organization_id=caller.member_of, witness_id=witness_id)
    return NoContent, 204


def set_witness_policy(token_info: dict, body: dict) -> Reply:
    caller = access.principal(token_info)
    witnesses.set_quorum(db(), organization_id=caller.member_of, quorum=body["quorum"])
    return {"data": witnesses.policy_document(db(), organization_id=caller.member_of)}, 200


def _policy() -> DestinationPolicy:
    return DestinationPolicy.from_settings(runtime().settings)
