"""`kindling evidence verify --report`: every figure of a JSON compliance export, recomputed from the
events of a bundle up to the report's head, as docs/evidence.md ("Recomputing a report") specifies."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal

from kindling.evidence import replay
from kindling.evidence.chain import GENESIS_HASH, BundleError
from kindling.platform.money import converted, half_even, major_units

# A record carries evidence at this verified level and above (docs/decisions.md §9).
EVIDENCE_LEVEL = 3
# External validation: an act attested by a third party (docs/decisions.md §6).
EXTERNAL_LEVEL = 5
# Closed calendar weeks of each period's wellbeing figures, before the week of the report's end.
PERIOD_WEEKS = {"week": 1, "month": 4, "quarter": 13, "year": 52}
# Giving requests that commit the company's money, and the one that carries evidence (docs/evidence.md).
COMMITTED, PAID = frozenset({"approved", "paid"}), "paid"
# A metric's figure from the report's indicator: (value, evidence), and money's unconverted amounts.
_Measure = Callable[[dict], tuple]


@dataclasses.dataclass
class _Counts:
    verified: int = 0
    total: int = 0

    def add(self, verified: bool) -> None:
        self.total += 1
        self.verified += bool(verified)

    def evidence(self) -> dict:
        return {"verified": self.verified, "total": self.total}


def check_report(bundle: dict, document: object) -> None:
    """Recompute every figure of the report from the (verified, whole) bundle; BundleError naming
    the first difference."""
    report = _report(document)
    head = report["evidenceHead"]
    if bundle["prevHash"] != GENESIS_HASH or (bundle["events"] and bundle["events"][0]["seq"] != 1):
        raise BundleError("a report is recomputed from the whole log: this bundle is an excerpt")
    if report["organizationId"] != bundle["organizationId"]:
        raise BundleError("the report is of another organization than the bundle")
    events = bundle["events"]
    if head["seq"] > bundle["head"]["seq"] or (head["seq"] and events[head["seq"] - 1]["hash"] != head["hash"]):
        raise BundleError(f"the bundle does not hold the report's evidence head {head['seq']}:{head['hash']}")
    figures = _figures(events[: head["seq"]], report)
    if figures["complianceRate"] != report["complianceRate"]:
        raise BundleError(
            f"complianceRate is {report['complianceRate']} in the report, {figures['complianceRate']} from the log"
        )
    _check_external_validation(events[: head["seq"]], report)
    for indicator in report["indicators"]:
        metric = indicator["metric"]
        value, evidence, *unconverted = figures["measures"][metric](indicator)
        checks = [("value", value, indicator["value"]), ("evidence", evidence, indicator["evidence"])]
        if unconverted:
            # A report issued before conversions states none: then there must be none.
            checks.append(("unconverted", unconverted[0], indicator.get("unconverted", {})))
        for name, expected, stated in checks:
            if expected != stated:
                raise BundleError(
                    f"{indicator['code']} ({metric}) {name} is {stated} in the report, {expected} from the log"
                )


def _report(document: object) -> dict:
    """The `data` of a JSON compliance export, with the members the check reads."""
    report = document.get("data") if isinstance(document, dict) else None
    members = ("organizationId", "period", "from", "to", "complianceRate", "indicators", "evidenceHead")
    if not isinstance(report, dict) or any(name not in report for name in members):
        raise BundleError("the report is not a JSON compliance export (POST /api/compliance/export, format json)")
    if report["period"] not in PERIOD_WEEKS or not isinstance(report["indicators"], list):
        raise BundleError("the report's period or indicators are not as a JSON compliance export has them")
    for indicator in report["indicators"]:
        if not isinstance(indicator, dict) or not {"code", "metric", "value", "unit", "evidence"} <= indicator.keys():
            raise BundleError("every indicator of the report must carry code, metric, value, unit and evidence")
    return report


def _moment(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _figures(events: list[dict], report: dict) -> dict:
    """Replay the events, then measure the records of the report's window and its published weeks."""
    states: dict[tuple[str, str], dict] = {}
    weeks: dict[str, dict] = {}
    for event in events:
        kind, subject_id = event["subject"]["kind"], event["subject"]["id"]
        if kind == "wellbeing_week":
            # The last publication of a week stands.
            weeks[subject_id] = event["data"]
        elif kind in replay.FIELDS:
            states[(kind, subject_id)] = replay.apply(states.get((kind, subject_id)), event)
    start, end = _moment(report["from"]), _moment(report["to"])
    acts, by_category = _Counts(), dict[str, _Counts]()
    check_ins, hundredths, participants = _Counts(), 0, set()
    donations = _Counts()
    giving = {"donation_match": _Counts(), "volunteer_grant": _Counts()}
    # Each money figure's amounts: (currency, createdAt, minor units), converted once the unit is known.
    amounts: dict[str, list[tuple[str, str, int]]] = {"donation": [], **{kind: [] for kind in giving}}
    members = 0
    for (kind, _), state in states.items():
        facts = replay.implied(kind, state)
        if kind == "member":
            # Participation's whole: the active members at the head, as the report counts them then.
            members += facts["active"] is True
            continue
        moment = facts.get("checkedInAt" if kind == "check_in" else "createdAt")
        if moment is None or not start <= _moment(moment) <= end:
            continue
        if kind == "act":
            verified = facts["verifiedLevel"] >= EVIDENCE_LEVEL
            acts.add(verified)
            by_category.setdefault(facts["category"], _Counts()).add(verified)
        elif kind == "check_in":
            check_ins.add(facts["verified"])
            if facts["verified"]:
                hundredths += round(Decimal(repr(facts["hours"])) * 100)
                participants.add(facts["userId"])
        elif kind == "donation":
            donations.add(facts["status"] == "succeeded")
            if facts["status"] == "succeeded":
                amounts["donation"].append((facts["currency"], moment, facts["amount"]))
        elif facts["status"] in COMMITTED and facts["kind"] in giving:
            giving[facts["kind"]].add(facts["status"] == PAID)
            amounts[facts["kind"]].append((facts["currency"], moment, facts["amount"]))
    quotes = _Quotes(report.get("rates", []))

    def money(figure: str, evidence: _Counts) -> _Measure:
        def measure(indicator: dict) -> tuple:
            total, unconverted = quotes.total(amounts[figure], indicator["unit"])
            return float(major_units(total, indicator["unit"])), evidence.evidence(), unconverted

        return measure

    records = acts.total + check_ins.total + donations.total
    evidenced = acts.verified + check_ins.verified + donations.verified
    published = [weeks[monday] for monday in _mondays(report["period"], end) if monday in weeks]
    responses = sum(week["responses"] for week in published)

    def survey(measure: str) -> _Measure:
        # The published (noisy) averages, weighted by each week's respondents, as the report takes them.
        weighted = [
            (Decimal(repr(week["averages"][measure])), week["respondents"])
            for week in published
            if week["averages"][measure] is not None and week["respondents"]
        ]
        count = sum(weight for _, weight in weighted)
        value = None if not count else _rounded(sum((v * w for v, w in weighted), Decimal(0)) / count, "0.01")
        return lambda _: (None if not published else value, {"verified": responses, "total": responses})

    def participation(_: dict) -> tuple[float | None, dict]:
        # The most people of one published week, of the active members; at most everyone.
        respondents = max((week["respondents"] for week in published), default=0)
        value = None if not published else min(_percent(respondents, members), 100.0)
        return value, {"verified": respondents, "total": members}

    def category(name: str) -> _Measure:
        counts = by_category.get(name, _Counts())
        return lambda _: (counts.total, counts.evidence())

    measures: dict[str, _Measure] = {
        "kindness_acts": lambda _: (acts.total, acts.evidence()),
        "verified_kindness_share": lambda _: (_percent(acts.verified, acts.total), acts.evidence()),
        "volunteer_hours": lambda _: (_rounded(Decimal(hundredths) / 100, "0.1"), check_ins.evidence()),
        "verified_check_ins": lambda _: (check_ins.verified, check_ins.evidence()),
        "volunteer_participants": lambda _: (len(participants), check_ins.evidence()),
        "donations_succeeded": lambda _: (donations.verified, donations.evidence()),
        # In the figure's unit, the report's currency: amounts in others at the listed quotes.
        "donation_amount": money("donation", donations),
        "matched_giving_amount": money("donation_match", giving["donation_match"]),
        "volunteer_grant_amount": money("volunteer_grant", giving["volunteer_grant"]),
        "wellbeing_participation": participation,
        "wellbeing_mood_average": survey("mood"),
        "wellbeing_stress_average": survey("stress"),
    }

    class Measures(dict[str, _Measure]):
        def __missing__(self, metric: str) -> _Measure:
            if metric.startswith("kindness_acts_"):
                return category(metric.removeprefix("kindness_acts_"))
            raise BundleError(f"the report names a metric this verifier does not know: {metric!r}")

    return {"complianceRate": _percent(evidenced, records), "measures": Measures(measures)}


