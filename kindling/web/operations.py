"""What openapi.yaml declares about each operation: who may call it (`x-roles`) and the rate-limit
class it counts against (`x-rate-limit`), found by the operation Connexion's router chose."""

from __future__ import annotations

import dataclasses

from connexion.middleware.abstract import ROUTING_CONTEXT
from starlette.routing import compile_path
from starlette.types import Scope

from kindling.platform.access import Principal

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# `anyone` marks an operation without authentication; `scim` one of /scim/v2, for an
# organization's SCIM token, which kindling.web.scim checks before routing; `auditor` a member
# with the auditor grant, whatever their role; the others are account roles.
ROLES = frozenset({"admin", "manager", "member", "consultant", "anyone", "scim", "auditor"})
AUDIENCES = {
    frozenset({"consultant"}): "consultant accounts",
    frozenset({"admin", "manager", "member"}): "members of an organization",
    frozenset({"admin"}): "organization administrators",
    frozenset({"admin", "manager"}): "organization administrators and managers",
    frozenset({"admin", "auditor"}): "organization administrators and auditors",
}


@dataclasses.dataclass(frozen=True)
class Operation:
    operation_id: str
    roles: frozenset[str]
    rate_limit: str | None

    def admits(self, caller: Principal | None) -> bool:
        """Whether `caller` is one of the roles this operation is declared for, or an auditor
        where it names `auditor`."""
        if "anyone" in self.roles or "scim" in self.roles:
            return True
        if caller is None:
            return False
        return role_of(caller) in self.roles or (
            "auditor" in self.roles and caller.auditor and not caller.is_consultant
        )

    @property
    def refusal(self) -> str:
        audience = AUDIENCES.get(self.roles) or ", ".join(sorted(self.roles))
        return f"This endpoint is for {audience}"


def role_of(caller: Principal) -> str | None:
    """A consultant's role is `consultant`; a member's, their role in their organization."""
    if caller.is_consultant:
        return "consultant"
    return caller.role if caller.organization_id is not None else None


class Operations:
    """Every operation of the spec's paths: by operation id, for the request Connexion routed, and
    by path, for the methods a 405 lists."""

    def __init__(self, paths: dict) -> None:
        self.by_id: dict[str, Operation] = {}
        self.literal: dict[str, set[str]] = {}
        self.templated: list = []
        for template, item in paths.items():
            methods = {method.upper() for method in item if method in HTTP_METHODS}
            if "GET" in methods:
                methods.add("HEAD")
            self.by_id.update(
                (declared["operationId"], _operation(declared))
                for method, declared in item.items()
                if method in HTTP_METHODS
            )
            if "{" in template:
                self.templated.append((compile_path(template)[0], template.count("{"), methods))
            else:
                self.literal[template] = methods

    def routed(self, scope: Scope) -> Operation | None:
        """The operation Connexion's router matched this request to, if any. Connexion names it by
        its handler's path (`x-openapi-router-controller` and the operationId), and operationIds
        are unique in the spec."""
        routing = scope.get("extensions", {}).get(ROUTING_CONTEXT)
        operation_id = routing and routing["operation_id"]
        return self.by_id.get(operation_id.rpartition(".")[2]) if operation_id else None

    def methods_of(self, path: str) -> set[str]:
        """The methods of the path `path` matches; a literal path wins over a template that also
        matches it (/stats over /{id}), and fewer parameters over more. Only a refused method
        needs them: Connexion routes each operation alone, so Starlette's 405 names one."""
        if path in self.literal:
            return self.literal[path]
        matches = [(parameters, methods) for pattern, parameters, methods in self.templated if pattern.match(path)]
        fewest = min((parameters for parameters, _ in matches), default=0)
        return {method for parameters, methods in matches if parameters == fewest for method in methods}


def _operation(declared: dict) -> Operation:
    return Operation(declared["operationId"], frozenset(declared["x-roles"]), declared.get("x-rate-limit"))
