"""SCIM Groups, and groups as roles: an admin maps a group to a role its members then hold (docs/decisions.md §13)."""

from __future__ import annotations

from scim2_models import Context, InvalidValueException, Meta, NotFoundException, PatchOp, UniquenessException
from sqlalchemy import Exists, delete, func, insert, select
from sqlalchemy.orm import Session

from kindling.accounts import roles
from kindling.accounts.locks import lock_organization
from kindling.accounts.models import User as Person
from kindling.accounts.scim import filters, resources
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership, ScimUser
from kindling.accounts.scim.resources import Group, Page
from kindling.errors import NotFound
from kindling.platform import pagination
from kindling.platform.base import utcnow


def _member(operator: str | None, value: str | None) -> Exists:
    members = select(GroupMembership.group_id).where(GroupMembership.group_id == DirectoryGroup.id)
    if operator is not None:
        members = members.where(GroupMembership.user_id == value)
    return members.exists()


def display_name_key(value: str) -> str:
    return value.lower()


ATTRIBUTES = {
    "id": filters.Attribute(DirectoryGroup.id, case_exact=True),
    "displayname": filters.Attribute(DirectoryGroup.display_name_key, key=display_name_key),
    "externalid": filters.Attribute(DirectoryGroup.external_id, case_exact=True),
    "members": filters.Attribute(_member, kind="membership"),
    "members.value": filters.Attribute(_member, kind="membership"),
    "meta.created": filters.Attribute(DirectoryGroup.created_at, kind="datetime"),
    "meta.lastmodified": filters.Attribute(DirectoryGroup.updated_at, kind="datetime"),
}


def list_groups(
    db: Session,
    *,
    organization_id: str,
    filter: str | None,
    start_index: int,
    count: int,
    base_url: str,
    with_members: bool,
) -> Page:
    statement = select(DirectoryGroup).where(DirectoryGroup.organization_id == organization_id)
    if filter is not None:
        statement = statement.where(filters.where(filter, Group, ATTRIBUTES))
    total = db.execute(select(func.count()).select_from(statement.order_by(None).subquery())).scalar_one()
    found = []
    if count > 0:
        found = list(
            db.scalars(
                statement.order_by(DirectoryGroup.created_at, DirectoryGroup.id).offset(start_index - 1).limit(count)
            )
        )
    return Page(
        total=total, start_index=start_index, resources=[_present(db, group, base_url, with_members) for group in found]
    )


def get_group(db: Session, *, organization_id: str, group_id: str, base_url: str, with_members: bool = True) -> Group:
    return _present(db, _find(db, organization_id, group_id), base_url, with_members)


def create_group(db: Session, *, organization_id: str, payload: dict, base_url: str) -> Group:
    resource = _parse(payload, Context.RESOURCE_CREATION_REQUEST)
    lock_organization(db, organization_id)
    group = DirectoryGroup(organization_id=organization_id, display_name="", display_name_key="", version=0)
    db.add(group)
    _apply(db, group, resource)
    return _present(db, group, base_url, True)


def replace_group(db: Session, *, organization_id: str, group_id: str, payload: dict, base_url: str) -> Group:
    resource = _parse(payload, Context.RESOURCE_REPLACEMENT_REQUEST)
    lock_organization(db, organization_id)
    group = _find(db, organization_id, group_id, for_update=True)
    _apply(db, group, resource)
    return _present(db, group, base_url, True)


def patch_group(db: Session, *, organization_id: str, group_id: str, payload: dict, base_url: str) -> Group:
    """PATCH, all operations or none; member removal by value list (Entra's legacy form) included."""
    patch = resources.validate(PatchOp[Group], _without_member_display(payload), Context.RESOURCE_PATCH_REQUEST)
    lock_organization(db, organization_id)
    group = _find(db, organization_id, group_id, for_update=True)
    resource = _present(db, group, base_url, True)
    patch.patch(resource, scim_policy=resources.POLICY)
    resource = _parse(
        resource.model_dump(scim_ctx=Context.RESOURCE_REPLACEMENT_REQUEST), Context.RESOURCE_REPLACEMENT_REQUEST
    )
    _apply(db, group, resource)
    return _present(db, group, base_url, True)


def _without_member_display(payload: dict) -> dict:
    """The PATCH without the `display` of the members it adds or sets.

    Okta's group push sends each member as `{value, display}`. `display` is read-only (Kindling
    shows the member's own name), so it is ignored here as a create or a replace ignores it
    (RFC 7644 §3.5.1), rather than refusing the whole change.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("Operations"), list):
        return payload
    operations = []
    for operation in payload["Operations"]:
        if isinstance(operation, dict) and isinstance(operation.get("value"), list | dict):
            path = str(operation.get("path") or "").rsplit(":", 1)[-1].lower()
            value = operation["value"]
            if path == "members":
                value = _members_without_display(value)
            elif not path and isinstance(value, dict):
                value = {k: _members_without_display(v) if k.lower() == "members" else v for k, v in value.items()}
            operation = {**operation, "value": value}
        operations.append(operation)
    return {**payload, "Operations": operations}


def _members_without_display(members: object) -> object:
    if not isinstance(members, list):
        return members
    return [
        {k: v for k, v in member.items() if k.lower() != "display"} if isinstance(member, dict) else member
        for member in members
    ]


def delete_group(db: Session, *, organization_id: str, group_id: str) -> None:
    """Delete the group; its members lose the role it gave them (the last admin stays: 409)."""
    lock_organization(db, organization_id)
    group = _find(db, organization_id, group_id, for_update=True)
    member_ids = list(db.scalars(select(GroupMembership.user_id).where(GroupMembership.group_id == group.id)))
    db.execute(delete(GroupMembership).where(GroupMembership.group_id == group.id))
    db.delete(group)
    db.flush()
    if group.role is not None:
        _recompute(db, member_ids)


def list_for_admin(
    db: Session, *, organization_id: str, limit: int, cursor: str | None
) -> tuple[list[tuple[DirectoryGroup, int]], str | None]:
    """The organization's groups by name, with member counts, one page at a time."""
    found, next_cursor = pagination.page_by_name(
        db,
        select(DirectoryGroup).where(DirectoryGroup.organization_id == organization_id),
        name=DirectoryGroup.display_name_key,
        record_id=DirectoryGroup.id,
        limit=limit,
        cursor=cursor,
    )
    counts = dict(
        db.execute(
            select(GroupMembership.group_id, func.count())
            .where(GroupMembership.group_id.in_([group.id for group in found]))
            .group_by(GroupMembership.group_id)
        ).all()
    )
    return [(group, counts.get(group.id, 0)) for group in found], next_cursor


