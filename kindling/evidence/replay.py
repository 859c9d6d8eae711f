"""The state an evidence log implies: each record's counted facts, replayed from its events (docs/evidence.md).

The server reconciles its tables with this state, and the offline verifier recomputes reports
from it, so both read the log by the same rules.
"""

from __future__ import annotations

import hashlib

from kindling.evidence.chain import canonical

POSITIVE = frozenset({"confirm", "approve"})
# A refusal of level 2 is the recipient disputing the act, directly or through an attestation.
DISPUTES = frozenset({"dispute", "decline"})
# The kinds of record whose facts reports count, and the facts of each that are reconciled.
FIELDS = {
    "act": ("createdAt", "category", "requestedLevel", "verifiedLevel", "verificationStatus"),
    "check_in": ("checkedInAt", "userId", "verified", "hours"),
    "donation": ("createdAt", "amount", "currency", "status"),
    "giving_request": (
        "createdAt",
        "programId",
        "programVersion",
        "kind",
        "status",
        "amount",
        "computedAmount",
        "capped",
        "currency",
    ),
    # Whether the person is an active member of the organization (docs/evidence.md, "Membership").
    "member": ("active",),
}
_DECISIONS = ("verification.decided", "attestation.answered")
# The members of `data` that set a record's facts.
_FACTS = frozenset(
    {
        "createdAt",
        "checkedInAt",
        "category",
        "requestedLevel",
        "contentDigest",
        "userId",
        "verified",
        "hours",
        "amount",
        "currency",
        "status",
        "programId",
        "programVersion",
        "kind",
        "computedAmount",
        "capped",
        "active",
    }
)
# Events that set a fact their data does not name.
_IMPLIED: dict[str, dict[str, object]] = {
    "giving.paid": {"status": "paid"},
    "giving.reversed": {"status": "reversed"},
    "member.joined": {"active": True},
    "member.reactivated": {"active": True},
    "member.deactivated": {"active": False},
    "member.erased": {"active": False},
}


def dispute_stands(decisions: dict[int, str]) -> bool:
    """Whether the recipient disputed the act and no admin has decided level 4 since."""
    return decisions.get(2) in DISPUTES and 4 not in decisions


def verified_level(decisions: dict[int, str]) -> int:
    """The highest level confirmed or approved, 1 when none is. The recipient's dispute outweighs
    every approval until an admin's level-4 decision resolves it: an approval counts again, a
    rejection upholds it."""
    if decisions.get(2) in DISPUTES and decisions.get(4) != "approve":
        return 1
    return max((level for level, decision in decisions.items() if decision in POSITIVE), default=1)


def verification_status(*, requested: int, verified: int, decisions: dict[int, str]) -> str:
    """`verified`, `rejected`, `disputed` or `pending`: where an act's request stands."""
    if verified >= requested:
        return "verified"
    if requested > 2 and dispute_stands(decisions):
        return "disputed"
    if requested in decisions or (decisions.get(2) in DISPUTES and decisions.get(4) == "reject"):
        # The requested level was refused, or an admin upheld the recipient's dispute.
        return "disputed" if requested == 2 else "rejected"
    return "pending"


def content_digest(description: str, category: str, media: list) -> str:
    """Hex SHA-256 of the canonical JSON of an act's content."""
    return hashlib.sha256(canonical({"description": description, "category": category, "media": media})).hexdigest()


def apply(state: dict | None, event: dict) -> dict:
    """One record's facts after `event`, from its facts before it (None before its first event)."""
    state = dict(state) if state is not None else {"decisions": {}}
    data = event["data"]
    kind = event["subject"]["kind"]
    type_ = event["type"]
    if type_ in _DECISIONS:
        state["decisions"] = {**state["decisions"], int(data["level"]): data["decision"]}
        return state
    if type_ == "imported":
        # A record that was there before the log (or before the log carried all its facts).
        moment = data.get("recordedAt")
        if moment is not None:
            state["checkedInAt" if kind == "check_in" else "createdAt"] = moment
        if "decisions" in data:
            state["decisions"] = {int(level): decision for level, decision in data["decisions"].items()}
    elif type_ == "check_in.recorded":
        state["userId"] = event["actorId"]
    elif type_ in _IMPLIED:
        state.update(_IMPLIED[type_])
        if kind == "member":
            # A membership event's data (role, source) sets no fact of its own.
            return state
    for name, value in data.items():
        if name in _FACTS:
            state[name] = value
    return state


def implied(kind: str, state: dict) -> dict:
    """The reconciled facts of a record of `kind` whose events left `state`."""
    if kind == "act":
        decisions = state.get("decisions", {})
        verified = verified_level(decisions)
        requested = state.get("requestedLevel")
        status = (
            None
            if requested is None
            else verification_status(requested=requested, verified=verified, decisions=decisions)
        )
        return {**_pick(state, FIELDS[kind]), "verifiedLevel": verified, "verificationStatus": status}
    return _pick(state, FIELDS[kind])


def _pick(state: dict, names: tuple[str, ...]) -> dict:
    return {name: state.get(name) for name in names}


def published_week(publications: list[dict]) -> dict:
    """A wellbeing week's figures as its publications (the `data` of its events, oldest first)
    leave them, named by their place in that data: the last publication stands. The budget
    they spent together is the last one's `privacy.epsilonSpent`; for publications from before
    it was logged, the sum of their ε, or None when one had no noise."""
    last = publications[-1]
    privacy = last.get("privacy") or {}
    if "epsilonSpent" in privacy:
        spent = privacy["epsilonSpent"]
    else:
        budgets = [(publication.get("privacy") or {}).get("epsilon") for publication in publications]
        spent = None if None in budgets else sum(budgets)
    return week_facts({**last, "privacy": {**privacy, "epsilonSpent": spent}})


def week_facts(published: dict) -> dict:
    """The reconciled facts of a wellbeing week, from its figures in the shape of `wellbeing.published`."""
    averages = published.get("averages") or {}
    sentiment = published.get("sentiment") or {}
    privacy = published.get("privacy") or {}
    return {
        "revision": published.get("revision"),
        "respondents": published.get("respondents"),
        "responses": published.get("responses"),
        **{f"averages.{name}": averages.get(name) for name in ("mood", "stress", "energy")},
        "energyRespondents": published.get("energyRespondents"),
        **{f"sentiment.{label}": sentiment.get(label) for label in ("positive", "neutral", "negative")},
        **{f"privacy.{name}": privacy.get(name) for name in ("epsilon", "mechanism", "epsilonSpent")},
    }
