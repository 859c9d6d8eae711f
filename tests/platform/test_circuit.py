"""The circuit breaker in front of Redis: skip a failed dependency, probe it, catch it up."""

from __future__ import annotations

import logging
import time

import pytest
import redis

from kindling.platform.cache import RedisCache
from kindling.platform.circuit import CircuitBreaker


class Boom(Exception):
    pass


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Dependency:
    """Answers "up" or raises, counting the calls that reached it."""

    def __init__(self) -> None:
        self.down = False
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.down:
            raise Boom("refused")
        return "up"


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def breaker(clock):
    return CircuitBreaker("Thing", errors=(Boom,), cooldown=5, clock=clock)


def test_a_failure_sends_calls_to_the_fallback_until_the_cooldown_ends(breaker, clock, caplog):
    dependency = Dependency()
    assert breaker.call(dependency, lambda: "fallback") == "up"
    dependency.down = True
    assert breaker.call(dependency, lambda: "fallback") == "fallback"
    clock.now += 4.9
    assert [breaker.call(dependency, lambda: "fallback") for _ in range(3)] == ["fallback"] * 3
    assert dependency.calls == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["Thing unavailable, falling back to this process for 5 s at a time: refused"]


def test_one_probe_per_cooldown_until_it_answers(breaker, clock, caplog):
    caplog.set_level(logging.INFO, logger="kindling.platform.circuit")
    dependency = Dependency()
    dependency.down = True
    breaker.call(dependency, lambda: "fallback")
    clock.now += 5
    assert breaker.call(dependency, lambda: "fallback") == "fallback"  # the probe, still down
    assert breaker.call(dependency, lambda: "fallback") == "fallback"  # skipped: a new cooldown
    assert dependency.calls == 2
    dependency.down = False
    clock.now += 5
    assert breaker.call(dependency, lambda: "fallback") == "up"
    assert breaker.call(dependency, lambda: "fallback") == "up"
    assert dependency.calls == 4
    assert sum("unavailable" in r.getMessage() for r in caplog.records) == 1
    assert any(r.getMessage() == "Thing available again" for r in caplog.records)


def test_a_probe_catches_the_dependency_up_first(breaker, clock):
    dependency, order = Dependency(), []
    breaker.before_trusting_again(lambda: order.append("catch up"))
    breaker.call(dependency, lambda: None)
    assert order == []  # nothing to catch up on while it is trusted
    dependency.down = True
    breaker.call(dependency, lambda: None)
    dependency.down = False
    clock.now += 5
    breaker.call(lambda: order.append("call"), lambda: None)
    assert order == ["catch up", "call"]


def test_a_failed_catch_up_fails_the_probe(breaker, clock):
    dependency = Dependency()
    dependency.down = True
    breaker.before_trusting_again(dependency)
    breaker.call(dependency, lambda: None)
    clock.now += 5
    assert breaker.call(lambda: "up", lambda: "fallback") == "fallback"
    assert breaker.call(lambda: "up", lambda: "fallback") == "fallback"


def test_errors_it_does_not_know_are_not_outages(breaker):
    with pytest.raises(ZeroDivisionError):
        breaker.call(lambda: 1 / 0, lambda: "fallback")
    assert breaker.call(lambda: "up", lambda: "fallback") == "up"


def test_invalidations_a_hung_redis_missed_are_replayed_before_it_is_read(redis_service):
    breaker = CircuitBreaker("Redis", errors=(redis.RedisError, OSError), cooldown=0)
    prefix = f"test-circuit:{time.monotonic_ns()}:"
    cache = RedisCache(redis_service.url, breaker, prefix=prefix)
    cache.set("stats", "old", 300)
    control = redis.Redis(port=redis_service.port)
    try:
        # A paused Redis hangs but keeps its data, as one behind a broken network does.
        control.client_pause(1500, all=True)
        cache.delete("stats")  # waits out the 1 s socket timeout, then trips the breaker
        assert control.get(prefix + "stats") == b"old"  # answered once the pause is over
        assert cache.get("stats") is None
        assert control.get(prefix + "stats") is None
    finally:
        control.close()
