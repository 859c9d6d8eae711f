"""Calls on kindness acts and their verification that the verification tests share."""

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
