"""The SCIM resources Kindling serves, exactly as far as it supports them (docs/decisions.md §13).

Built on scim2-models: only the attributes Kindling keeps are declared, so /Schemas describes
what a client can really write and read back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar

from pydantic import Field, ValidationError
from scim2_models import (
    URN,
    AuthenticationScheme,
    Bulk,
    CaseExact,
    ChangePassword,
    ComplexAttribute,
    Context,
    Error,
    ETag,
    ExtensibleStringEnum,
    Extension,
    Filter,
    GroupMembership,
    InvalidSyntaxException,
    InvalidValueException,
    ListResponse,
    Mutability,
    Patch,
    Reference,
    Required,
    Resource,
    ResourceType,
    ResponseParameters,
    Returned,
    SCIMException,
    ScimPolicy,
    ServiceProviderConfig,
    Sort,
    Uniqueness,
)

MAX_RESULTS = 200


class Name(ComplexAttribute):
    formatted: str | None = None
    """The full name, as the directory formats it for display."""

    family_name: str | None = None
    """The family name."""

    given_name: str | None = None
    """The given name."""


class Email(ComplexAttribute):
    class Type(ExtensibleStringEnum):
        work = "work"
        home = "home"
        other = "other"

    # Kept as sent: directories hold addresses on special-use domains (`okta.local`) that a
    # strict email validator refuses.
    value: str | None = None
    """The email address."""

    type: Type | None = None
    """"work", "home" or "other"."""

    primary: bool | None = None
    """Whether this is the preferred address; Kindling signs the person in with it."""


class Manager(ComplexAttribute):
    value: Annotated[str | None, CaseExact.true] = None
    """The SCIM id of the person's manager, of the same organization."""

    ref: Reference[User] | None = Field(None, serialization_alias="$ref", validation_alias="$ref")
    """The URI of the manager's User resource."""

    display_name: Annotated[str | None, Mutability.read_only, Returned.request] = None
    """The manager's name in Kindling, when asked for with `attributes`."""


class EnterpriseUser(Extension):
    __schema__ = URN("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User")

    employee_number: str | None = None
    """The person's identifier in the organization."""

    department: str | None = None
    """The person's department."""

    manager: Manager | None = None
    """The person's line manager, which decides who verifies their acts at level 3."""


class User(Resource[EnterpriseUser]):
    __schema__ = URN("urn:ietf:params:scim:schemas:core:2.0:User")

    user_name: Annotated[str | None, Uniqueness.server, Required.true] = None
    """Unique in the organization, compared without case."""

    name: Name | None = None
    Name: ClassVar[type[ComplexAttribute]] = Name

    display_name: str | None = None
    """The name Kindling shows."""

    title: str | None = None
    """The person's job title."""

    active: Annotated[bool | None, Required.true] = None
    """Whether the person may sign in: false deactivates them and ends every session and token
    they hold. Required, so that a directory always says which it is; it cannot be removed."""

    password: Annotated[str | None, Mutability.write_only, Returned.never, CaseExact.true] = None
    """Accepted, hashed, never returned."""

    emails: list[Email] | None = None
    Emails: ClassVar[type[ComplexAttribute]] = Email

    groups: Annotated[list[GroupMembership] | None, Mutability.read_only] = None
    """The groups the person belongs to."""
    Groups: ClassVar[type[ComplexAttribute]] = GroupMembership


class GroupMember(ComplexAttribute):
    value: Annotated[str | None, Mutability.immutable, CaseExact.true] = None
    """The SCIM id of a User of the organization."""

    ref: Annotated[Reference[User] | None, Mutability.immutable] = Field(
        None, serialization_alias="$ref", validation_alias="$ref"
    )
    """The URI of the member's User resource."""

    type: Annotated[str | None, Mutability.immutable] = Field(None, examples=["User"])
    """Always "User": groups do not nest."""

    display: Annotated[str | None, Mutability.read_only, Returned.request] = None
    """The member's name in Kindling, when asked for with `attributes`."""


class Group(Resource):
    __schema__ = URN("urn:ietf:params:scim:schemas:core:2.0:Group")

    display_name: Annotated[str | None, Required.true] = None
    """Unique in the organization, compared without case."""

    members: list[GroupMember] | None = None
    """The organization's users in the group."""
    Members: ClassVar[type[ComplexAttribute]] = GroupMember


# Manager and GroupMember name User in a forward reference, so the models holding them were
# built before User existed; rebuilt now, scim2-models reads their attributes again (otherwise
# the enterprise attributes are taken for unknown ones, and dropped).
for _model in (Manager, EnterpriseUser, GroupMember, Group):
    _model.model_rebuild(force=True)

USER_SCHEMA = str(User.__schema__)
ENTERPRISE_SCHEMA = str(EnterpriseUser.__schema__)
GROUP_SCHEMA = str(Group.__schema__)
# The columns' sizes of the attributes Kindling keeps in columns of their own (users and groups);
# an email address is at most 254 characters (RFC 5321).
_COLUMN_SIZES = {
    **dict.fromkeys(("userName", "externalId", "displayName", "title", "name.givenName", "name.familyName"), 255),
    **dict.fromkeys((f"{ENTERPRISE_SCHEMA}.department", f"{ENTERPRISE_SCHEMA}.employeeNumber"), 255),
    "emails.value": 254,
}

