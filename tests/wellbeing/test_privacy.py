"""Published wellbeing figures hold against an admin who controls accounts (docs/decisions.md §7).

Each figure rests on its own five people, and every published figure carries differential
privacy noise; the puppet attack (four accounts with known answers and one target) no longer
recovers the target's answer.
"""

from __future__ import annotations

import collections
import datetime as dt
import statistics
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy import select

from kindling.evidence.models import EvidenceEvent
from kindling.platform import periods
from kindling.platform.base import utcnow
from kindling.wellbeing import noise
from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.models import WellbeingWeek

# Each neighbouring pair of answers differs by under 0.05 in any guess's true frequency; with 1000
# trials a sampled difference reaches 0.15 less than once in 10^4 runs.
TRIALS = 1000
PUPPETS = (5, 4, 4, 3)


def weeks_ago(weeks: int) -> dt.datetime:
    return utcnow() - dt.timedelta(weeks=weeks)


def organization_figures(client, admin, period: str = "week") -> dict:
    response = client.get("/api/wellbeing", params={"scope": "organization", "period": period}, headers=admin.headers)
    assert response.status_code == 200
    return response.json()["data"]


def test_energy_and_sentiment_each_rest_on_their_own_five(client, make, db):
    admin = make.admin()
    people = [make.member(admin) for _ in range(5)]
    make.response(people[0], mood=2, energy=1, comment="I am exhausted and miserable", created_at=weeks_ago(2))
    for person in people[1:]:
        make.response(person, mood=4, created_at=weeks_ago(2))
    # The week after, five more people, each giving both.
    for person in [make.member(admin) for _ in range(5)]:
        make.response(person, mood=4, energy=5, comment="A wonderful, happy week", created_at=weeks_ago(1))
    *_, first, last = organization_figures(client, admin, "month")["byWeek"]
    # Five people answered in the first week, so mood and stress are published; one gave energy and one commented.
    assert first["suppressed"] is False and 1 <= first["averages"]["mood"] <= 5
    assert (first["averages"]["energy"], first["averages"]["energySuppressed"]) == (None, True)
    assert first["sentiment"] == {"positive": None, "neutral": None, "negative": None, "suppressed": True}
    # In the last, five gave each.
    data = organization_figures(client, admin)
    assert data["byWeek"] == [last]
    assert data["averages"]["energySuppressed"] is False and 1 <= data["averages"]["energy"] <= 5
    assert data["sentiment"]["suppressed"] is False
    assert all(data["sentiment"][label] >= 0 for label in wellbeing.SENTIMENT_LABELS)


def test_each_publication_is_in_the_evidence_log_as_published(client, make, db):
    admin = make.admin()
    for person in [make.member(admin) for _ in range(5)]:
        make.response(person, mood=3, energy=4, created_at=weeks_ago(1))
    served = organization_figures(client, admin)
    week = db.scalars(select(WellbeingWeek).where(WellbeingWeek.organization_id == admin.organization_id)).one()
    (event,) = db.scalars(
        select(EvidenceEvent).where(
            EvidenceEvent.organization_id == admin.organization_id, EvidenceEvent.type == "wellbeing.published"
        )
    ).all()
    assert (event.subject_kind, event.subject_id, event.actor_id) == (
        "wellbeing_week",
        week.week_start.isoformat(),
        None,
    )
    assert event.data == wellbeing.published_data(week)
    assert event.data["privacy"] == {"epsilon": 1.0, "mechanism": "laplace", "epsilonSpent": 1.0}
    assert served["averages"]["mood"] == event.data["averages"]["mood"]
    assert served["respondents"] == event.data["respondents"]
    verified = client.get("/api/evidence/verify", headers=admin.headers)
    assert verified.status_code == 200 and verified.json()["intact"] is True


def _week(target: int) -> list[noise.Person]:
    return [noise.Person(mood=mood, stress=3, energy=None, answers=1, sentiment=None) for mood in (*PUPPETS, target)]


def _exact_average(people: list[noise.Person]) -> float:
    """The figure as published before noise: the plain average, 2 decimals half up."""
    mean = Decimal(sum(int(person.mood) for person in people)) / len(people)
    return float(mean.quantize(Decimal("0.01"), ROUND_HALF_UP))


def _attack(published_mood: float) -> float:
    """Four puppets with known answers and one target: estimate = 5 × mean − sum of the puppets."""
    return 5 * published_mood - sum(PUPPETS)


