"""The package's import rules (STYLE.md §(b)): a module imports only its own layer or lower
ones, and siblings only as listed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "src" / "lance_semantic"

#: module group -> groups it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_typing": set(),
    "types": {"errors", "_typing"},
    "schema": {"errors", "_typing", "types"},
    "codecs": {"errors", "_typing", "types"},
    "manifest": {"errors", "_typing", "types", "schema"},
    # the query engine (SQL, filters, projections): beside manifest and storage, below read
    "query": {"errors", "_typing", "types", "schema", "codecs"},
    "storage": {"errors", "_typing", "types", "schema", "codecs"},
    # vector search (metrics, flat search, IVF index files): below read and dataset
    "vector": {"errors", "_typing", "types", "schema", "codecs", "manifest", "storage"},
    # scalar indices (BTREE, BITMAP, LABEL_LIST reads, the filter selection planner, which
    # walks the query engine's parsed filters)
    "scalar": {"errors", "_typing", "types", "schema", "codecs", "manifest", "storage", "query"},
    # full-text search (INVERTED index reads, the analyzer): beside vector, above scalar
    # (whose index file reader it shares)
    "fts": {
        "errors",
        "_typing",
        "types",
        "schema",
        "codecs",
        "manifest",
        "storage",
        "scalar",
    },
    "write": {"errors", "_typing", "types", "schema", "codecs", "manifest", "storage"},
    "read": {
        "errors",
        "_typing",
        "types",
        "schema",
        "codecs",
        "manifest",
        "storage",
        "query",
        "vector",
        "scalar",
        "fts",
    },
    "commit": {"errors", "_typing", "types", "schema", "manifest", "storage"},
    "dataset": {
        "errors",
        "_typing",
        "types",
        "schema",
        "codecs",
        "manifest",
        "storage",
        "write",
        "read",
        "commit",
        "query",
        "vector",
        "scalar",
        "fts",
    },
    "cli": {"errors", "_typing", "dataset", "manifest", "schema"},
}
# above the dataset layer, beside cli: the two-phase API facade and the Ray integration
ALLOWED["fragment"] = ALLOWED["dataset"] | {"dataset"}
ALLOWED["ray"] = ALLOWED["dataset"] | {"dataset"}


def _group(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> list[str]:
    """Top-level lance_semantic groups imported by ``path`` (relative and absolute imports)."""
    tree = ast.parse(path.read_text())
    rel_parts = path.relative_to(PKG).parts
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel_parts[:-1])[: len(rel_parts) - node.level]
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # "from .. import x" at top level
                    target = [a.name for a in node.names]
                out.append(target[0])
            elif node.module and node.module.startswith("lance_semantic."):
                out.append(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.extend(
                a.name.split(".")[1] for a in node.names if a.name.startswith("lance_semantic.")
            )
    return out


MODULES = sorted(p for p in PKG.rglob("*.py") if "_pb" not in p.parts and p != PKG / "__init__.py")


def test_every_group_is_known() -> None:
    assert {_group(p) for p in MODULES} <= set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_module_imports_only_lower_layers(path: Path) -> None:
    group = _group(path)
    allowed = ALLOWED[group] | {group}
    bad = sorted({g for g in _imports(path) if g not in allowed})
    assert not bad, f"{path.relative_to(PKG)} ({group}) imports {bad}"


# ---- no import circle inside a package -------------------------------------------------------

#: packages whose modules must import each other without a circle (every import counts,
#: also those under ``TYPE_CHECKING`` and inside functions)
#: the wings of ``dataset/``: packages of verbs grouped by family, below the facade
WINGS = sorted(p.parent.name for p in (PKG / "dataset").glob("*/__init__.py"))
#: the wings every other wing may import (a wing imports no other sibling)
SHARED_WINGS = {"core"}
#: what ``dataset/``'s root holds besides the wings: the public handles and their parts
FACADE_FILES = {
    "__init__",
    "dataset",
    "changes",
    "history",
    "reads",
    "handle",
    "scanner",
    "fragment",
    "blobs",
    "arrow_dataset",
}
ACYCLIC = [
    "schema",
    "query",
    "vector",
    "scalar",
    "fts",
    "read",
    "write",
    "dataset",
    *(f"dataset/{w}" for w in WINGS),
]
#: the modules of ``dataset/`` that may import the facade ``dataset/dataset.py``
FACADE_IMPORTERS = {"__init__"}


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module ``node`` imports from (``lance_semantic.x.y``)."""
    if not node.level:
        return node.module or ""
    package = ["lance_semantic", *path.relative_to(PKG).parts[:-1]]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _sibling_imports(path: Path) -> set[str]:
    """The modules of ``path``'s own package that ``path`` imports, by module name."""
    package = path.parent
    prefix = "lance_semantic." + ".".join(package.relative_to(PKG).parts) + "."
    siblings = {p.stem for p in package.glob("*.py")}
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            targets.add(module)
            targets.update(f"{module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
    found = {t.removeprefix(prefix).split(".")[0] for t in targets if t.startswith(prefix)}
    return (found & siblings) - {path.stem}


def _graph(package: str) -> dict[str, set[str]]:
    return {p.stem: _sibling_imports(p) for p in sorted((PKG / package).glob("*.py"))}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (as the modules along it), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        for nxt in sorted(graph[node]):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def test_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", ACYCLIC)
def test_package_has_no_import_circle(package: str) -> None:
    circle = _cycle(_graph(package))
    assert circle is None, f"{package}/ imports in a circle: {' -> '.join(circle or [])}"


def test_only_the_facade_imports_dataset_dataset() -> None:
    """Operation modules take a snapshot (``dataset/snapshot.py``) and return what to
    publish; only the facade ``Dataset`` builds snapshots and advances itself."""
    graph = _graph("dataset")
    bad = sorted(m for m, deps in graph.items() if "dataset" in deps)
    assert set(bad) <= FACADE_IMPORTERS, f"modules importing dataset/dataset.py: {bad}"


def test_dataset_root_holds_the_facade_and_the_wings_only() -> None:
    root = {p.stem for p in (PKG / "dataset").glob("*.py")}
    assert root == FACADE_FILES
    assert set(WINGS) >= {"core", "writes", "mutations", "evolution", "maintenance", "versions"}


@pytest.mark.parametrize(
    "path",
    sorted(p for w in WINGS for p in (PKG / "dataset" / w).glob("*.py")),
    ids=lambda p: str(p.relative_to(PKG)),
)
def test_a_wing_imports_only_shared_wings_and_never_the_facade(path: Path) -> None:
    wing = path.parent.name
    bad = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = _absolute(path, node)
        if module == "lance_semantic.dataset":  # "from .. import x": x is a root module
            targets = [f"{module}.{a.name}" for a in node.names]
        elif module.startswith("lance_semantic.dataset."):
            targets = [module]
        else:
            continue
        for target in targets:
            part = target.split(".")[2]
            if part != wing and part not in SHARED_WINGS:
                bad.add(part)
    assert not bad, f"{path.relative_to(PKG)} (wing {wing}) imports {sorted(bad)}"


PACKAGES = sorted(
    p.parent for p in PKG.rglob("__init__.py") if "_pb" not in p.parts and p.parent != PKG
)


EMPTY_FRONT_DOORS = {"cli"}  # its names are its modules (main, demo, inspect): binding none


def _all_of(tree: ast.Module) -> list[str] | None:
    for n in tree.body:
        targets = (
            n.targets
            if isinstance(n, ast.Assign)
            else [n.target]
            if isinstance(n, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = n.value  # type: ignore[attr-defined]
            return [e.value for e in value.elts]
    return None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(PKG)))
def test_every_package_has_a_front_door(package: Path) -> None:
    """Each package's ``__init__.py`` lists its API in ``__all__``, and every listed name is
    bound there (the package is imported by name, not by module path, from outside)."""
    tree = ast.parse((package / "__init__.py").read_text())
    listed = _all_of(tree)
    assert listed is not None, f"{package.relative_to(PKG)}/__init__.py has no __all__"
    if package.name not in EMPTY_FRONT_DOORS:
        assert listed, f"{package.relative_to(PKG)}/__init__.py lists nothing in __all__"
    bound = {
        a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    bound |= {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    bound |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert set(listed) <= bound, sorted(set(listed) - bound)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(PKG)))
def test_a_front_door_binds_no_name_of_a_submodule(package: Path) -> None:
    """A name bound in ``__init__.py`` that is also a submodule's name shadows the submodule:
    ``from package import name`` then gives the object, not the module, and ``python -m
    package.name`` warns. The lance_semantic.dataset function is the one deliberate case, at the
    top level, outside this check."""
    tree = ast.parse((package / "__init__.py").read_text())
    submodules = {p.stem for p in package.glob("*.py")} | {
        p.parent.name for p in package.glob("*/__init__.py")
    }
    clashes = {
        name
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module
        for a in n.names
        if (name := a.asname or a.name) in submodules
    }
    assert not clashes, (
        f"{package.relative_to(PKG)}/__init__.py shadows submodules {sorted(clashes)}"
    )
