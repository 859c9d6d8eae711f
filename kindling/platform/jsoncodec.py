"""JSON text encoded by orjson: every response body, and answers stored already encoded.

Output matches what Connexion's defaults produced, compactly: aware datetimes as ISO 8601 with
their offset, dates as ISO dates, UUIDs as strings, Decimals as numbers, non-string keys as
strings (naive datetimes, which Connexion marked with Z, get +00:00). orjson also writes NaN
and infinities as null where the standard library wrote invalid JSON, and refuses integers
beyond 64 bits.
"""

from __future__ import annotations

import decimal

import orjson

# Naive datetimes are UTC here, as Connexion's encoder assumes too.
OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_NON_STR_KEYS


def _default(value: object) -> float:
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(data: object) -> bytes:
    """`data` as compact JSON."""
    return orjson.dumps(data, default=_default, option=OPTIONS)
