"""Acts recorded at the same moment by several server threads keep ripple counts and tallies exact."""

from __future__ import annotations

import collections
import datetime as dt
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.kindness.models import KindnessAct, KindnessTally
from tests.helpers import sign_up
from tests.helpers.cleanup import forget

PEOPLE = 5
ACTS_EACH = 12


@pytest.mark.live
def test_concurrent_creates_keep_ripple_counts_exact(live_server, runtime):
    server = live_server(RATE_LIMIT_MULTIPLIER="1000")
    admin = sign_up(server.url, organizationName="Concurrent Kindness")
    session = requests.get(f"{server.url}/api/auth/session", headers=admin.headers, timeout=10).json()["data"]
    organization_id = session["organization"]["id"]
    people = [admin] + [sign_up(server.url, joinCode=session["organization"]["joinCode"]) for _ in range(1, PEOPLE)]

    def record(first: int) -> list[int]:
        codes = []
        with requests.Session() as http:
            for k in range(ACTS_EACH):
                sender, recipient = people[(first + k) % PEOPLE], people[(first + k + 1) % PEOPLE]
                body = {
                    "description": "Passed on",
                    "category": "community",
                    "verificationLevel": 1,
                    "recipientId": recipient.id,
                }
                codes.append(
                    http.post(f"{server.url}/api/kindness", json=body, headers=sender.headers, timeout=30).status_code
                )
        return codes

    with ThreadPoolExecutor(PEOPLE) as pool:
        codes = [code for codes in pool.map(record, range(PEOPLE)) for code in codes]
    assert codes == [201] * PEOPLE * ACTS_EACH

    with Session(runtime.engine) as db:
        acts = list(db.scalars(select(KindnessAct).where(KindnessAct.organization_id == organization_id)))
        tallies = list(db.scalars(select(KindnessTally).where(KindnessTally.organization_id == organization_id)))
        forget(db, organization_id)
    window = dt.timedelta(days=30)
    sent = collections.defaultdict(list)
    for act in acts:
        sent[act.user_id].append(act.created_at)
    expected = {
        act.id: min(10, sum(act.created_at < at <= act.created_at + window for at in sent[act.recipient_id]))
        for act in acts
    }
    assert {act.id: act.ripple_count for act in acts} == expected
    assert [(t.category, t.acts, t.verification_sum, t.ripple_sum) for t in tallies] == [
        ("community", len(acts), len(acts), sum(expected.values()))
    ]
