"""Handlers of SCIM 2.0 provisioning and of the SCIM tokens an organization's directory uses."""

from __future__ import annotations

from collections.abc import Callable

import flask
from connexion import NoContent
from scim2_models import (
    Context,
    Meta,
    NotFoundException,
    NotImplementedException,
    Resource,
    ResourceType,
    Schema,
)

from kindling.accounts.scim import SCIM_MEDIA_TYPE, SCIM_PREFIX, groups, resources, tokens, users
from kindling.accounts.scim.models import ScimToken
from kindling.accounts.scim.resources import MAX_RESULTS, Group, User
from kindling.platform import access
from kindling.platform.request import Reply, db

HEADERS = {"Content-Type": SCIM_MEDIA_TYPE}


def _base_url() -> str:
    return flask.request.host_url.rstrip("/") + SCIM_PREFIX


def _organization(token_info: dict) -> str:
    return token_info["organization_id"]


def _window(start_index: int, count: int | None) -> tuple[int, int]:
    # RFC 7644 §3.4.2.4: a startIndex below 1 is 1, a negative count is 0, and the provider
    # caps count at its maxResults.
    return max(1, start_index), min(MAX_RESULTS, max(0, 100 if count is None else count))


def _answer(body: dict, status: int = 200, **headers: str) -> tuple[dict, int, dict[str, str]]:
    return body, status, {**HEADERS, **headers}


def _written(write: Callable[..., Resource], context: Context, token_info: dict, **arguments: object) -> Reply:
    """The answer to a replace or a patch: `write` is the users' or groups' own."""
    resource = write(db(), organization_id=_organization(token_info), base_url=_base_url(), **arguments)
    return _answer(resources.dump(resource, context=context))


def get_service_provider_config(token_info: dict) -> Reply:
    config = resources.CONFIG.model_copy(
        update={"meta": Meta(resource_type="ServiceProviderConfig", location=f"{_base_url()}/ServiceProviderConfig")}
    )
    return _answer(config.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE))


def _discovery_list(model: type[Resource], items: list[Resource]) -> dict:
    return resources.dump_list(model, resources.Page(total=len(items), start_index=1, resources=items))


def _with_meta(item: Resource, kind: str, path: str) -> Resource:
    return item.model_copy(update={"meta": Meta(resource_type=kind, location=f"{_base_url()}/{path}/{item.id}")})


def list_resource_types(token_info: dict) -> Reply:
    return _answer(
        _discovery_list(
            ResourceType, [_with_meta(item, "ResourceType", "ResourceTypes") for item in resources.RESOURCE_TYPES]
        )
    )


def get_resource_type(token_info: dict, resource_type_id: str) -> Reply:
    return _answer(_discovery_item(resources.RESOURCE_TYPES, resource_type_id, "ResourceType", "ResourceTypes"))


def list_schemas(token_info: dict) -> Reply:
    return _answer(_discovery_list(Schema, [_with_meta(item, "Schema", "Schemas") for item in resources.SCHEMAS]))


def get_schema(token_info: dict, schema_id: str) -> Reply:
    return _answer(_discovery_item(resources.SCHEMAS, schema_id, "Schema", "Schemas"))


def _discovery_item(items: list, item_id: str, kind: str, path: str) -> dict:
    for item in items:
        if item.id == item_id:
            return _with_meta(item, kind, path).model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
    raise NotFoundException(detail=f"No such {kind}")


def search_everything(token_info: dict, body: dict) -> Reply:
    raise NotImplementedException(
        detail="Searching several resource types at once is not supported: search /Users or /Groups"
    )


def list_scim_users(
    token_info: dict,
    start_index: int = 1,
    count: int | None = None,
    filter_: str | None = None,
    attributes: str | None = None,
    excluded_attributes: str | None = None,
) -> Reply:
    parameters = users.response_parameters(attributes, excluded_attributes)
    start, size = _window(start_index, count)
    page = users.list_users(
        db(),
        organization_id=_organization(token_info),
        filter=filter_,
        start_index=start,
        count=size,
        base_url=_base_url(),
    )
    return _answer(resources.dump_list(User, page, parameters))


def create_scim_user(token_info: dict, body: dict) -> Reply:
    user = users.create_user(db(), organization_id=_organization(token_info), payload=body, base_url=_base_url())
    return _answer(
        resources.dump(user, context=Context.RESOURCE_CREATION_RESPONSE), 201, Location=f"{_base_url()}/Users/{user.id}"
    )


