"""Who is calling, and the checks every endpoint group uses to decide what they may do."""

from __future__ import annotations

import dataclasses

from kindling.errors import Forbidden


@dataclasses.dataclass(frozen=True)
class Principal:
    """The account behind a request's session."""

    user_id: str
    account_type: str
    organization_id: str | None
    role: str | None
    session_id: str

    @property
    def is_consultant(self) -> bool:
        return self.account_type == "consultant"

    @property
    def is_admin(self) -> bool:
        return self.account_type == "member" and self.role == "admin"

    @property
    def is_organiser(self) -> bool:
        """An admin or manager, who organises volunteering and reads the organization's people."""
        return self.account_type == "member" and self.role in ("admin", "manager")

    def as_token_info(self) -> dict:
        return {"sub": self.user_id, "principal": self}


def principal(token_info: dict) -> Principal:
    """The caller, from the token info Connexion's security step hands a handler."""
    return token_info["principal"]


def consultant(token_info: dict) -> Principal:
    """The caller, who must be a consultant."""
    caller = principal(token_info)
    if not caller.is_consultant:
        raise Forbidden("This endpoint is for consultant accounts")
    return caller


def member(token_info: dict) -> Principal:
    """The caller, who must belong to an organization."""
    caller = principal(token_info)
    if caller.organization_id is None:
        raise Forbidden("This endpoint is for members of an organization")
    return caller


def admin(token_info: dict) -> Principal:
    """The caller, who must be an administrator of an organization."""
    caller = member(token_info)
    if not caller.is_admin:
        raise Forbidden("This endpoint is for organization administrators")
    return caller


def organiser(token_info: dict) -> Principal:
    """The caller, who must be an administrator or manager of an organization."""
    caller = member(token_info)
    if not caller.is_organiser:
        raise Forbidden("This endpoint is for organization administrators and managers")
    return caller
