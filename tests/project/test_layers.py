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
# What `kindling serve` runs on, besides the web frameworks.
SERVERS = ("uvicorn", "httptools")
OVERRIDES = "kindling.web.overrides"


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


# Which feature slice may import which (besides `kindling.platform`, `kindling.errors` and
# `kindling.config`, which every package may use). Everything not listed is an upward arrow.
SLICES = {
    "platform": set(),
    "themes": set(),
    "idempotency": set(),
    # Outbound webhooks' events and tables: plumbing every feature that emits stands on.
    "outbox": set(),
    "evidence": {"outbox"},
    "accounts": {"evidence"},
    "wellbeing": {"evidence"},
    # Consultants' endpoints and the delivery of what the outbox holds.
    "webhooks": {"outbox"},
    # The ECB's reference rates, which matches and reports convert with.
    "rates": set(),
    "consulting": {"accounts", "evidence", "outbox"},
    "branding": {"accounts", "consulting", "outbox", "themes"},
    "kindness": {"accounts", "consulting", "evidence"},
    "volunteering": {"accounts", "consulting", "evidence"},
    # Grants claim verified check-ins; giving requests are told to the organization's consultants.
    "donations": {"accounts", "consulting", "evidence", "outbox", "rates", "volunteering"},
    "compliance": {"accounts", "consulting", "donations", "evidence", "kindness", "rates", "volunteering", "wellbeing"},
    "privacy": {"accounts", "donations", "evidence", "kindness", "slack", "volunteering", "wellbeing"},
    # Slack's people are the organization's members; their acts and decisions are kindness's.
    "slack": {"accounts", "kindness"},
}
# What every package may import: the root modules below every slice.
ROOT = {"kindling", "kindling.errors", "kindling.config"}
# The offline verifier and the witness Kindling ships run with these alone, and the theme engine is pure.
SELF_CONTAINED = (
    "kindling.evidence.chain",
    "kindling.evidence.cosignatures",
    "kindling.evidence.keys",
    "kindling.evidence.merkle",
    "kindling.evidence.notes",
    "kindling.evidence.replay",
    "kindling.evidence.report_check",
    "kindling.evidence.verify_command",
    "kindling.evidence.witness_server",
    "kindling.platform.money",
    "kindling.themes",
)


def _slice(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "kindling" and parts[1] in SLICES else None


def test_every_package_of_kindling_is_a_slice_or_named_above_them():
    others = {"web", "migrations"}
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert packages - set(SLICES) - others == set()


# Besides the web package, a feature's handlers see the framework, and so do the request helpers
# they use.
REQUEST_HELPERS = "kindling.platform.request"


def _sees_the_framework(name: str) -> bool:
    return _within(name, "kindling.web") or name == REQUEST_HELPERS or name.endswith(".views")


def test_only_the_web_package_the_handlers_and_their_helpers_touch_the_web_frameworks():
    assert (
        _crossings(lambda name: not _sees_the_framework(name), lambda target: target.split(".")[0] in WEB_FRAMEWORKS)
        == []
    )


def test_only_handlers_import_handlers():
    # A feature's rules never reach for a request: another feature's handlers are no library.
    assert _crossings(lambda name: not name.endswith(".views"), lambda target: target.endswith(".views")) == []


def _overrides(name: str, path: pathlib.Path) -> list[str]:
    """The classes of `name` built on a framework's, and the Flask views it replaces."""
    tree = ast.parse(path.read_text(), str(path))
    framework_names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in WEB_FRAMEWORKS + SERVERS
        for alias in node.names
    }
    found = [
        f"{name}.{node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(base, ast.Name) and base.id in framework_names for base in node.bases)
    ]
    found += [
        f"{name} replaces Flask views"
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "view_functions"
    ]
    return found


def test_every_framework_override_is_in_the_overrides_folder():
    outside = [
        found for name, path in SOURCES.items() if not _within(name, OVERRIDES) for found in _overrides(name, path)
    ]
    assert outside == []
    # The walk finds them where they are.
    inside = [found for name, path in SOURCES.items() if _within(name, OVERRIDES) for found in _overrides(name, path)]
    assert {
        "kindling.web.overrides.http_protocol.BoundedHttpToolsProtocol",
        "kindling.web.overrides.decorated_views replaces Flask views",
    } <= set(inside)


