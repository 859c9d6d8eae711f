"""Identity provider (Clerk) user events, signed the way Svix signs them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import time

IDENTITY_SECRET = "whsec_" + base64.b64encode(b"kindling identity webhook test key").decode()
_deliveries = itertools.count(1)


def user_event(event_type: str, external_id: str, *, email: str | None = None, verified: bool = True, **fields) -> dict:
    """A `user.*` event as Clerk sends it; `email` becomes the primary address."""
    data = {"id": external_id, "object": "user", **fields}
    if email is not None:
        data["primary_email_address_id"] = "idn_primary"
        data["email_addresses"] = [
            {"id": "idn_other", "email_address": "other@elsewhere.test", "verification": {"status": "verified"}},
            {
                "id": "idn_primary",
                "email_address": email,
                "verification": {"status": "verified" if verified else "unverified"},
            },
        ]
    if event_type == "user.deleted":
        data = {"id": external_id, "object": "user", "deleted": True}
    return {"object": "event", "type": event_type, "data": data, "timestamp": int(time.time() * 1000)}


def svix_headers(
    payload: bytes, *, delivery_id: str | None = None, secret: str = IDENTITY_SECRET, timestamp: int | None = None
) -> dict:
    """svix-* headers: base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed by the decoded secret."""
    delivery_id = delivery_id or f"msg_{next(_deliveries)}"
    timestamp = int(time.time()) if timestamp is None else timestamp
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{delivery_id}.{timestamp}.".encode() + payload, hashlib.sha256).digest()
    return {
        "svix-id": delivery_id,
        "svix-timestamp": str(timestamp),
        "svix-signature": f"v1,{base64.b64encode(digest).decode()}",
        "Content-Type": "application/json",
    }


def signed(event: dict, **headers) -> tuple[bytes, dict]:
    """The body and headers of a Svix delivery of `event`."""
    payload = json.dumps(event, separators=(", ", ": ")).encode()
    return payload, svix_headers(payload, **headers)
