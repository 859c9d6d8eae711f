"""Credentials called on from many clients while they are revoked, against live server processes:
how soon each process refuses them (docs/decisions.md §2, §10)."""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

import requests

# Every server process refuses a revoked credential within this many seconds.
BOUND = 2.0


class Answer(NamedTuple):
    after: float  # seconds from the moment `event()` returned to the moment the call was sent
    status: int
    settled_before: bool  # answered before `event()` was called, so the credential was still good


def answers_around(
    servers, tokens: list[str], event: Callable[[], float], *, watch: float = 3.0
) -> dict[str, list[Answer]]:
    """By token, the answers of GET /api/auth/session: one
    client per entry of `tokens` (a token may stand several times), each taking `servers` in turn,
    from half a second before the event until `watch` seconds after it."""
    calls: list[tuple[str, float, float, int]] = []
    stop = threading.Event()
    turns = itertools.cycle(servers)

    def keep_calling(token: str) -> None:
        while not stop.is_set():
            server = next(turns)
            started = time.monotonic()
            headers = {"Authorization": f"Bearer {token}"}
            status = requests.get(f"{server.url}/api/auth/session", headers=headers, timeout=10).status_code
            calls.append((token, started, time.monotonic(), status))

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(tokens)) as pool:
        running = [pool.submit(keep_calling, token) for token in tokens]
        time.sleep(0.5)  # every process has the credentials cached
        # The event's change is committed before its response is read, so a call answered while the
        # event runs may already see it: only calls answered before it began count as "before".
        began = time.monotonic()
        happened_at = event()
        time.sleep(watch)
        stop.set()
        for caller in running:
            caller.result()
    answers: dict[str, list[Answer]] = {token: [] for token in tokens}
    for token, started, answered, status in calls:
        answers[token].append(Answer(started - happened_at, status, answered < began))
    return answers


def assert_refused_within_bound(answers: list[Answer], *, asked: int) -> None:
    """Taken (and so cached) before the event, refused 401 from BOUND seconds after it, and asked
    more than `asked` times by then."""
    before = [answer.status for answer in answers if answer.settled_before]
    assert before and set(before) == {200}, before
    late = [
        (round(answer.after, 3), answer.status) for answer in answers if answer.after >= BOUND and answer.status != 401
    ]
    assert not late, late
    assert len([answer for answer in answers if answer.after >= BOUND]) > asked, answers
