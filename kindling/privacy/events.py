"""The evidence event of a person's erasure, and the shape of its data."""

from __future__ import annotations

from typing import TypedDict

from kindling.evidence.log import event_type


class MemberErased(TypedDict):
    """Nothing: the subject `member` is the person's id, which stays as a pseudonym."""


MEMBER_ERASED = event_type("member.erased", MemberErased)
