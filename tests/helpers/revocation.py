"""Credentials called on from many clients while they are revoked, against live server processes:
how soon each process refuses them (docs/decisions.md §2, §10)."""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from collections.abc import Callable

import requests

# Every server process refuses a revoked credential within this many seconds.
BOUND = 2.0


def answers_around(
    servers, tokens: list[str], event: Callable[[], float], *, watch: float = 3.0
) -> dict[str, list[tuple[float, int]]]:
    """By token, (seconds after the moment `event()` returns, status) of GET /api/auth/session: one
    client per entry of `tokens` (a token may stand several times), each taking `servers` in turn,
    from half a second before the event until `watch` seconds after it."""
    calls: list[tuple[str, float, int]] = []
    stop = threading.Event()
    turns = itertools.cycle(servers)

    def keep_calling(token: str) -> None:
        while not stop.is_set():
            server = next(turns)
            started = time.monotonic()
            headers = {"Authorization": f"Bearer {token}"}
            status = requests.get(f"{server.url}/api/auth/session", headers=headers, timeout=10).status_code
            calls.append((token, started, status))

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(tokens)) as pool:
        running = [pool.submit(keep_calling, token) for token in tokens]
        time.sleep(0.5)  # every process has the credentials cached
        happened_at = event()
        time.sleep(watch)
        stop.set()
        for caller in running:
            caller.result()
    answers: dict[str, list[tuple[float, int]]] = {token: [] for token in tokens}
    for token, started, status in calls:
        answers[token].append((started - happened_at, status))
    return answers


def assert_refused_within_bound(answers: list[tuple[float, int]], *, asked: int) -> None:
    """Taken (and so cached) before the event, refused 401 from BOUND seconds after it, and asked
    more than `asked` times by then."""
    before = [status for after, status in answers if after < -0.2]
    assert before and set(before) == {200}, before
    late = [(round(after, 3), status) for after, status in answers if after >= BOUND and status != 401]
    assert not late, late
    assert len([after for after, _status in answers if after >= BOUND]) > asked, answers