def set_role(
    db: Session, *, organization_id: str, group_id: str, role: str | None, actor_id: str
) -> tuple[DirectoryGroup, int]:
    """Map a group to a role (or none) and recompute its members' roles; the last admin stays (409)."""
    lock_organization(db, organization_id)
    group = db.get(DirectoryGroup, group_id, with_for_update=True)
    if group is None or group.organization_id != organization_id:
        raise NotFound("No such group")
    member_ids = list(db.scalars(select(GroupMembership.user_id).where(GroupMembership.group_id == group.id)))
    if role != group.role:
        group.role = role
        db.flush()
        _recompute(db, member_ids, actor_id=actor_id)
    return group, len(member_ids)


def _find(db: Session, organization_id: str, group_id: str, *, for_update: bool = False) -> DirectoryGroup:
    group = db.get(DirectoryGroup, group_id, with_for_update=for_update)
    if group is None or group.organization_id != organization_id:
        raise NotFoundException(detail="No such group")
    return group


def _parse(payload: dict, context: Context) -> Group:
    resources.check_schemas(payload, {resources.GROUP_SCHEMA})
    return resources.validate(Group, payload, context)


def _apply(db: Session, group: DirectoryGroup, resource: Group) -> None:
    """Store the group as sent and make its members the ones listed, recomputing roles that change."""
    display_name = resource.display_name or ""  # required: validation refused a group without one
    key = display_name_key(display_name)
    taken = db.scalar(
        select(DirectoryGroup.id).where(
            DirectoryGroup.organization_id == group.organization_id, DirectoryGroup.display_name_key == key
        )
    )
    if taken is not None and taken != group.id:
        raise UniquenessException(detail="A group with this displayName already exists")
    resources.check_lengths(resource)
    group.display_name = display_name
    group.display_name_key = key[:255]
    group.external_id = resource.external_id
    group.version += 1
    group.updated_at = utcnow()
    db.flush()
    wanted = {member.value for member in resource.members or [] if member.value}
    known = (
        set(
            db.scalars(
                select(ScimUser.user_id).where(
                    ScimUser.organization_id == group.organization_id, ScimUser.user_id.in_(wanted)
                )
            )
        )
        if wanted
        else set()
    )
    if wanted - known:
        raise InvalidValueException(detail="Every member must be a user of this organization")
    current = set(db.scalars(select(GroupMembership.user_id).where(GroupMembership.group_id == group.id)))
    added, removed = wanted - current, current - wanted
    if removed:
        db.execute(
            delete(GroupMembership).where(GroupMembership.group_id == group.id, GroupMembership.user_id.in_(removed))
        )
    if added:
        db.execute(insert(GroupMembership), [{"group_id": group.id, "user_id": user_id} for user_id in added])
    if group.role is not None and (added or removed):
        _recompute(db, sorted(added | removed))


def _recompute(db: Session, user_ids: list[str], *, actor_id: str | None = None) -> None:
    # Promotions first: a change that promotes one person and demotes another keeps an admin.
    people = list(db.scalars(select(Person).where(Person.id.in_(user_ids)).with_for_update()))
    people.sort(
        key=lambda person: (
            -roles.RANK.get(
                max([person.hand_role or "member", *roles.group_roles(db, person.id)], key=roles.RANK.__getitem__), 0
            )
        )
    )
    for person in people:
        roles.recompute(db, user=person, actor_id=actor_id, source="group")


def _present(db: Session, group: DirectoryGroup, base_url: str, with_members: bool) -> Group:
    members = None
    if with_members:
        rows = db.execute(
            select(Person.id, Person.name)
            .join(GroupMembership, GroupMembership.user_id == Person.id)
            .where(GroupMembership.group_id == group.id)
            .order_by(Person.id)
        )
        members = [
            {"value": user_id, "display": name, "type": "User", "$ref": f"{base_url}/Users/{user_id}"}
            for user_id, name in rows
        ]
    resource = Group.model_validate(
        {"displayName": group.display_name, "externalId": group.external_id, "members": members or None}
    )
    resource.id = group.id
    resource.meta = Meta(
        resource_type="Group",
        created=group.created_at,
        last_modified=group.updated_at,
        location=f"{base_url}/Groups/{group.id}",
        version=f'W/"{group.version}"',
    )
    return resource
