"""The principals of sessions this process checked lately, so most requests skip the database."""

from __future__ import annotations

import threading
import time

from kindling.platform.access import Principal

# How long a process trusts what it learnt of a session: a revocation elsewhere reaches it after this.
PRINCIPAL_TTL = 1.0


class PrincipalCache:
    """The principals of sessions this process saw lately, each kept PRINCIPAL_TTL seconds.

    Kept in the process, not in Redis: a revocation must reach every process within 2 seconds
    (docs/decisions.md §10) even while Redis is down, and a shared copy written before the
    revocation could outlive it in a Redis the revoking process cannot reach. A copy that lives
    at most a second anywhere cannot; the revoking process forgets its own copy at once.
    """

    def __init__(self, ttl: float = PRINCIPAL_TTL, max_entries: int = 100_000) -> None:
        self._ttl = ttl
        self._max_entries = max_entries
        self._entries: dict[str, tuple[float, Principal]] = {}
        self._lock = threading.Lock()

    def get(self, token_hash: str) -> Principal | None:
        entry = self._entries.get(token_hash)
        if entry is None or entry[0] <= time.monotonic():
            return None
        return entry[1]

    def put(self, token_hash: str, principal: Principal, ttl: float, *, read_at: float) -> None:
        """Keep `principal`, read from the database at `read_at` (time.monotonic()), for at most
        PRINCIPAL_TTL from that read: a lookup that took long keeps no stale copy past the bound."""
        expires = read_at + min(ttl, self._ttl)
        with self._lock:
            if len(self._entries) >= self._max_entries:
                now = time.monotonic()
                self._entries = {key: entry for key, entry in self._entries.items() if entry[0] > now}
                if len(self._entries) >= self._max_entries:
                    self._entries.clear()
            self._entries[token_hash] = (expires, principal)

    def forget(self, token_hashes: list[str]) -> None:
        with self._lock:
            for token_hash in token_hashes:
                self._entries.pop(token_hash, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


principals = PrincipalCache()
