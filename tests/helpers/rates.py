"""A few days of the ECB's reference history, in the form the ECB publishes it, to import in tests."""

from __future__ import annotations

import hashlib

from sqlalchemy.orm import Session

from kindling.rates import service as rates

# The ECB's quotes of 26-30 October 2026 (a Monday to a Friday); RUB, unpublished since 2022, is N/A.
# KWD, which the ECB does not quote, is made up: a three-decimal currency to convert.
HISTORY = b"""Date,USD,JPY,HUF,ISK,GBP,KWD,RUB,
2026-10-30,1.1172,175.68,366.33,136,0.8338,0.3421,N/A,
2026-10-29,1.113,175.92,365.95,135.8,0.83578,0.3409,N/A,
2026-10-28,1.1133,175.86,366.88,135.8,0.83785,0.3412,N/A,
2026-10-27,1.115,175.97,367.48,136.4,0.83658,0.3415,N/A,
2026-10-26,1.1188,176.15,367.45,136.4,0.8382,0.3427,N/A,
"""
DIGEST = hashlib.sha256(HISTORY).hexdigest()


def load(db: Session, history: bytes = HISTORY) -> rates.Imported:
    """Replace the rate table with `history`."""
    return rates.import_history(db, data=history, source="tests")
