"""The evidence log: hashing, chaining, keys and signatures, the log itself and its models (docs/evidence.md).

`chain`, `keys` and `verify_command` touch neither the database nor the app, so the offline
verifier runs with them alone.
"""
