"""Twenty requests with one key at once, on two server processes sharing PostgreSQL: one effect."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kindling.kindness.models import KindnessAct
from tests.helpers import sign_up
from tests.helpers.cleanup import forget

REQUESTS = 20
ACT = {"description": "Stayed late to help", "category": "community", "verificationLevel": 1, "recipientId": "out-1"}


@pytest.mark.live
def test_twenty_requests_with_one_key_have_one_effect(live_server, runtime, settings):
    if settings.embedded or not settings.redis_url:
        pytest.skip("two server processes need PostgreSQL and Redis")
    server = live_server(workers=2, RATE_LIMIT_MULTIPLIER="1000")
    admin = sign_up(server.url, organizationName="Retried Kindness")
    headers = {**admin.headers, "Idempotency-Key": str(uuid.uuid4())}
    start = threading.Barrier(REQUESTS)

    def send(_: int) -> requests.Response:
        with requests.Session() as http:
            start.wait()
            return http.post(f"{server.url}/api/kindness", json=ACT, headers=headers, timeout=30)

    with ThreadPoolExecutor(REQUESTS) as pool:
        answers = list(pool.map(send, range(REQUESTS)))
    first = [answer for answer in answers if answer.status_code == 201 and "Idempotent-Replayed" not in answer.headers]
    assert len(first) == 1
    for answer in answers:
        if answer.status_code == 409:
            assert answer.json()["code"] == "idempotency_key_in_use"
            assert answer.headers["Retry-After"] == "1"
        else:
            assert answer.status_code == 201
            assert answer.json() == first[0].json()
    time.sleep(1)
    retried = requests.post(f"{server.url}/api/kindness", json=ACT, headers=headers, timeout=30)
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert retried.json() == first[0].json()

    organization_id = first[0].json()["data"]["organizationId"]
    with Session(runtime.engine) as db:
        count = db.scalar(
            select(func.count()).select_from(KindnessAct).where(KindnessAct.organization_id == organization_id)
        )
        forget(db, organization_id)
    assert count == 1
