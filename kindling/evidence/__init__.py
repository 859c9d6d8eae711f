"""The evidence log's format: hashing, chaining, keys and signatures (docs/evidence.md).

Nothing here touches the database or the app, so the offline verifier can use it alone.
"""