def test_slices_import_only_the_slices_below_them():
    def upward(name: str, target: str) -> bool:
        mine, theirs = _slice(name), _slice(target)
        if mine is None or theirs is None or mine == theirs or theirs == "platform":
            return False
        return theirs not in SLICES[mine]

    arrows = sorted(
        f"{name} imports {target}" for name, targets in IMPORTS.items() for target in targets if upward(name, target)
    )
    assert arrows == []


def test_privacy_reaches_the_features_through_their_personal_data_functions():
    # Each feature exports and erases its own records of a person; privacy never reads their tables.
    def tables(target: str) -> bool:
        return _slice(target) not in (None, "privacy") and target.rpartition(".")[2].endswith("models")

    assert _crossings(lambda name: _slice(name) == "privacy", tables) == []
    assert "kindling.kindness.personal_data" in IMPORTS["kindling.privacy.personal_data"]


# Who ends a transaction: the request's pipeline, the worker loops that run deliveries and Slack's
# jobs, and the migrations' runner; and the write-behind, whose commit carries a read after it, for
# a handler the pipeline lets commit (`kindling.platform.request.may_commit`: an act create,
# docs/decisions.md §1).
TRANSACTION_OWNERS = (
    "kindling.web",
    "kindling.webhooks.delivery",
    "kindling.slack.jobs",
    "kindling.migrations.env",
    "kindling.platform.write_behind",
)


def test_only_the_request_pipeline_and_the_workers_commit():
    # A service that commits ends its caller's transaction halfway, and its caller's rollback undoes less.
    def commits(path: pathlib.Path) -> bool:
        return any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "commit"
            for node in ast.walk(ast.parse(path.read_text(), str(path)))
        )

    outside = [
        name
        for name, path in SOURCES.items()
        if not any(_within(name, owner) for owner in TRANSACTION_OWNERS) and commits(path)
    ]
    assert outside == []
    assert commits(SOURCES["kindling.web.request_hooks"])


def test_slices_import_neither_the_web_package_nor_the_entry_points():
    above = ("kindling.web", "kindling.cli", "kindling.schema", "kindling.migrations")
    assert (
        _crossings(lambda name: _slice(name) is not None, lambda target: any(_within(target, top) for top in above))
        == []
    )


def test_self_contained_modules_import_only_each_other():
    def outside(target: str) -> bool:
        return (
            _within(target, "kindling")
            and target not in ROOT - {"kindling.config"}
            and not any(_within(target, m) for m in SELF_CONTAINED)
        )

    assert _crossings(lambda name: any(_within(name, m) for m in SELF_CONTAINED), outside) == []


def test_the_root_modules_import_only_each_other():
    # Settings keep what the environment says; the feature a value is for parses it.
    assert (
        _crossings(lambda name: name in ROOT, lambda target: _within(target, "kindling") and target not in ROOT) == []
    )


def _cycle(graph: dict[str, set[str]]) -> set[str]:
    """The modules of one import cycle in `graph`, or none (graphlib finds one as it orders them)."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return set(error.args[1])
    return set()


def test_no_module_imports_itself_through_others():
    graph = {
        name: {imported for imported in imported_names if imported in SOURCES}
        for name, imported_names in IMPORTS.items()
    }
    assert _cycle(graph) == set()


def _folder(name: str) -> str:
    """The folder of kindling a module is in (`kindling.accounts` for kindling.accounts.scim.users), or
    the module itself at the top (`kindling.cli`)."""
    return ".".join(name.split(".")[:2])


def test_no_folder_imports_itself_through_others():
    # Each folder is one layer: a loop of folders would make several of them one, whatever their modules do.
    graph: dict[str, set[str]] = {}
    for name, targets in IMPORTS.items():
        graph.setdefault(_folder(name), set()).update(
            _folder(target) for target in targets if target in SOURCES and _folder(target) != _folder(name)
        )
    assert _cycle(graph) == set()
    # Nor do the slices allowed above loop, which the imports they allow could close.
    assert _cycle(SLICES) == set()


def test_the_walk_sees_imports_of_every_form():
    # A walk that missed relative or in-function imports would pass the tests above by seeing nothing.
    assert "kindling.compliance.frameworks" in IMPORTS["kindling.compliance"]  # from .frameworks import …
    assert "kindling.outbox" in IMPORTS["kindling.consulting.clients"]  # from kindling import outbox
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {"a", "b", "c"}
    assert _cycle({"a": {"a"}}) == {"a"}
    assert _slice("kindling.kindness.acts") == "kindness" and _slice("kindling.web.app") is None
    assert _folder("kindling.accounts.scim.users") == "kindling.accounts" and _folder("kindling") == "kindling"
