"""Calls on kindness acts and their verification, attestations included, that the tests share."""

from __future__ import annotations

ACTS = "/api/kindness"


def post_act(client, sender, recipient: str = "outsider", level: int = 1, **fields) -> dict:
    body = {
        "description": "Covered a shift",
        "category": "community",
        "verificationLevel": level,
        "recipientId": recipient,
        **fields,
    }
    response = client.post(ACTS, json=body, headers=sender.headers)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def decide(client, account, act_id: str, level: int, decision: str, **fields):
    return client.post(
        f"{ACTS}/{act_id}/verifications", json={"level": level, "decision": decision, **fields}, headers=account.headers
    )


def get_act(client, account, act_id: str) -> dict:
    return client.get(f"{ACTS}/{act_id}", headers=account.headers).json()["data"]


def pending(client, account, **params) -> list[str]:
    response = client.get("/api/verifications/pending", params=params, headers=account.headers)
    assert response.status_code == 200, response.text
    return [act["id"] for act in response.json()["data"]]


ATTESTER = "ada@foodbank.test"
# A level 5 request to the attester above, and the answer they give with the mailed token.
ASK = {"level": 5, "attesterName": "Ada Lovelace", "attesterOrganization": "Town Food Bank", "attesterEmail": ATTESTER}
CONFIRM = {
    "decision": "confirm",
    "name": "Ada Lovelace",
    "organization": "Town Food Bank",
    "statement": "She ran our Saturday shift.",
}


def ask(client, account, act_id: str, body: dict = ASK):
    return client.post(f"{ACTS}/{act_id}/attestations", json=body, headers=account.headers)


def answer(client, token: str, body: dict = CONFIRM):
    return client.post("/api/attestations/answer", json={"token": token, **body})


def make_team(make, **others: str) -> dict:
    """An organization's admin, a manager, an act's sender and its recipient, then `others` by
    name, each a "member" or a "manager"."""
    admin = make.admin()
    team = {
        "admin": admin,
        "manager": make.manager(admin),
        "sender": make.member(admin),
        "recipient": make.member(admin),
    }
    for name, role in others.items():
        team[name] = make.manager(admin) if role == "manager" else make.member(admin)
    return team