class _Quotes:
    """The quotes a report lists, by currency and day; EUR's is 1 on every publication day."""

    def __init__(self, listed: object):
        if not isinstance(listed, list) or not all(
            isinstance(q, dict) and {"currency", "rateDate", "rate"} <= q.keys() for q in listed
        ):
            raise BundleError("the report's rates must be a list of {currency, rateDate, rate}")
        self._by_currency: dict[str, dict[str, str]] = {}
        for q in listed:
            self._by_currency.setdefault(q["currency"], {})[q["rateDate"]] = q["rate"]

    def _pair(self, source: str, target: str, day: str) -> tuple[str, str] | None:
        """Both quotes of the last listed day on or before `day` that quotes both, as the server chose."""
        others = [c for c in (source, target) if c != "EUR"]
        days = set.intersection(*(set(self._by_currency.get(c, {})) for c in others))
        last = max((d for d in days if d <= day), default=None)
        if last is None:
            return None
        rate = {"EUR": "1", **{c: self._by_currency[c][last] for c in others}}
        return rate[source], rate[target]

    def total(self, amounts: list[tuple[str, str, int]], unit: str) -> tuple[int, dict[str, int]]:
        """The amounts' sum in `unit`, each converted half-even at its day's quotes; and per
        currency, the amounts without them."""
        total, unconverted = 0, dict[str, int]()
        for currency, moment, amount in amounts:
            if currency == unit:
                total += amount
                continue
            day = _moment(moment).astimezone(dt.UTC).date().isoformat()
            quotes = self._pair(currency, unit, day)
            if quotes is None:
                unconverted[currency] = unconverted.get(currency, 0) + amount
                continue
            exact = converted(amount, source=currency, target=unit, source_rate=quotes[0], target_rate=quotes[1])
            total += half_even(exact)
        return total, dict(sorted(unconverted.items()))


