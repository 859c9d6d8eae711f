"""The package's layers, read from its source: which module may import which, and no import cycles.

The modules are parsed, never imported, so every import counts, including those inside functions.
"""

from __future__ import annotations

import ast
import graphlib
import pathlib
from collections.abc import Callable

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


def _crossings(importer: Callable[[str], bool], imported: Callable[[str], bool]) -> list[str]:
    """Every import by a module `importer` accepts of a module `imported` accepts."""
    return sorted(
        f"{name} imports {target}"
        for name, targets in IMPORTS.items()
        if importer(name)
        for target in targets
        if imported(target)
    )


def test_only_the_web_package_touches_the_web_frameworks():
    assert _crossings(lambda name: not _within(name, "kindling.web"), lambda target: target.split(".")[0] in WEB_FRAMEWORKS) == []


def test_persistence_does_not_import_services():
    assert _crossings(lambda name: _within(name, "kindling.persistence"), lambda target: _within(target, "kindling.services")) == []


def test_services_import_neither_handlers_nor_the_web_package():
    assert _crossings(lambda name: _within(name, "kindling.services"), lambda target: _within(target, "kindling.web")) == []


def _cycle(graph: dict[str, set[str]]) -> set[str]:
    """The modules of one import cycle in `graph`, or none (graphlib finds one as it orders them)."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return set(error.args[1])
    return set()


def test_no_module_imports_itself_through_others():
    graph = {name: {imported for imported in imported_names if imported in SOURCES} for name, imported_names in IMPORTS.items()}
    assert _cycle(graph) == set()


def test_the_walk_sees_imports_of_every_form():
    # A walk that missed relative or in-function imports would pass the tests above by seeing nothing.
    assert "kindling.compliance.frameworks" in IMPORTS["kindling.compliance"]  # from .frameworks import …
    assert "kindling.services.outbox" in IMPORTS["kindling.services.clients"]  # from kindling.services import outbox
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {"a", "b", "c"}
    assert _cycle({"a": {"a"}}) == {"a"}
