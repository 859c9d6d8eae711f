"""The metric vocabulary of compliance reports and the framework file that maps disclosure codes to it."""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

import yaml

from kindling.errors import NotFound

FRAMEWORKS_FILE = "frameworks.yaml"

# A donation amount is in the organization's own currency; the report replaces this
# placeholder with the organization's ISO 4217 code.
CURRENCY_UNIT = "currency"


@dataclass(frozen=True)
class Metric:
    """What the service computes per organization and period, and what counts as its evidence."""

    unit: str
    description: str


METRICS: Mapping[str, Metric] = MappingProxyType(
    {
        "kindness_acts": Metric("acts", "Kindness acts recorded; evidence: acts with verifiedLevel >= 3 of all acts."),
        "kindness_acts_peer_recognition": Metric(
            "acts", "Acts in category peer_recognition; evidence: those with verifiedLevel >= 3 of the category."
        ),
        "kindness_acts_community": Metric(
            "acts", "Acts in category community; evidence: those with verifiedLevel >= 3 of the category."
        ),
        "kindness_acts_wellbeing": Metric(
            "acts", "Acts in category wellbeing; evidence: those with verifiedLevel >= 3 of the category."
        ),
        "verified_kindness_share": Metric(
            "percent", "Share of acts with verifiedLevel >= 3; evidence: those acts of all acts."
        ),
        "volunteer_hours": Metric(
            "hours",
            "Hours of verified check-ins only (each the opportunity's length); "
            "evidence: verified check-ins of all check-ins.",
        ),
        "verified_check_ins": Metric(
            "check-ins", "Verified volunteer check-ins; evidence: verified check-ins of all check-ins."
        ),
        "volunteer_participants": Metric(
            "people", "People with at least one verified check-in; evidence: verified check-ins of all check-ins."
        ),
        "donations_succeeded": Metric(
            "donations", "Donations that succeeded; evidence: succeeded donations of all donations."
        ),
        "donation_amount": Metric(
            CURRENCY_UNIT,
            "Succeeded donations in major currency units; evidence: succeeded donations of all donations.",
        ),
        "matched_giving_amount": Metric(
            CURRENCY_UNIT,
            "The company's matches of its people's gifts, approved or paid, in major currency units; "
            "evidence: those paid with a payout reference, of them.",
        ),
        "volunteer_grant_amount": Metric(
            CURRENCY_UNIT,
            "The company's grants for its people's verified volunteer hours, approved or paid, in major "
            "currency units; evidence: those paid with a payout reference, of them.",
        ),
        "wellbeing_participation": Metric(
            "percent",
            "Share of active members who answered the wellbeing survey in its best published week, "
            "with that week's noise (at most 100); evidence: published respondents of active members.",
        ),
        "wellbeing_mood_average": Metric(
            "score 1-5", "Average mood of the survey's published weeks; evidence: published responses of them."
        ),
        "wellbeing_stress_average": Metric(
            "score 1-5", "Average stress of the survey's published weeks; evidence: published responses of them."
        ),
    }
)


@dataclass(frozen=True)
class Indicator:
    """One disclosure code of a framework, evidenced by one metric."""

    code: str
    title: str
    metric: str
    unit: str


@dataclass(frozen=True)
class Framework:
    """A reporting framework and the indicators Kindling reports for it, in report order."""

    id: str
    name: str
    source: str
    indicators: tuple[Indicator, ...]


class InvalidFrameworks(ValueError):
    """The framework document breaks the file's rules; `problems` lists every one found."""

    def __init__(self, problems: list[str]):
        super().__init__("invalid compliance frameworks: " + "; ".join(problems))
        self.problems = problems


# Framework ids appear in URLs (/api/compliance/{framework}).
_FRAMEWORK_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FRAMEWORK_KEYS = {"name", "source", "indicators"}
_INDICATOR_KEYS = {"code", "title", "metric"}


