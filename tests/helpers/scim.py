"""What the SCIM tests share: the schemas' URNs and the checks every SCIM answer must pass."""

from __future__ import annotations

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"


def scim_error(response, status: int, scim_type: str | None = None) -> dict:
    """The SCIM error body of RFC 7644 §3.12, in `application/scim+json`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/scim+json")
    body = response.json()
    assert body["schemas"] == [ERROR] and body["status"] == str(status) and body["detail"]
    assert body.get("scimType") == scim_type, body
    return body


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/scim+json")
    return response.json()


def user(user_name: str, **attributes) -> dict:
    return {"schemas": [USER], "userName": user_name, "active": True, **attributes}


def patch(*operations: dict) -> dict:
    return {"schemas": [PATCH], "Operations": list(operations)}
