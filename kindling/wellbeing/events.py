"""The evidence event of a week's published wellbeing figures, and the shape of its data."""

from __future__ import annotations

from typing import TypedDict

from kindling.evidence.log import event_type


class Averages(TypedDict):
    mood: float | None
    stress: float | None
    energy: float | None


class Privacy(TypedDict):
    epsilon: float | None
    mechanism: str | None
    epsilonSpent: float | None


class WellbeingPublished(TypedDict):
    """The figures as published, noise included (subject `wellbeing_week`, its Monday; no actor, as
    no one person publishes them)."""

    weekStart: str
    revision: int
    respondents: int
    responses: int
    averages: Averages
    energyRespondents: int | None
    # Answers by sentiment label; None when no answer had a comment.
    sentiment: dict[str, int | None] | None
    privacy: Privacy


WELLBEING_PUBLISHED = event_type("wellbeing.published", WellbeingPublished)
