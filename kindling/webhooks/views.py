"""Handlers of an organization's webhook endpoints and their deliveries."""

from __future__ import annotations

from connexion import NoContent

from kindling.outbox.models import WebhookDelivery, WebhookEndpoint
from kindling.platform import access
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.request import Reply, db, runtime
from kindling.webhooks import endpoints as webhook_endpoints


def list_endpoints(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    endpoints = webhook_endpoints.list_endpoints(db(), consultant_id=caller.user_id)
    return {"data": [endpoint_body(endpoint) for endpoint in endpoints]}, 200


def create_endpoint(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    endpoint = webhook_endpoints.create_endpoint(
        db(),
        consultant_id=caller.user_id,
        url=body["url"],
        events=body["events"],
        description=body.get("description"),
        policy=_policy(),
    )
    return {"data": {**endpoint_body(endpoint), "secret": endpoint.secret}}, 201


def get_endpoint(endpoint_id: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return {
        "data": endpoint_body(
            webhook_endpoints.get_endpoint(db(), consultant_id=caller.user_id, endpoint_id=endpoint_id)
        )
    }, 200


def update_endpoint(endpoint_id: str, body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    endpoint = webhook_endpoints.update_endpoint(
        db(),
        consultant_id=caller.user_id,
        endpoint_id=endpoint_id,
        changes=body,
        policy=_policy(),
    )
    return {"data": endpoint_body(endpoint)}, 200


def delete_endpoint(endpoint_id: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    webhook_endpoints.delete_endpoint(db(), consultant_id=caller.user_id, endpoint_id=endpoint_id)
    return NoContent, 204


def rotate_secret(endpoint_id: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    endpoint = webhook_endpoints.rotate_secret(db(), consultant_id=caller.user_id, endpoint_id=endpoint_id)
    return {"data": {**endpoint_body(endpoint), "secret": endpoint.secret}}, 200


def list_deliveries(
    endpoint_id: str, token_info: dict, limit: int, status: str | None = None, cursor: str | None = None
) -> Reply:
    caller = access.principal(token_info)
    rows, next_cursor = webhook_endpoints.list_deliveries(
        db(), consultant_id=caller.user_id, endpoint_id=endpoint_id, status=status, limit=limit, cursor=cursor
    )
    return {
        "data": [delivery_body(delivery, event_type) for delivery, event_type in rows],
        "nextCursor": next_cursor,
    }, 200


def endpoint_body(endpoint: WebhookEndpoint) -> dict:
    return {
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "events": endpoint.events,
        "enabled": endpoint.enabled,
        "disabledAt": endpoint.disabled_at,
        "failingSince": endpoint.failing_since,
        "previousSecretExpiresAt": endpoint.previous_secret_expires_at,
        "createdAt": endpoint.created_at,
        "updatedAt": endpoint.updated_at,
    }


def delivery_body(delivery: WebhookDelivery, event_type: str) -> dict:
    return {
        "id": delivery.id,
        "eventId": delivery.event_id,
        "eventType": event_type,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "lastAttemptAt": delivery.last_attempt_at,
        "lastResponseCode": delivery.last_response_code,
        "lastError": delivery.last_error,
        "nextAttemptAt": delivery.next_attempt_at,
        "deliveredAt": delivery.delivered_at,
        "createdAt": delivery.created_at,
    }


def _policy() -> DestinationPolicy:
    return DestinationPolicy.from_settings(runtime().settings)
