"""SCIM Users: a person of the token's organization as the directory describes them (docs/decisions.md §13).

The SCIM id is the person's Kindling id. What the directory sent is kept as sent and returned as
sent; Kindling takes the person's name, sign-in email, department, employee number, manager and
active state from it.
"""

from __future__ import annotations

import secrets

from argon2 import PasswordHasher
from scim2_models import (
    Context,
    NotFoundException,
    PatchOp,
    ResponseParameters,
    UniquenessException,
    default_comparison_key,
)
from scim2_models import Meta as ScimMeta
from scim2_models.path import Path
from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from kindling.accounts import authority, lifecycle, reporting_lines, roles
from kindling.accounts.events import MEMBER_JOINED
from kindling.accounts.locks import lock_organization
from kindling.accounts.models import User as Person
from kindling.accounts.scim import filters, resources
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership, ScimUser
from kindling.accounts.scim.resources import ENTERPRISE_SCHEMA, EnterpriseUser, Page, User
from kindling.platform.base import new_id, utcnow

# Okta sends a password with every created user; people provisioned by a directory usually
# sign in through it, so the password is kept (hashed), never returned. It is ignored for an
# account that had a password of its own when it was linked (`ScimUser.sets_password`).
_hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
# An account without a password of its own: no password verifies against it.
NO_PASSWORD = "!directory"
# Sign-in email of a person the directory gave no address: `.invalid` never receives mail.
PLACEHOLDER_DOMAIN = "directory.invalid"
_USER_NAME = Path[User]("userName").resolve()
# Run by every create: built once, only the address changes.
_ACCOUNT_BY_EMAIL = select(Person).where(Person.email == bindparam("email"))


def user_name_key(value: str) -> str:
    """The form userNames are compared in: NFC, lower-cased (RFC 7643 gives userName caseExact false)."""
    return default_comparison_key(_USER_NAME, value)


ATTRIBUTES = {
    "id": filters.Attribute(Person.id, case_exact=True),
    "username": filters.Attribute(ScimUser.user_name_key, key=user_name_key),
    "externalid": filters.Attribute(ScimUser.external_id, case_exact=True),
    "displayname": filters.Attribute(ScimUser.display_name),
    "name.givenname": filters.Attribute(ScimUser.given_name),
    "name.familyname": filters.Attribute(ScimUser.family_name),
    "title": filters.Attribute(ScimUser.title),
    "active": filters.Attribute(Person.active, kind="boolean"),
    "emails": filters.Attribute(Person.email),
    "emails.value": filters.Attribute(Person.email),
    "meta.created": filters.Attribute(ScimUser.created_at, kind="datetime"),
    "meta.lastmodified": filters.Attribute(ScimUser.updated_at, kind="datetime"),
    f"{ENTERPRISE_SCHEMA}:employeenumber".lower(): filters.Attribute(Person.employee_number),
    f"{ENTERPRISE_SCHEMA}:department".lower(): filters.Attribute(Person.department),
    f"{ENTERPRISE_SCHEMA}:manager.value".lower(): filters.Attribute(Person.manager_id, case_exact=True),
    f"{ENTERPRISE_SCHEMA}:manager".lower(): filters.Attribute(Person.manager_id, case_exact=True),
}
# Inside `emails[…]`: Kindling keeps the `work` address for filtering (Entra's matching attribute).
VALUE_ATTRIBUTES = {
    "emails": {
        "type": filters.Attribute("work", kind="constant"),
        "value": filters.Attribute(ScimUser.work_email),
    }
}


def list_users(
    db: Session, *, organization_id: str, filter: str | None, start_index: int, count: int, base_url: str
) -> Page:
    """One page of the organization's SCIM users, in a stable order (creation, then id)."""
    statement = (
        select(ScimUser, Person)
        .join(Person, Person.id == ScimUser.user_id)
        .where(ScimUser.organization_id == organization_id)
    )
    if filter is not None:
        statement = statement.where(filters.where(filter, User, ATTRIBUTES, VALUE_ATTRIBUTES))
    total = db.execute(select(func.count()).select_from(statement.order_by(None).subquery())).scalar_one()
    rows: list = []
    if count > 0:
        rows = list(
            db.execute(
                statement.order_by(ScimUser.created_at, ScimUser.user_id).offset(start_index - 1).limit(count)
            ).all()
        )
    return Page(total=total, start_index=start_index, resources=_present(db, rows, base_url))


