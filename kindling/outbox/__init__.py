"""The outbox of outbound webhooks: what features emit, in the transaction of the change it reports, and the tables the
delivery worker reads. It imports no feature, so every feature may emit."""

from .emitter import EVENT_TYPES, EVIDENCE_CHECKPOINT, EVIDENCE_FORK_DETECTED, emit, subscribed

__all__ = ["EVENT_TYPES", "EVIDENCE_CHECKPOINT", "EVIDENCE_FORK_DETECTED", "emit", "subscribed"]
