"""A circuit breaker: after a failure, a dependency is skipped for a while instead of awaited."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class CircuitBreaker:
    """Runs calls to one dependency, and after a failure sends them to a fallback for `cooldown`
    seconds; then one call at a time probes the dependency until it answers again.

    A dependency that refuses connections fails in microseconds, but one that hangs costs its
    socket timeout on every call: the breaker makes an outage cost one timeout per cooldown.
    """

    def __init__(
        self,
        name: str,
        *,
        errors: tuple[type[BaseException], ...],
        cooldown: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._errors = errors
        self._cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._retry_at: float | None = None  # None while the dependency is trusted
        self._catch_up: list[Callable[[], None]] = []

    def before_trusting_again(self, callback: Callable[[], None]) -> None:
        """Have each probe after an outage run `callback` against the dependency before its own call:
        what the dependency missed meanwhile. A failure of it fails the probe."""
        self._catch_up.append(callback)

    @property
    def trusted(self) -> bool:
        """Whether calls go straight to the dependency: no outage is being waited out or probed."""
        return self._retry_at is None

    def call(self, operation: Callable[[], T], fallback: Callable[[], T]) -> T:
        """`operation()` while the dependency is trusted or being probed, else `fallback()`."""
        admitted = self._admit()
        if admitted is None:
            return fallback()
        try:
            if admitted == "probe":
                for callback in self._catch_up:
                    callback()
            result = operation()
        except self._errors as exc:
            self._trip(exc)
            return fallback()
        if admitted == "probe":
            self._recover()
        return result

    def _admit(self) -> str | None:
        # The common case needs no lock: reading one attribute is atomic.
        if self._retry_at is None:
            return "closed"
        with self._lock:
            if self._retry_at is None:
                return "closed"
            if self._clock() < self._retry_at:
                return None
            # This caller probes; everyone else keeps to the fallback until it knows.
            self._retry_at = self._clock() + self._cooldown
            return "probe"

    def _trip(self, exc: BaseException) -> None:
        with self._lock:
            opened = self._retry_at is None
            self._retry_at = self._clock() + self._cooldown
        if opened:
            log.warning(
                "%s unavailable, falling back to this process for %g s at a time: %s", self.name, self._cooldown, exc
            )

    def _recover(self) -> None:
        with self._lock:
            if self._retry_at is None:
                return
            self._retry_at = None
        log.info("%s available again", self.name)
