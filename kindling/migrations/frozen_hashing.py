"""The evidence log's hashing rule as migrations 0011 and 0014 applied it, frozen.

A migration must keep doing what it did when it was written, so it never imports the live
`kindling.evidence.chain`, whose speed-ups may change. This is the rule in its plain form:
RFC 8785 canonical JSON of the event without `hash`, then lowercase hex SHA-256
(docs/evidence.md). Later migrations that append events import it too.
"""

import datetime as dt
import hashlib
import typing

import rfc8785

GENESIS_HASH = "0" * 64
HASHED_MEMBERS = ("seq", "organizationId", "type", "subject", "actorId", "data", "occurredAt", "prevHash")


def timestamp(moment: dt.datetime) -> str:
    """An event time as it is hashed: UTC, microseconds, always the same length."""
    return moment.astimezone(dt.UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def canonical(value: typing.Any) -> bytes:
    """RFC 8785 canonical JSON."""
    return rfc8785.dumps(value)


def event_hash(event: dict) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of the event's hashed members."""
    return hashlib.sha256(canonical({name: event[name] for name in HASHED_MEMBERS})).hexdigest()