def parse_frameworks(document: object) -> dict[str, Framework]:
    """Validate a loaded framework document and build its frameworks, raising InvalidFrameworks."""
    problems: list[str] = []
    frameworks = document.get("frameworks") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(frameworks, dict) or not frameworks:
        raise InvalidFrameworks(["the document needs a non-empty 'frameworks' mapping"])
    if set(document) != {"frameworks"}:
        problems.append(f"unknown top-level keys {sorted(map(str, set(document) - {'frameworks'}))}")
    result = {}
    for framework_id, entry in frameworks.items():
        if not isinstance(framework_id, str) or not _FRAMEWORK_ID.fullmatch(framework_id):
            problems.append(f"framework id {framework_id!r} is not lower-case words joined by hyphens")
            continue
        framework = _parse_framework(framework_id, entry, problems)
        if framework is not None:
            result[framework.id] = framework
    if problems:
        raise InvalidFrameworks(problems)
    return result


def _parse_framework(framework_id: str, entry: object, problems: list[str]) -> Framework | None:
    where = f"framework {framework_id!r}"
    if not isinstance(entry, dict):
        problems.append(f"{where} must be a mapping")
        return None
    _check_keys(entry, _FRAMEWORK_KEYS, where, problems)
    name, source = _text(entry, "name", where, problems), _text(entry, "source", where, problems)
    entries = entry.get("indicators")
    if not isinstance(entries, list) or not entries:
        problems.append(f"{where} needs a non-empty list 'indicators'")
        return None
    indicators, codes = [], set()
    for position, item in enumerate(entries, start=1):
        code = item.get("code") if isinstance(item, dict) else None
        if isinstance(code, str):
            if code in codes:
                problems.append(f"{where} has code {code!r} more than once")
            codes.add(code)
        indicator = _parse_indicator(item, f"{where} indicator {position}", problems)
        if indicator is not None:
            indicators.append(indicator)
    if name is None or source is None or len(indicators) != len(entries):
        return None
    return Framework(id=framework_id, name=name, source=source, indicators=tuple(indicators))


def _parse_indicator(item: object, where: str, problems: list[str]) -> Indicator | None:
    if not isinstance(item, dict):
        problems.append(f"{where} must be a mapping")
        return None
    _check_keys(item, _INDICATOR_KEYS, where, problems)
    code, title = _text(item, "code", where, problems), _text(item, "title", where, problems)
    metric = _text(item, "metric", where, problems)
    if metric is not None and metric not in METRICS:
        problems.append(f"{where} has unknown metric {metric!r}")
        return None
    if code is None or title is None or metric is None:
        return None
    return Indicator(code=code, title=title, metric=metric, unit=METRICS[metric].unit)


def _check_keys(entry: dict, allowed: set[str], where: str, problems: list[str]) -> None:
    unknown = set(entry) - allowed
    if unknown:
        problems.append(f"{where} has unknown keys {sorted(map(str, unknown))}")


def _text(entry: dict, key: str, where: str, problems: list[str]) -> str | None:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where} needs a non-empty text {key!r}")
        return None
    if value != value.strip():
        problems.append(f"{where} has surrounding whitespace in {key!r}")
    return value


class _UniqueKeyLoader(yaml.CSafeLoader):
    """PyYAML keeps the last of repeated keys silently; a repeated framework id must fail instead."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, object]:
        self.flatten_mapping(node)
        seen: set[Hashable] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # SafeLoader rejects it with its own error below
            if key in seen:
                raise InvalidFrameworks([f"key {key!r} repeated at line {key_node.start_mark.line + 1}"])
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_frameworks(text: str) -> dict[str, Framework]:
    """Parse and validate the YAML text of a framework file, raising InvalidFrameworks."""
    try:
        document = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        raise InvalidFrameworks([f"not valid YAML: {exc}"]) from exc
    return parse_frameworks(document)


@cache
def load_frameworks() -> dict[str, Framework]:
    """The frameworks of the packaged data file, validated once per process (treat as read-only)."""
    text = resources.files(__package__).joinpath(FRAMEWORKS_FILE).read_text(encoding="utf-8")
    return read_frameworks(text)


def get_framework(framework_id: str) -> Framework:
    """The framework with this id, or NotFound (404) naming the supported ids."""
    frameworks = load_frameworks()
    try:
        return frameworks[framework_id]
    except KeyError:
        raise NotFound(
            f"Unknown compliance framework '{framework_id}'",
            details={"supported": sorted(frameworks)},
        ) from None