def get_user(db: Session, *, organization_id: str, user_id: str, base_url: str) -> User:
    scim_user, person = _find(db, organization_id, user_id)
    return _present(db, [(scim_user, person)], base_url)[0]


def create_user(db: Session, *, organization_id: str, payload: dict, base_url: str) -> User:
    """Provision a person: a new `member`, or the organization's existing account with that email."""
    resource = _parse(payload, Context.RESOURCE_CREATION_REQUEST)
    # No lock of the organization: a new member changes no role, and the unique (organization,
    # userName) and email constraints settle two creates of one name or address (409 at the flush).
    email = _sign_in_email(resource)
    person = db.scalar(_ACCOUNT_BY_EMAIL, {"email": email}) if email else None
    if person is not None and (person.organization_id != organization_id or db.get(ScimUser, person.id) is not None):
        raise UniquenessException(detail="A person with this email already exists")
    joined = person is None
    if person is None:
        person = Person(
            id=new_id(),
            email=email or f"{secrets.token_hex(16)}@{PLACEHOLDER_DOMAIN}",
            password_hash=NO_PASSWORD,
            account_type="member",
            organization_id=organization_id,
            role="member",
            hand_role="member",
        )
    # Linking an account never changes its password or its hand-set role: the SCIM token's holder
    # must not be able to sign in as someone who existed before (docs/decisions.md §13).
    sets_password = joined or person.password_hash == NO_PASSWORD
    scim_user = ScimUser(user_id=person.id, organization_id=organization_id, sets_password=sets_password, version=0)
    # Both rows are written whole: the person's email is the one just looked up, and the
    # userName's uniqueness is the constraint's to check, so nothing is read back to check again.
    _write(scim_user, person, resource)
    scim_user.created_at = scim_user.updated_at
    if joined:
        db.add(person)
        _flush_unique(db)  # before its SCIM record, which refers to it
    db.add(scim_user)
    _flush_unique(db)
    if joined:
        authority.record(db, user=person, type=MEMBER_JOINED, actor_id=None, data={"role": "member", "source": "scim"})
    _follow(db, person, resource)
    # A person who has just joined belongs to no group yet.
    return _present(db, [(scim_user, person)], base_url, grouped=not joined)[0]


def replace_user(db: Session, *, organization_id: str, user_id: str, payload: dict, base_url: str) -> User:
    """PUT: the person as the directory now describes them."""
    resource = _parse(payload, Context.RESOURCE_REPLACEMENT_REQUEST)
    lock_organization(db, organization_id)
    scim_user, person = _find(db, organization_id, user_id, for_update=True)
    _apply(db, scim_user, person, resource)
    return _present(db, [(scim_user, person)], base_url)[0]


def patch_user(db: Session, *, organization_id: str, user_id: str, payload: dict, base_url: str) -> User:
    """PATCH (RFC 7644 §3.5.2, with what Okta and Entra really send): all operations or none."""
    patch = _parse_patch(payload)
    lock_organization(db, organization_id)
    scim_user, person = _find(db, organization_id, user_id, for_update=True)
    resource = _present(db, [(scim_user, person)], base_url)[0]
    patch.patch(resource, scim_policy=resources.POLICY)
    # Revalidated as a replacement: a patch may leave nothing a PUT could not.
    resource = _parse(
        resource.model_dump(scim_ctx=Context.RESOURCE_REPLACEMENT_REQUEST), Context.RESOURCE_REPLACEMENT_REQUEST
    )
    _apply(db, scim_user, person, resource)
    return _present(db, [(scim_user, person)], base_url)[0]


def delete_user(db: Session, *, organization_id: str, user_id: str) -> None:
    """Deactivate the person and detach them from SCIM (404 there afterwards); their records stay."""
    lock_organization(db, organization_id)
    scim_user, person = _find(db, organization_id, user_id, for_update=True)
    lifecycle.deactivate(db, user=person, actor_id=None, source="scim")
    for membership in db.scalars(select(GroupMembership).where(GroupMembership.user_id == person.id)):
        db.delete(membership)
    db.delete(scim_user)
    db.flush()
    roles.recompute(db, user=person, actor_id=None, source="group")