# What the two big providers really send (docs/decisions.md §13): Entra's legacy member removal
# by value list, and its replace of `emails[type eq "work"].value` on a person without one.
# Attributes Kindling does not keep (Entra's default mapping sends addresses and phone numbers)
# are dropped rather than refused; an unknown schema URN is still refused (check_schemas).
POLICY = ScimPolicy(
    unknown=ScimPolicy.Unknown.ignore,
    remove_value_as_filter=ScimPolicy.RemoveValue.apply,
    unmatched_path_filter=ScimPolicy.UnmatchedPathFilter.create,
)

RESOURCE_TYPES = [
    ResourceType.model_validate(
        {
            "id": "User",
            "name": "User",
            "description": "A person of the organization",
            "endpoint": "/Users",
            "schema": USER_SCHEMA,
            "schemaExtensions": [{"schema": ENTERPRISE_SCHEMA, "required": False}],
        }
    ),
    ResourceType.model_validate(
        {
            "id": "Group",
            "name": "Group",
            "description": "A directory group; an admin may map it to a role",
            "endpoint": "/Groups",
            "schema": GROUP_SCHEMA,
        }
    ),
]

SCHEMAS = [User.to_schema(), EnterpriseUser.to_schema(), Group.to_schema()]

CONFIG = ServiceProviderConfig(
    patch=Patch(supported=True),
    bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
    filter=Filter(supported=True, max_results=MAX_RESULTS),
    change_password=ChangePassword(supported=False),
    sort=Sort(supported=False),
    etag=ETag(supported=False),
    authentication_schemes=[
        AuthenticationScheme(
            type=AuthenticationScheme.Type.oauthbearertoken,
            name="Bearer token",
            description="An organization's SCIM token, made by an admin at POST /api/organization/scim-tokens",
            primary=True,
        )
    ],
)


def check_schemas(payload: dict, known: set[str]) -> None:
    """400 invalidValue for a `schemas` entry Kindling does not serve (an unknown extension)."""
    schemas = payload.get("schemas")
    if schemas is None:
        return
    if not isinstance(schemas, list) or not all(isinstance(schema, str) for schema in schemas):
        raise InvalidSyntaxException(detail="schemas must be a list of schema URNs")
    lowered = {schema.lower() for schema in known}
    unknown = [schema for schema in schemas if schema.lower() not in lowered]
    if unknown:
        raise InvalidValueException(detail=f"Unknown schema: {unknown[0][:100]}")


def validate(model: Any, payload: object, context: Context) -> Any:
    """The payload as `model`, read under Kindling's policy; a SCIM 400 naming what is wrong."""
    if not isinstance(payload, dict):
        raise InvalidSyntaxException(detail="The body must be a JSON object")
    if model is User and isinstance(payload.get("schemas"), list):
        # An extension's attributes sent without its URN in `schemas` are read all the same
        # (otherwise they would be dropped without a word).
        listed = {str(schema).lower() for schema in payload["schemas"]}
        if ENTERPRISE_SCHEMA.lower() not in listed and any(key.lower() == ENTERPRISE_SCHEMA.lower() for key in payload):
            payload = {**payload, "schemas": [*payload["schemas"], ENTERPRISE_SCHEMA]}
    try:
        return model.model_validate(payload, scim_ctx=context, scim_policy=POLICY)
    except ValidationError as exc:
        error = Error.from_validation_errors(exc)[0]
        raise SCIMException.from_error(
            Error(status=400, scim_type=error.scim_type or "invalidValue", detail=(error.detail or "")[:300])
        ) from None


def check_lengths(resource: Resource) -> None:
    """400 invalidValue naming the first attribute longer than the column Kindling keeps it in: a
    longer value is refused, never cut, so that what a client reads back is what it wrote. (The
    resource as sent is kept whole too, so attributes of no column of their own have no limit.)"""
    stored = resource.model_dump(scim_ctx=Context.RESOURCE_REPLACEMENT_REQUEST)
    for path, value in _texts(stored):
        limit = _COLUMN_SIZES.get(path)
        if limit is not None and len(value) > limit:
            raise InvalidValueException(detail=f"{path} is longer than {limit} characters")


def _texts(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item, path)


def response_parameters(model: Any, attributes: str | None, excluded_attributes: str | None) -> Any:
    """The `attributes` / `excludedAttributes` query parameters, checked against `model`."""
    if attributes is None and excluded_attributes is None:
        return None
    try:
        parameters: Any = ResponseParameters
        return parameters[model].model_validate({"attributes": attributes, "excludedAttributes": excluded_attributes})
    except ValidationError:
        raise InvalidValueException(
            detail="attributes and excludedAttributes name attributes of the resource, and not both"
        ) from None


def dump(
    resource: Resource,
    parameters: ResponseParameters[Any] | None = None,
    *,
    context: Context = Context.RESOURCE_QUERY_RESPONSE,
) -> dict:
    return resource.model_dump(scim_ctx=context, response_parameters=parameters)


@dataclasses.dataclass
class Page:
    """One page of a list of resources, as a ListResponse counts it."""

    total: int
    start_index: int
    resources: list[Any]


def dump_list(model: Any, page: Page, parameters: ResponseParameters[Any] | None = None) -> dict:
    """A ListResponse of a page: integer counters, 1-based startIndex (RFC 7644 §3.4.2.4)."""
    messages: Any = ListResponse
    message = messages[model](
        total_results=page.total,
        start_index=page.start_index,
        items_per_page=len(page.resources),
        resources=page.resources,
    )
    return message.model_dump(scim_ctx=Context.SEARCH_RESPONSE, response_parameters=parameters)
