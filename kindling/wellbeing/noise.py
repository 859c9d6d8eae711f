"""One week's wellbeing figures released with differential privacy (OpenDP), at ε = 1 a publication.

An admin who controls accounts can make four people with known answers and subtract them
from a five-person figure (docs/decisions.md §7). So every published figure carries noise
calibrated to what one person can change. Each person counts once: their answers of the
week are averaged first, so adding or removing one person moves the number of people by 1,
a centred sum of averages (answer − 3) by at most 2, and the sentiment split by 1 in one
label. The answers counted toward `responses` are capped at ANSWERS_COUNTED a person.

The budget of a publication is split across its figures (BUDGET); a figure that is
suppressed (fewer than five people gave it) is not released and spends nothing. Counts get
discrete Laplace noise, sums Laplace noise, both sampled by OpenDP; what follows is
post-processing of the noisy values, which costs no privacy: the number of people is at
least the five a publication needs (publication itself says so), averages are clamped to
1–5, counts to zero and above.
"""

from __future__ import annotations

import dataclasses
import functools

import opendp.prelude as dp

# The scalar Laplace measurements are in OpenDP's "contrib" set (reviewed, not yet vetted).
dp.enable_features("contrib")

EPSILON = 1.0
MECHANISM = "laplace"
MINIMUM_GROUP_SIZE = 5
ANSWERS_COUNTED = 3
LOWEST, HIGHEST = 1, 5
CENTRE = 3
SENTIMENT_LABELS = ("positive", "neutral", "negative")
# The share of EPSILON each figure spends; they add up to 1.
BUDGET = {
    "respondents": 0.2,
    "responses": 0.05,
    "mood": 0.2,
    "stress": 0.2,
    "energy_respondents": 0.1,
    "energy": 0.1,
    "sentiment": 0.15,
}
# What one person can change each released value by.
SENSITIVITY = {
    "respondents": 1,
    "responses": ANSWERS_COUNTED,
    "mood": HIGHEST - CENTRE,
    "stress": HIGHEST - CENTRE,
    "energy_respondents": 1,
    "energy": HIGHEST - CENTRE,
    "sentiment": 1,
}


@dataclasses.dataclass(frozen=True)
class Person:
    """One person's answers of the week: their averages, answer count, and comment sentiment."""

    mood: float
    stress: float
    energy: float | None  # None when they gave no energy value
    answers: int
    sentiment: str | None  # the label of their comments' mean compound score; None without a comment


@dataclasses.dataclass(frozen=True)
class Release:
    """The noisy figures of a week as published; None where a figure rests on fewer than five people."""

    respondents: int
    responses: int
    mood_average: float
    stress_average: float
    energy_respondents: int | None
    energy_average: float | None
    sentiment: dict[str, int] | None


@functools.cache
def _count(scale: float) -> dp.Measurement:
    return dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=scale)


@functools.cache
def _sum(scale: float) -> dp.Measurement:
    return dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale)


@functools.cache
def _histogram(scale: float) -> dp.Measurement:
    return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=scale)


def scale(figure: str) -> float:
    """The noise scale of a figure: its sensitivity over its share of the budget."""
    return SENSITIVITY[figure] / (BUDGET[figure] * EPSILON)


def _clamped(value: float) -> float:
    return min(max(value, LOWEST), HIGHEST)


def _average(values: list[float], figure: str, people: int) -> float:
    """The noisy centred sum of `values` over the noisy number of people, back on the 1–5 scale."""
    total = sum(_clamped(value) - CENTRE for value in values)
    return _clamped(CENTRE + _sum(scale(figure))(float(total)) / people)


def release(people: list[Person]) -> Release:
    """The week's figures with noise; `people` has at least MINIMUM_GROUP_SIZE entries."""
    respondents = max(_count(scale("respondents"))(len(people)), MINIMUM_GROUP_SIZE)
    answers = sum(min(person.answers, ANSWERS_COUNTED) for person in people)
    responses = min(max(_count(scale("responses"))(answers), respondents), respondents * ANSWERS_COUNTED)
    energies = [person.energy for person in people if person.energy is not None]
    energy_respondents = energy_average = None
    if len(energies) >= MINIMUM_GROUP_SIZE:
        energy_respondents = max(_count(scale("energy_respondents"))(len(energies)), MINIMUM_GROUP_SIZE)
        energy_average = _average(energies, "energy", energy_respondents)
    labels = [person.sentiment for person in people if person.sentiment is not None]
    sentiment = None
    if len(labels) >= MINIMUM_GROUP_SIZE:
        noisy = _histogram(scale("sentiment"))([labels.count(label) for label in SENTIMENT_LABELS])
        sentiment = {label: max(count, 0) for label, count in zip(SENTIMENT_LABELS, noisy, strict=True)}
    return Release(
        respondents=respondents,
        responses=responses,
        mood_average=_average([person.mood for person in people], "mood", respondents),
        stress_average=_average([person.stress for person in people], "stress", respondents),
        energy_respondents=energy_respondents,
        energy_average=energy_average,
        sentiment=sentiment,
    )