def _find(db: Session, organization_id: str, user_id: str, *, for_update: bool = False) -> tuple[ScimUser, Person]:
    statement = select(ScimUser, Person).join(Person, Person.id == ScimUser.user_id).where(ScimUser.user_id == user_id)
    row = db.execute(statement.with_for_update() if for_update else statement).first()
    if row is None or row[0].organization_id != organization_id:
        raise NotFoundException(detail="No such user")
    return row[0], row[1]


def _parse(payload: dict, context: Context) -> User:
    resources.check_schemas(payload, {resources.USER_SCHEMA, ENTERPRISE_SCHEMA})
    return resources.validate(User, payload, context)


def _parse_patch(payload: dict) -> PatchOp[User]:
    for operation in payload.get("Operations") or []:
        # Entra sends the manager as a bare id: `{"path": "…:manager", "value": "<id>"}`.
        if (
            isinstance(operation, dict)
            and str(operation.get("path", "")).lower().endswith(":manager")
            and isinstance(operation.get("value"), str)
        ):
            operation["value"] = {"value": operation["value"]}
    return resources.validate(PatchOp[User], payload, Context.RESOURCE_PATCH_REQUEST)


def _refuse_taken_user_name(db: Session, organization_id: str, user_name: str, user_id: str | None) -> None:
    taken = db.scalar(
        select(ScimUser.user_id).where(
            ScimUser.organization_id == organization_id, ScimUser.user_name_key == user_name_key(user_name)
        )
    )
    if taken is not None and taken != user_id:
        raise UniquenessException(detail="A user with this userName already exists")


def _flush_unique(db: Session) -> None:
    """Flush, answering 409 `uniqueness` when a concurrent request took the userName or email first."""
    try:
        db.flush()
    except IntegrityError:
        raise UniquenessException(detail="A person with this userName or email already exists") from None


def _sign_in_email(resource: User) -> str | None:
    """The primary email, else the work one, else the first, else userName when it is an email."""
    emails = [email for email in resource.emails or [] if email.value and "@" in email.value]
    chosen = next((e for e in emails if e.primary), None) or next((e for e in emails if e.type == "work"), None)
    chosen = chosen or (emails[0] if emails else None)
    user_name = _user_name(resource)
    address = chosen.value if chosen else (user_name if "@" in user_name else None)
    return address.strip().lower()[:254] if address else None


def _work_email(resource: User) -> str | None:
    work = next((e.value for e in resource.emails or [] if e.value and e.type == "work"), None)
    return work.lower()[:254] if work else None


def _display(resource: User) -> str:
    name = resource.name
    parts = [name.given_name, name.family_name] if name else []
    text = (
        resource.display_name
        or (name.formatted if name else None)
        or " ".join(p for p in parts if p)
        or _user_name(resource)
    )
    return text.strip()[:200] or _user_name(resource)[:200]


def _user_name(resource: User) -> str:
    # Required: validation has refused a resource without one.
    return resource.user_name or ""


def _apply(db: Session, scim_user: ScimUser, person: Person, resource: User) -> None:
    """Store the resource as sent and bring the person in line with it."""
    _refuse_taken_user_name(db, scim_user.organization_id, _user_name(resource), person.id)
    email = _sign_in_email(resource)
    if email and email != person.email:
        if db.scalar(select(Person.id).where(Person.email == email, Person.id != person.id)) is not None:
            raise UniquenessException(detail="A person with this email already exists")
        person.email = email
    _write(scim_user, person, resource)
    _flush_unique(db)
    _follow(db, person, resource)


def _write(scim_user: ScimUser, person: Person, resource: User) -> None:
    """Set what the resource says on the person and their SCIM record; the email aside."""
    resources.check_lengths(resource)
    if resource.password and scim_user.sets_password:
        person.password_hash = _hasher.hash(resource.password)
    enterprise = resource[EnterpriseUser] or EnterpriseUser()
    person.name = _display(resource)
    person.department = enterprise.department
    person.employee_number = enterprise.employee_number
    scim_user.user_name = _user_name(resource)
    scim_user.user_name_key = user_name_key(_user_name(resource))[:255]  # lower-casing may lengthen it
    scim_user.external_id = resource.external_id
    scim_user.display_name = resource.display_name
    scim_user.given_name = resource.name.given_name if resource.name else None
    scim_user.family_name = resource.name.family_name if resource.name else None
    scim_user.title = resource.title
    scim_user.work_email = _work_email(resource)
    scim_user.resource = _stored(resource)
    scim_user.version += 1
    scim_user.updated_at = utcnow()


