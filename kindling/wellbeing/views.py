"""Handlers of wellbeing check-ins and their published summaries."""

from __future__ import annotations

from kindling.platform import access, periods
from kindling.platform.request import Reply, db
from kindling.wellbeing import noise
from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.service import Figures, Summary


def list_responses(token_info: dict, scope: str, period: str, limit: int, cursor: str | None = None) -> Reply:
    caller = access.principal(token_info)
    if scope == "organization":
        window = periods.window(period)
        summary = wellbeing.organization_summary(db(), caller=caller, window=window)
        return {
            "data": summary_body(summary) if summary else None,
            "suppressed": summary is None,
            "minimumGroupSize": wellbeing.MINIMUM_GROUP_SIZE,
        }, 200
    rows, next_cursor = wellbeing.list_own_responses(db(), caller=caller, limit=limit, cursor=cursor)
    return {"data": [wellbeing.response_body(r) for r in rows], "nextCursor": next_cursor}, 200


def create_response(token_info: dict, body: dict) -> Reply:
    response = wellbeing.create_response(
        db(),
        caller=access.principal(token_info),
        mood=body["mood"],
        stress=body["stress"],
        energy=body.get("energy"),
        comment=body.get("comment"),
        anonymous=body["anonymous"],
    )
    return {"data": wellbeing.response_body(response)}, 201


def get_response(token_info: dict, id_: str) -> Reply:
    response = wellbeing.get_own_response(db(), caller=access.principal(token_info), response_id=id_)
    return {"data": wellbeing.response_body(response)}, 200


def summary_body(summary: Summary) -> dict:
    return {
        "period": summary.period,
        "from": summary.start,
        "to": summary.end,
        **_figures(summary.figures),
        "privacy": {"epsilon": noise.EPSILON, "mechanism": noise.MECHANISM, "epsilonSpent": summary.epsilon_spent},
        "byWeek": [
            {
                "weekStart": week.start,
                "suppressed": week.figures is None,
                **_figures(week.figures),
                "epsilonSpent": week.epsilon_spent,
            }
            for week in summary.weeks
        ],
    }


def _figures(figures: Figures | None) -> dict:
    if figures is None:
        return {"respondents": None, "responses": None, "averages": None, "sentiment": None}
    return {
        "respondents": figures.respondents,
        "responses": figures.responses,
        "averages": {
            "mood": figures.average_mood,
            "stress": figures.average_stress,
            "energy": figures.average_energy,
            "energySuppressed": figures.average_energy is None,
        },
        "sentiment": {
            **(figures.sentiment or dict.fromkeys(wellbeing.SENTIMENT_LABELS)),
            "suppressed": figures.sentiment is None,
        },
    }
