"""Idempotency keys: a write retried with the same key answers what its first attempt answered."""