def _check_external_validation(events: list[dict], report: dict) -> None:
    """`externalValidation` recomputed: the window's acts at verified level 5, grouped by the
    attesterKey of the answer that confirmed their level 5 (docs/evidence.md)."""
    stated = report.get("externalValidation")
    if not isinstance(stated, dict):
        raise BundleError("the report states no externalValidation, as every JSON compliance export does")
    acts: dict[str, dict] = {}
    keys: dict[str, str | None] = {}
    for event in events:
        if event["subject"]["kind"] != "act":
            continue
        act_id, data = event["subject"]["id"], event["data"]
        acts[act_id] = replay.apply(acts.get(act_id), event)
        if (
            event["type"] == "attestation.answered"
            and data["level"] == EXTERNAL_LEVEL
            and data["decision"] == "confirm"
        ):
            keys[act_id] = data.get("attesterKey")
    start, end = _moment(report["from"]), _moment(report["to"])
    by_key: dict[str | None, int] = {}
    for act_id, state in acts.items():
        facts = replay.implied("act", state)
        if (
            facts["verifiedLevel"] == EXTERNAL_LEVEL
            and facts["createdAt"]
            and start <= _moment(facts["createdAt"]) <= end
        ):
            by_key[keys.get(act_id)] = by_key.get(keys.get(act_id), 0) + 1
    total = sum(by_key.values())
    largest = max((count for key, count in by_key.items() if key is not None), default=0)
    expected = {
        "acts": total,
        "attesters": sum(key is not None for key in by_key),
        "largestShare": 0.0 if not total else _rounded(Decimal(largest) / total, "0.0001"),
    }
    if stated != expected:
        raise BundleError(f"externalValidation is {stated} in the report, {expected} from the log")


def _mondays(period: str, end: dt.datetime) -> list[str]:
    """The Mondays (ISO dates) of the period's closed calendar weeks, the week before that of `end` last."""
    current = (end.astimezone(dt.UTC) - dt.timedelta(days=end.astimezone(dt.UTC).weekday())).date()
    return [(current - dt.timedelta(weeks=n)).isoformat() for n in range(1, PERIOD_WEEKS[period] + 1)]


def _percent(part: int, whole: int) -> float:
    return 0.0 if not whole else _rounded(Decimal(100 * part) / whole, "0.1")


def _rounded(value: Decimal, places: str) -> float:
    return float(value.quantize(Decimal(places), ROUND_HALF_UP))
