"""SCIM filters (RFC 7644 §3.4.2.2), parsed by scim2-models, translated to SQL on the attributes
Kindling keeps. Anything else is `invalidFilter`: a filter is never dropped, so never "everything"."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from scim2_models import InvalidFilterException, ScimFilter
from scim2_models.path import AttrPath, Comparison, FilterVisitor, LogicalExpr, Not, Present, ValuePath
from sqlalchemy import and_, false, func, not_, or_, true
from sqlalchemy.sql.elements import ColumnElement, SQLCoreOperations

# Longer filters are refused before parsing: no directory sends more than a few clauses.
MAX_LENGTH = 2000
EQUALITY = frozenset({"eq", "ne", "pr"})


class Attribute:
    """A filterable attribute: its column and how its values compare."""

    def __init__(
        self, column: Any, *, kind: str = "text", case_exact: bool = False, key: Callable[[str], str] | None = None
    ) -> None:
        # A mapped column; for `membership` the function of (operator, value) that makes the
        # condition, for `constant` the one value the attribute has.
        self.column = column
        self.kind = kind  # text | boolean | datetime | membership | constant
        self.case_exact = case_exact
        # A column already holding the lower-cased form (userName): compared as it stands.
        self.key = key


def where(
    text: str, resource: Any, attributes: dict[str, Attribute], values: dict[str, dict[str, Attribute]] | None = None
) -> ColumnElement[bool]:
    """The SQL condition of a filter on `resource`, or InvalidFilterException."""
    if len(text) > MAX_LENGTH:
        raise InvalidFilterException(detail=f"A filter is at most {MAX_LENGTH} characters")
    try:
        bound: Any = ScimFilter
        parsed = bound[resource](text)
    except InvalidFilterException:
        raise
    except (ValueError, TypeError) as exc:  # what the parser raises besides its own error
        raise InvalidFilterException(detail="The filter is not valid") from exc
    return _ToSql(attributes, values or {}).visit(parsed.ast)


def _name(attr_path: AttrPath, default_uri: str | None = None) -> str:
    name = attr_path.attr if attr_path.sub_attr is None else f"{attr_path.attr}.{attr_path.sub_attr}"
    return f"{attr_path.uri}:{name}".lower() if attr_path.uri and attr_path.uri != default_uri else name.lower()


class _ToSql(FilterVisitor[ColumnElement[bool]]):
    def __init__(self, attributes: dict[str, Attribute], values: dict[str, dict[str, Attribute]]) -> None:
        self.attributes = attributes
        self.values = values

    def _attribute(self, attr_path: AttrPath, table: dict[str, Attribute] | None = None) -> Attribute:
        table = self.attributes if table is None else table
        name = _name(attr_path)
        for candidate in (
            name,
            name.removeprefix("urn:ietf:params:scim:schemas:core:2.0:user:").removeprefix(
                "urn:ietf:params:scim:schemas:core:2.0:group:"
            ),
        ):
            if candidate in table:
                return table[candidate]
        raise InvalidFilterException(detail=f"Filtering on {name[:60]!r} is not supported")

    def visit_logical_expr(self, node: LogicalExpr) -> ColumnElement[bool]:
        terms = [self.visit(term) for term in node.terms]
        return and_(*terms) if node.op == "and" else or_(*terms)

    def visit_not(self, node: Not) -> ColumnElement[bool]:
        return not_(self.visit(node.expr))

    def visit_present(self, node: Present) -> ColumnElement[bool]:
        return _present(self._attribute(node.attr_path))

    def visit_comparison(self, node: Comparison) -> ColumnElement[bool]:
        return _compare(self._attribute(node.attr_path), str(node.op), node.value)

    def visit_value_path(self, node: ValuePath) -> ColumnElement[bool]:
        table = self.values.get(_name(node.attr_path))
        if table is None or node.sub_attr is not None:
            raise InvalidFilterException(detail=f"Filtering inside {node.attr_path.attr[:60]!r} is not supported")
        return _ToSql(table, {}).visit(node.val_filter)


def _present(attribute: Attribute) -> ColumnElement[bool]:
    if attribute.kind == "membership":
        return attribute.column(None, None)
    if attribute.kind == "text":
        return and_(attribute.column.is_not(None), attribute.column != "")
    return attribute.column.is_not(None)


def _compare(attribute: Attribute, op: str, value: Any) -> ColumnElement[bool]:
    if attribute.kind == "membership":
        if op != "eq" or not isinstance(value, str):
            raise InvalidFilterException(detail="Members are compared with eq only")
        return attribute.column("eq", value)
    if attribute.kind == "constant":
        return true() if op == "eq" and str(value).lower() == attribute.column else false()
    if attribute.kind == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool) or op not in EQUALITY:
            raise InvalidFilterException(detail="A boolean is compared with eq or ne to true or false")
        return attribute.column.is_(value) if op == "eq" else attribute.column.is_not(value)
    if attribute.kind == "datetime":
        try:
            moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise InvalidFilterException(detail="A date is compared with an RFC 3339 date-time") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return _ordered(attribute.column, op, moment)
    if not isinstance(value, str):
        raise InvalidFilterException(detail="This attribute is compared with a string")
    column = attribute.column
    if attribute.key is not None:
        value = attribute.key(value)
    elif not attribute.case_exact:
        column, value = func.lower(column), value.lower()
    if op in ("co", "sw", "ew"):
        escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = {"co": f"%{escaped}%", "sw": f"{escaped}%", "ew": f"%{escaped}"}[op]
        return column.like(pattern, escape="\\")
    return _ordered(column, op, value)


def _ordered(column: SQLCoreOperations[Any], op: str, value: Any) -> ColumnElement[bool]:
    if op == "eq":
        return column == value
    if op == "ne":
        return or_(column.is_(None), column != value)
    return {"gt": column > value, "ge": column >= value, "lt": column < value, "le": column <= value}[op]
