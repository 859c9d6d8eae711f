"""The email domains organizations claim for single sign-on, and their proof through DNS
(docs/decisions.md §2). A claim does nothing until its organization publishes the claim's TXT
record and asks for the check; then the domain routes sign-ins and just-in-time accounts to it,
and nobody else may claim it."""

from __future__ import annotations

import dataclasses
import secrets

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from kindling.accounts.events import SSO_DOMAIN_VERIFIED
from kindling.accounts.models import SsoConnection, SsoDomain
from kindling.errors import Conflict, NotFound, ServiceUnavailable
from kindling.evidence import log as evidence
from kindling.platform import dns_lookup
from kindling.platform.base import utcnow

RECORD_PREFIX = "_kindling-challenge."
VALUE_PREFIX = "kindling-domain-verification="


@dataclasses.dataclass(frozen=True)
class Record:
    """The DNS record that proves a claim: a TXT record `value` at `name`."""

    name: str
    value: str
    type: str = "TXT"


def record_of(claim: SsoDomain) -> Record:
    return Record(name=RECORD_PREFIX + claim.domain, value=VALUE_PREFIX + claim.verification_token)


def normal(domain: str) -> str:
    """One spelling per domain: no case, no surrounding space, no trailing dot."""
    return domain.strip().lower().rstrip(".")


def claims(db: Session, *, organization_id: str) -> list[SsoDomain]:
    """The organization's claims, verified or not, by domain."""
    return list(
        db.scalars(select(SsoDomain).where(SsoDomain.organization_id == organization_id).order_by(SsoDomain.domain))
    )


def verified_domains(db: Session, *, organization_id: str) -> set[str]:
    return set(
        db.scalars(
            select(SsoDomain.domain).where(
                SsoDomain.organization_id == organization_id, SsoDomain.verified_at.is_not(None)
            )
        )
    )


def owner_of(db: Session, *, domain: str) -> str | None:
    """The organization that verified `domain`, if one did."""
    return db.scalar(
        select(SsoDomain.organization_id).where(SsoDomain.domain == normal(domain), SsoDomain.verified_at.is_not(None))
    )


def replace_claims(db: Session, *, organization_id: str, domains: list[str]) -> list[SsoDomain]:
    """Make the organization claim exactly `domains` (normalised): a domain it keeps keeps its
    token and verification, a new one gets a token, a dropped one loses both. 409
    `email_domain_taken` for a domain another organization verified; another's unverified claim
    blocks nothing."""
    wanted = {normal(domain) for domain in domains}
    taken = db.scalars(
        select(SsoDomain.domain)
        .where(
            SsoDomain.domain.in_(wanted),
            SsoDomain.organization_id != organization_id,
            SsoDomain.verified_at.is_not(None),
        )
        .order_by(SsoDomain.domain)
    ).first()
    if taken is not None:
        raise _taken(taken)
    held = {claim.domain: claim for claim in claims(db, organization_id=organization_id)}
    for domain in held.keys() - wanted:
        db.delete(held.pop(domain))
    now = utcnow()
    for domain in wanted - held.keys():
        held[domain] = SsoDomain(
            domain=domain, organization_id=organization_id, verification_token=_new_token(), created_at=now
        )
        db.add(held[domain])
    db.flush()
    return [held[domain] for domain in sorted(held)]


def verify(
    db: Session,
    *,
    organization_id: str,
    actor_id: str,
    domain: str,
    nameservers: tuple[tuple[str, int], ...],
    timeout: float,
) -> SsoDomain:
    """Check the claim's TXT record through DNS and, when it is there, verify the claim and drop
    every other organization's claim of the domain. Verified already: nothing to do. 404 for a
    domain the organization does not claim; 409 `domain_not_verified` naming the record
    expected; 409 `email_domain_taken` when another organization verified it first; 503
    `dns_unavailable` when the resolvers do not answer."""
    domain = normal(domain)
    claim = _claim(db, organization_id=organization_id, domain=domain)
    if claim.verified_at is not None:
        return claim
    record = record_of(claim)
    # Before any lock: the resolvers may take their whole timeout.
    try:
        values = dns_lookup.txt_values(record.name, nameservers=nameservers, timeout=timeout)
    except dns_lookup.DnsUnavailable as exc:
        raise ServiceUnavailable(f"The domain could not be checked: {exc}", code="dns_unavailable") from None
    if record.value not in (value.strip() for value in values):
        raise Conflict(
            f"No TXT record {record.value} at {record.name} yet; publish it and check again",
            code="domain_not_verified",
            details={"record": dataclasses.asdict(record)},
        )
    # Changes to one organization's settings are serialised on its connection (sso_settings).
    db.get(SsoConnection, organization_id, with_for_update=True)
    claim = _claim(db, organization_id=organization_id, domain=domain, lock=True)
    if claim.verified_at is not None:
        return claim
    owner = owner_of(db, domain=domain)
    if owner is not None:
        raise _taken(domain)
    claim.verified_at = utcnow()
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:  # another organization verified it meanwhile
        raise _taken(domain) from None
    db.execute(delete(SsoDomain).where(SsoDomain.domain == domain, SsoDomain.organization_id != organization_id))
    evidence.append(
        db,
        organization_id=organization_id,
        type=SSO_DOMAIN_VERIFIED,
        subject=("organization", organization_id),
        actor_id=actor_id,
        data={"domain": domain},
    )
    return claim


def _claim(db: Session, *, organization_id: str, domain: str, lock: bool = False) -> SsoDomain:
    statement = select(SsoDomain).where(SsoDomain.organization_id == organization_id, SsoDomain.domain == domain)
    if lock:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    claim = db.scalar(statement)
    if claim is None:
        raise NotFound("The organization's single sign-on settings claim no such domain", code="not_found")
    return claim


def _taken(domain: str) -> Conflict:
    return Conflict(f"{domain} is verified by another organization", code="email_domain_taken")


def _new_token() -> str:
    """128 random bits in hex: plain characters that survive any DNS provider's form."""
    return secrets.token_hex(16)
