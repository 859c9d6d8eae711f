"""The package's layers, read from its source: which module may import which, and no import cycles.

The modules are parsed, never imported, so every import counts, including those inside functions.
"""

from __future__ import annotations

import ast
import pathlib

import kindling

PACKAGE = pathlib.Path(kindling.__file__).parent
WEB_FRAMEWORKS = ("connexion", "starlette", "flask")


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, pathlib.Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


SOURCES = _sources()


def _imports(name: str, path: pathlib.Path) -> set[str]:
    """Every module `name` imports, by its full dotted name (a package stands for its __init__)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # `from package import module` imports the module; `from module import name` the module.
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in SOURCES else base for alias in node.names)
    return found


IMPORTS = {name: _imports(name, path) for name, path in SOURCES.items()}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_only_the_web_package_touches_the_web_frameworks():
    offenders = sorted(
        f"{name} imports {imported}"
        for name, imported_names in IMPORTS.items()
        if not _within(name, "kindling.web")
        for imported in imported_names
        if imported.split(".")[0] in WEB_FRAMEWORKS
    )
    assert offenders == []


def test_persistence_does_not_import_services():
    offenders = sorted(
        f"{name} imports {imported}"
        for name, imported_names in IMPORTS.items()
        if _within(name, "kindling.persistence")
        for imported in imported_names
        if _within(imported, "kindling.services")
    )
    assert offenders == []


def test_services_import_neither_handlers_nor_the_web_package():
    offenders = sorted(
        f"{name} imports {imported}"
        for name, imported_names in IMPORTS.items()
        if _within(name, "kindling.services")
        for imported in imported_names
        if _within(imported, "kindling.web")
    )
    assert offenders == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def test_no_module_imports_itself_through_others():
    graph = {name: {imported for imported in imported_names if imported in SOURCES} for name, imported_names in IMPORTS.items()}
    assert _cycles(graph) == []


def test_the_walk_sees_imports_of_every_form():
    # A walk that missed relative or in-function imports would pass the tests above by seeing nothing.
    assert "kindling.compliance.frameworks" in IMPORTS["kindling.compliance"]  # from .frameworks import …
    assert "kindling.services.outbox" in IMPORTS["kindling.services.clients"]  # from kindling.services import outbox
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
