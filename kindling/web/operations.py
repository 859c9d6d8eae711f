"""What openapi.yaml declares about each operation, found by method and path: who may call it
(`x-roles`) and the rate-limit class it counts against (`x-rate-limit`)."""

from __future__ import annotations

import dataclasses

from starlette.routing import compile_path

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
    """Every operation of the spec's paths, found as the router would find it."""

    def __init__(self, paths: dict) -> None:
        self.literal: dict[str, dict[str, Operation]] = {}
        self.templated: list = []
        for template, item in paths.items():
            operations = {
                method.upper(): _operation(declared) for method, declared in item.items() if method in HTTP_METHODS
            }
            if "GET" in operations:
                operations.setdefault("HEAD", operations["GET"])
            if "{" in template:
                self.templated.append((compile_path(template)[0], template.count("{"), operations))
            else:
                self.literal[template] = operations

    def of_path(self, path: str) -> dict[str, Operation]:
        """The operations of the path `path` matches, by method; a literal path wins over a
        template that also matches it (/stats over /{id}), and fewer parameters over more."""
        if path in self.literal:
            return self.literal[path]
        matches = [
            (parameters, operations) for pattern, parameters, operations in self.templated if pattern.match(path)
        ]
        fewest = min((parameters for parameters, _ in matches), default=0)
        found: dict[str, Operation] = {}
        for parameters, operations in matches:
            if parameters == fewest:
                found.update(operations)
        return found

    def find(self, method: str, path: str) -> Operation | None:
        return self.of_path(path).get(method)


def _operation(declared: dict) -> Operation:
    return Operation(declared["operationId"], frozenset(declared["x-roles"]), declared.get("x-rate-limit"))