def test_the_puppet_attack_no_longer_recovers_the_target(capsys):
    report, guessed = [], {}
    for target in range(1, 6):
        baseline = [_attack(_exact_average(_week(target))) for _ in range(TRIALS)]
        noisy = [_attack(noise.release(_week(target)).mood_average) for _ in range(TRIALS)]
        # Without noise the target falls out exactly, every time.
        assert all(round(estimate) == target for estimate in baseline)
        recovered = sum(round(estimate) == target for estimate in noisy) / TRIALS
        errors = sorted(abs(estimate - target) for estimate in noisy)
        # The attacker's best use of an estimate: rounded and clamped to the scale.
        guessed[target] = collections.Counter(min(max(round(estimate), 1), 5) for estimate in noisy)
        report.append(
            (target, recovered, guessed[target][target] / TRIALS, statistics.median(errors), errors[int(0.9 * TRIALS)])
        )
        assert recovered < 0.3, (target, recovered)
        assert statistics.median(errors) > 1.5
    # Neighbouring answers look alike: every guess is about as likely whichever of the two is true.
    for target in range(1, 5):
        for guess in range(1, 6):
            assert abs(guessed[target][guess] - guessed[target + 1][guess]) / TRIALS < 0.15, (target, guess, guessed)
    with capsys.disabled():
        for target, recovered, clamped, median, ninetieth in report:
            print(
                f"\npuppet attack, target mood {target}: estimate rounded to it in {recovered:.0%} of {TRIALS} trials, "
                f"clamped guess right in {clamped:.0%} (without noise 100%); "
                f"error median {median:.2f}, 90th percentile {ninetieth:.2f}",
                end="",
            )


def test_the_noise_is_scaled_to_one_person_and_unbiased_for_larger_groups():
    people = [noise.Person(mood=1 + i % 5, stress=2, energy=4, answers=1, sentiment="neutral") for i in range(200)]
    releases = [noise.release(people) for _ in range(100)]
    assert abs(statistics.mean(release.respondents for release in releases) - 200) < 3
    assert abs(statistics.mean(release.mood_average for release in releases) - 3.0) < 0.05
    assert abs(statistics.mean(release.energy_average for release in releases) - 4.0) < 0.1
    assert sum(noise.BUDGET.values()) == 1
    assert noise.scale("mood") == (noise.HIGHEST - noise.CENTRE) / (noise.BUDGET["mood"] * noise.EPSILON)


PUPPET_ACCOUNTS = 30
ROUNDS = 10
# A Wednesday: the week of the attack, and the Monday it ends.
ATTACKED = dt.datetime(2031, 3, 5, 12, tzinfo=dt.UTC)
ENDED = dt.datetime(2031, 3, 10, 1, tzinfo=dt.UTC)


def test_puppets_answering_one_week_again_and_again_get_one_release(client, make, db, monkeypatch):
    """Break 4 re-run: thirty puppet accounts answer the target's week round after round through
    the API, and the admin reads the figures after every round, before and after the week ends."""
    clock = [ATTACKED]
    monkeypatch.setattr(periods, "utcnow", lambda: clock[0])
    admin = make.admin()
    target, puppets = make.member(admin), [make.member(admin) for _ in range(PUPPET_ACCOUNTS)]
    assert client.post("/api/wellbeing", json={"mood": 1, "stress": 5}, headers=target.headers).status_code == 201

    def attack() -> list[dict | None]:
        read = []
        for _ in range(ROUNDS):
            for puppet in puppets:
                answered = client.post("/api/wellbeing", json={"mood": 3, "stress": 3}, headers=puppet.headers)
                assert answered.status_code == 201
            figures = client.get(
                "/api/wellbeing", params={"scope": "organization", "period": "week"}, headers=admin.headers
            )
            read.append(figures.json()["data"])
        return read

    # While the week is open nothing is released, however often the puppets answer.
    assert attack() == [None] * ROUNDS
    assert published_events(db, admin) == []

    # Once it has ended: one publication, spending ε = 1 once, and every read serves it.
    clock[0] = ENDED
    released = attack()
    [event] = published_events(db, admin)
    assert event.data["privacy"] == {"epsilon": 1.0, "mechanism": "laplace", "epsilonSpent": 1.0}
    assert all(data == released[0] for data in released)
    assert released[0]["byWeek"][0]["epsilonSpent"] == 1.0
    assert released[0]["averages"]["mood"] == event.data["averages"]["mood"]

    # Averaging everything released is the estimate of one release: its error is the single-release
    # error test_the_puppet_attack_no_longer_recovers_the_target measures.
    people = PUPPET_ACCOUNTS + 1
    averaged = statistics.mean(data["averages"]["mood"] for data in released)
    assert people * averaged - 3 * PUPPET_ACCOUNTS == people * released[0]["averages"]["mood"] - 3 * PUPPET_ACCOUNTS
    # Had every round been a release of its own, as before, averaging 3,000 of them recovered the
    # target to within a fraction of a point (about 0.3), where one release misses by several points.
    week = [noise.Person(mood=3, stress=3, energy=None, answers=ROUNDS, sentiment=None)] * PUPPET_ACCOUNTS + [
        noise.Person(mood=1, stress=5, energy=None, answers=1, sentiment=None)
    ]
    independent = statistics.mean(noise.release(week).mood_average for _ in range(3000))
    single = [abs(people * noise.release(week).mood_average - 3 * PUPPET_ACCOUNTS - 1) for _ in range(TRIALS)]
    assert abs(people * independent - 3 * PUPPET_ACCOUNTS - 1) < 1.5
    assert statistics.median(single) > 4


def published_events(db, admin) -> list[EvidenceEvent]:
    return list(
        db.scalars(
            select(EvidenceEvent).where(
                EvidenceEvent.organization_id == admin.organization_id, EvidenceEvent.type == "wellbeing.published"
            )
        )
    )
