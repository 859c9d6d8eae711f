"""Two managers deciding the same level of the same act at the same moment: one decision stands."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from kindling.accounts.models import User
from kindling.kindness.models import KindnessAct, KindnessTally
from kindling.kindness.verification_models import VerificationDecision
from tests.helpers import SignedUp, sign_up
from tests.helpers.cleanup import forget

ACTS = 8


@pytest.mark.live
def test_concurrent_decisions_on_one_level_store_one(live_server, runtime):
    # Two processes where the backends allow it (PostgreSQL and Redis), else two threads of one.
    server = live_server(workers=1 if runtime.settings.embedded else 2, RATE_LIMIT_MULTIPLIER="1000")
    admin = sign_up(server.url, organizationName="Racing Approvals")
    session = requests.get(f"{server.url}/api/auth/session", headers=admin.headers, timeout=10).json()["data"]
    organization_id = session["organization"]["id"]
    sender, *managers = (sign_up(server.url, joinCode=session["organization"]["joinCode"]) for _ in range(3))
    try:
        with Session(runtime.engine) as db:
            db.execute(update(User).where(User.id.in_([m.id for m in managers])).values(role="manager"))
            db.commit()
        act_ids = []
        for n in range(ACTS):
            body = {
                "description": f"Act {n}",
                "category": "community",
                "verificationLevel": 3,
                "recipientId": f"outsider-{n}",
            }
            response = requests.post(f"{server.url}/api/kindness", json=body, headers=sender.headers, timeout=30)
            assert response.status_code == 201, response.text
            act_ids.append(response.json()["data"]["id"])

        def decide(manager: SignedUp, act_id: str, start: threading.Barrier) -> int:
            start.wait()
            response = requests.post(
                f"{server.url}/api/kindness/{act_id}/verifications",
                json={"level": 3, "decision": "approve"},
                headers=manager.headers,
                timeout=30,
            )
            return response.status_code

        with ThreadPoolExecutor(2) as pool:
            for act_id in act_ids:
                start = threading.Barrier(2)
                codes = sorted(pool.map(decide, managers, [act_id] * 2, [start] * 2))
                assert codes == [201, 409], act_id

        with Session(runtime.engine) as db:
            decisions = db.execute(
                select(VerificationDecision.act_id, VerificationDecision.decided_by).where(
                    VerificationDecision.act_id.in_(act_ids)
                )
            ).all()
            assert sorted(act_id for act_id, _ in decisions) == sorted(act_ids)
            assert {decided_by for _, decided_by in decisions} <= {m.id for m in managers}
            levels = db.scalars(
                select(KindnessAct.verified_level).where(KindnessAct.organization_id == organization_id)
            ).all()
            assert levels == [3] * ACTS
            tally = db.scalar(
                select(KindnessTally.verification_sum).where(KindnessTally.organization_id == organization_id)
            )
            assert tally == 3 * ACTS
        stats = requests.get(f"{server.url}/api/kindness/stats", headers=admin.headers, timeout=10).json()["data"]
        assert (stats["total"], stats["totalRippleScore"]) == (ACTS, 3 * ACTS)
    finally:
        with Session(runtime.engine) as db:
            acts = select(KindnessAct.id).where(KindnessAct.organization_id == organization_id)
            db.execute(delete(VerificationDecision).where(VerificationDecision.act_id.in_(acts)))
            db.commit()
            forget(db, organization_id)