def get_scim_user(
    token_info: dict, user_id: str, attributes: str | None = None, excluded_attributes: str | None = None
) -> Reply:
    parameters = users.response_parameters(attributes, excluded_attributes)
    user = users.get_user(db(), organization_id=_organization(token_info), user_id=user_id, base_url=_base_url())
    return _answer(resources.dump(user, parameters))


def replace_scim_user(token_info: dict, user_id: str, body: dict) -> Reply:
    return _written(
        users.replace_user, Context.RESOURCE_REPLACEMENT_RESPONSE, token_info, user_id=user_id, payload=body
    )


def patch_scim_user(token_info: dict, user_id: str, body: dict) -> Reply:
    return _written(users.patch_user, Context.RESOURCE_PATCH_RESPONSE, token_info, user_id=user_id, payload=body)


def delete_scim_user(token_info: dict, user_id: str) -> Reply:
    users.delete_user(db(), organization_id=_organization(token_info), user_id=user_id)
    return NoContent, 204


def list_scim_groups(
    token_info: dict,
    start_index: int = 1,
    count: int | None = None,
    filter_: str | None = None,
    attributes: str | None = None,
    excluded_attributes: str | None = None,
) -> Reply:
    parameters = resources.response_parameters(Group, attributes, excluded_attributes)
    start, size = _window(start_index, count)
    page = groups.list_groups(
        db(),
        organization_id=_organization(token_info),
        filter=filter_,
        start_index=start,
        count=size,
        base_url=_base_url(),
        with_members=_wants_members(attributes, excluded_attributes),
    )
    return _answer(resources.dump_list(Group, page, parameters))


def _wants_members(attributes: str | None, excluded_attributes: str | None) -> bool:
    # Entra lists groups with excludedAttributes=members: a large group's members are not read then.
    def named(text: str | None) -> bool:
        return text is not None and any(
            part.strip().lower().split(".")[0].rsplit(":", 1)[-1] == "members" for part in text.split(",")
        )

    return not named(excluded_attributes) and (attributes is None or named(attributes))


def create_scim_group(token_info: dict, body: dict) -> Reply:
    group = groups.create_group(db(), organization_id=_organization(token_info), payload=body, base_url=_base_url())
    return _answer(
        resources.dump(group, context=Context.RESOURCE_CREATION_RESPONSE),
        201,
        Location=f"{_base_url()}/Groups/{group.id}",
    )


def get_scim_group(
    token_info: dict, group_id: str, attributes: str | None = None, excluded_attributes: str | None = None
) -> Reply:
    parameters = resources.response_parameters(Group, attributes, excluded_attributes)
    group = groups.get_group(
        db(),
        organization_id=_organization(token_info),
        group_id=group_id,
        base_url=_base_url(),
        with_members=_wants_members(attributes, excluded_attributes),
    )
    return _answer(resources.dump(group, parameters))


def replace_scim_group(token_info: dict, group_id: str, body: dict) -> Reply:
    return _written(
        groups.replace_group, Context.RESOURCE_REPLACEMENT_RESPONSE, token_info, group_id=group_id, payload=body
    )


def patch_scim_group(token_info: dict, group_id: str, body: dict) -> Reply:
    return _written(groups.patch_group, Context.RESOURCE_PATCH_RESPONSE, token_info, group_id=group_id, payload=body)


def delete_scim_group(token_info: dict, group_id: str) -> Reply:
    groups.delete_group(db(), organization_id=_organization(token_info), group_id=group_id)
    return NoContent, 204


def _token_body(token: ScimToken) -> dict:
    return {
        "id": token.id,
        "description": token.description,
        "createdAt": token.created_at,
        "lastUsedAt": token.last_used_at,
    }


def create_scim_token(token_info: dict, body: dict) -> Reply:
    caller = access.principal(token_info)
    token, secret = tokens.create_token(
        db(), organization_id=caller.member_of, created_by=caller.user_id, description=body["description"]
    )
    return {"data": {**_token_body(token), "token": secret}}, 201


def list_scim_tokens(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return {"data": [_token_body(token) for token in tokens.list_tokens(db(), organization_id=caller.member_of)]}, 200


def revoke_scim_token(token_info: dict, token_id: str) -> Reply:
    caller = access.principal(token_info)
    tokens.revoke_token(db(), organization_id=caller.member_of, token_id=token_id, revoked_by=caller.user_id)
    return NoContent, 204