def _follow(db: Session, person: Person, resource: User) -> None:
    """What the resource changes beyond the two records: the reporting line and the lifecycle."""
    enterprise = resource[EnterpriseUser] or EnterpriseUser()
    manager = enterprise.manager.value or _last_segment(enterprise.manager.ref) if enterprise.manager else None
    reporting_lines.set_manager(
        db, user=person, manager_id=manager, actor_id=None, source="scim", field=f"{ENTERPRISE_SCHEMA}:manager.value"
    )
    if resource.active is False:
        lifecycle.deactivate(db, user=person, actor_id=None, source="scim")
    elif resource.active is True:
        lifecycle.reactivate(db, user=person, actor_id=None, source="scim")


def _last_segment(reference: str | None) -> str | None:
    return reference.rstrip("/").rsplit("/", 1)[-1] if reference else None


def _stored(resource: User) -> dict:
    stored = resource.model_dump(scim_ctx=Context.RESOURCE_REPLACEMENT_REQUEST)
    for attribute in ("id", "meta", "groups", "active", "password"):
        stored.pop(attribute, None)
    if ENTERPRISE_SCHEMA in stored:
        stored[ENTERPRISE_SCHEMA].pop("manager", None)
    return stored


def _present(db: Session, rows: list[tuple[ScimUser, Person]], base_url: str, *, grouped: bool = True) -> list[User]:
    """The resources of these rows, with their groups (unless `grouped` is false: they belong to
    none) and managers' names, as the API returns them."""
    if not rows:
        return []
    user_ids = [person.id for _, person in rows]
    groups: dict[str, list[dict]] = {user_id: [] for user_id in user_ids}
    memberships = (
        select(GroupMembership.user_id, DirectoryGroup.id, DirectoryGroup.display_name)
        .join(DirectoryGroup, DirectoryGroup.id == GroupMembership.group_id)
        .where(GroupMembership.user_id.in_(user_ids))
        .order_by(DirectoryGroup.display_name_key, DirectoryGroup.id)
    )
    for user_id, group_id, name in db.execute(memberships) if grouped else []:
        groups[user_id].append({"value": group_id, "display": name, "$ref": f"{base_url}/Groups/{group_id}"})
    manager_ids = {person.manager_id for _, person in rows if person.manager_id}
    manager_names = (
        dict(db.execute(select(Person.id, Person.name).where(Person.id.in_(manager_ids))).all()) if manager_ids else {}
    )
    presented = []
    for scim_user, person in rows:
        payload = dict(scim_user.resource)
        payload["active"] = person.active
        if person.manager_id:
            enterprise = dict(payload.get(ENTERPRISE_SCHEMA) or {})
            enterprise["manager"] = {
                "value": person.manager_id,
                "$ref": f"{base_url}/Users/{person.manager_id}",
                "displayName": manager_names.get(person.manager_id),
            }
            payload[ENTERPRISE_SCHEMA] = enterprise
            payload["schemas"] = sorted(
                set(payload.get("schemas") or [resources.USER_SCHEMA]) | {ENTERPRISE_SCHEMA},
                key=lambda s: s != resources.USER_SCHEMA,
            )
        elif ENTERPRISE_SCHEMA in payload:
            payload[ENTERPRISE_SCHEMA] = {k: v for k, v in payload[ENTERPRISE_SCHEMA].items() if k != "manager"}
        if groups[person.id]:
            payload["groups"] = groups[person.id]
        resource = User.model_validate(payload)
        resource.id = person.id
        resource.meta = ScimMeta(
            resource_type="User",
            created=scim_user.created_at,
            last_modified=scim_user.updated_at,
            location=f"{base_url}/Users/{person.id}",
            version=f'W/"{scim_user.version}"',
        )
        presented.append(resource)
    return presented


def response_parameters(attributes: str | None, excluded_attributes: str | None) -> ResponseParameters[User] | None:
    """`attributes` / `excludedAttributes` of a request, checked against the User schema."""
    return resources.response_parameters(User, attributes, excluded_attributes)
