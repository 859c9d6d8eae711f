"""Who is calling: the account behind a request's session, as the services see it."""

from __future__ import annotations

import dataclasses
import uuid

from kindling.errors import Forbidden


@dataclasses.dataclass(frozen=True)
class Principal:
    """The account behind a request's credential: a session (`session_id`) or a personal API token (`token_id`)."""

    user_id: str
    account_type: str
    organization_id: str | None
    role: str | None
    session_id: str | None
    token_id: str | None = None
    # The auditor grant beside the role: reading the organization's evidence, reports and exports.
    auditor: bool = False

    @property
    def is_consultant(self) -> bool:
        return self.account_type == "consultant"

    @property
    def member_of(self) -> str:
        """The caller's organization id, for operations only members reach (their `x-roles`
        name member roles alone, and the authorization step has refused everyone else)."""
        if self.organization_id is None:
            raise Forbidden("This endpoint is for members of an organization")
        return self.organization_id

    @property
    def is_admin(self) -> bool:
        return self.account_type == "member" and self.role == "admin"

    @property
    def is_organiser(self) -> bool:
        """An admin or manager, who organises volunteering and reads the organization's people."""
        return self.account_type == "member" and self.role in ("admin", "manager")

    def as_token_info(self) -> dict:
        return {"sub": self.user_id, "principal": self}


def canonical_id(value: str) -> str:
    """One spelling per person: a UUID in any form (capitals, braces, no hyphens, urn:uuid:) as
    lowercase hyphenated hex, as Kindling issues ids; any other id as given (docs/decisions.md §6)."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return value


def principal(token_info: dict) -> Principal:
    """The caller, from the token info Connexion's security step hands a handler."""
    return token_info["principal"]
