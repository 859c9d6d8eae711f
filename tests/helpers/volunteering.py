"""Check-ins as a volunteer's phone sends them."""

from __future__ import annotations

from tests.factories.volunteering import CENTRE


def check_in(client, account, opportunity, position: tuple[float, float] = CENTRE, **fields):
    """POST …/check-in from `position` (the venue's centre unless told), with `fields`: the answer, whatever its status."""
    body = {"latitude": position[0], "longitude": position[1], **fields}
    return client.post(f"/api/volunteer/{opportunity.id}/check-in", json=body, headers=account.headers)
