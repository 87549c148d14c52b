"""Every public name has a docstring with a doctested example.

The public surface is found by introspection, not listed by hand, so a new name cannot slip
through undocumented:

* every name in ``lance_semantic.__all__``, and in the ``__all__`` of a module it exports
  (``ls.errors``);
* every public method and property (``dir()``, no leading underscore) of those classes that
  lance-semantic defines, and the classes nested in them (``LanceOperation.Append``);
  members inherited from the builtins or ``io`` are not ours
  (:func:`test_inherited_members_come_from_known_bases`);
* the classes those methods and properties return (their return annotations, through
  ``list[...]``, ``X | None`` and aliases), transitively: the merge_insert builder, the tags
  object, ``ds.optimize``, result objects, ...; except :data:`EXCLUDED`, each with a reason.

"Documented" means what ``pytest --doctest-modules`` runs: :class:`doctest.DocTestFinder`
finds a docstring for the name in its defining module, with at least one example that shows
an output (a value or a traceback), never only assignments. Data attributes (dataclass
fields, slots) have no docstring of their own: their class's docstring describes them.
"""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import inspect
import sys
import types
import typing
from collections.abc import Iterator
from functools import cached_property

import pytest

import lance_semantic as ls

PACKAGE = "lance_semantic"

#: classes reached through return annotations that are not held to the rule, and why
EXCLUDED: dict[str, str] = {}

#: modules whose members our public classes may inherit without documenting them: the
#: builtins (``Exception.args``, ``OSError.errno``, the dict methods of ``TypedDict``
#: results) and ``io`` (``BlobFile`` is an ``io.RawIOBase``: ``readline``, ``writable``, ...).
#: Not pyarrow: ``Dataset`` and ``Scanner`` override every public member of their pyarrow
#: base (its own would reach a C++ object there is none of), so one pyarrow adds fails here.
KNOWN_BASES = {"builtins", "_io"}

_ROUTINES = (property, staticmethod, classmethod, types.FunctionType, cached_property)


def _ours(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == PACKAGE


def _qualname(obj: object) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"  # type: ignore[attr-defined]


@functools.cache
def _doctests(module_name: str) -> dict[str, doctest.DocTest]:
    """The doctests ``--doctest-modules`` collects from a module, by qualified name."""
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return {t.name: t for t in finder.find(module, module_name)}


def _problem(module_name: str, qualname: str) -> str | None:
    """Why the docstring of ``qualname`` (defined in ``module_name``) fails the rule."""
    test = _doctests(module_name).get(qualname)
    if test is None or not test.examples:
        return "no docstring with a >>> example"
    if not any(e.want or e.exc_msg for e in test.examples):
        return "its example shows no output"
    return None


@functools.cache
def _type_checking_names(module_name: str) -> dict[str, object]:
    """The names a module imports under ``if TYPE_CHECKING:`` (its annotations use them)."""
    module = sys.modules[module_name]
    tree = ast.parse(inspect.getsource(module))
    namespace: dict[str, object] = {"__name__": module_name, "__package__": module.__package__}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            exec(compile(ast.Module(node.body, []), module_name, "exec"), namespace)
    return namespace


def _classes_in(annotation: object) -> Iterator[type]:
    """Our classes named by a resolved annotation (through generics, unions and aliases)."""
    if inspect.isclass(annotation) and _ours(annotation):
        yield annotation
    value = getattr(annotation, "__value__", None)  # a ``type X = ...`` alias
    if value is not None:
        yield from _classes_in(value)
    for arg in typing.get_args(annotation):
        yield from _classes_in(arg)


def _returned_classes(member: object, module_name: str) -> Iterator[type]:
    fn = member.fget if isinstance(member, property) else member
    fn = getattr(fn, "__func__", getattr(fn, "func", fn))
    namespace = {**_type_checking_names(module_name), **vars(sys.modules[module_name])}
    hints = typing.get_type_hints(fn, globalns=namespace)
    yield from _classes_in(hints.get("return"))


def _roots() -> Iterator[tuple[str, object, str]]:
    """(exported name, object, exporting module) of ``ls.__all__`` and of the ``__all__`` of
    the modules it exports."""
    todo: list[types.ModuleType] = [ls]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType):
                if obj.__name__ not in seen:
                    seen.add(obj.__name__)
                    todo.append(obj)
            yield name, obj, module.__name__


def _owner(cls: type, name: str) -> type:
    return next(k for k in cls.__mro__ if name in k.__dict__)


@functools.cache
def _surface() -> tuple[
    dict[str, tuple[str, str]], dict[str, str], set[tuple[str, str, str]], dict[str, str]
]:
    """(documented names -> (module, qualname), constants -> exporting module, inherited
    members (class, name, base module), excluded classes reached -> reached from)."""
    names: dict[str, tuple[str, str]] = {}
    constants: dict[str, str] = {}
    inherited: set[tuple[str, str, str]] = set()
    excluded: dict[str, str] = {}
    classes: list[type] = []
    for name, obj, exporter in _roots():
        if isinstance(obj, types.ModuleType):
            names[obj.__name__] = (obj.__name__, obj.__name__)
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            names[_qualname(obj)] = (obj.__module__, _qualname(obj))
            if inspect.isclass(obj):
                classes.append(obj)
        else:
            constants[name] = exporter
    done: set[type] = set()
    while classes:
        cls = classes.pop()
        if cls in done:
            continue
        done.add(cls)
        for name in dir(cls):
            if name.startswith("_"):
                continue
            owner = _owner(cls, name)
            if not _ours(owner):
                inherited.add((cls.__name__, name, owner.__module__))
                continue
            member = owner.__dict__[name]
            if inspect.isclass(member) and _ours(member):  # a nested class (LanceOperation.*)
                names[_qualname(member)] = (member.__module__, _qualname(member))
                classes.append(member)
                continue
            if not isinstance(member, _ROUTINES):
                continue  # a data attribute: described by the class docstring
            qualname = f"{_qualname(owner)}.{name}"
            names[qualname] = (owner.__module__, qualname)
            for reached in _returned_classes(member, owner.__module__):
                if _qualname(reached) in EXCLUDED:
                    excluded[_qualname(reached)] = qualname
                elif reached not in done:
                    names[_qualname(reached)] = (reached.__module__, _qualname(reached))
                    classes.append(reached)
    return names, constants, inherited, excluded


def test_every_public_name_has_a_doctested_example() -> None:
    names, _, _, _ = _surface()
    missing = {
        name: why
        for name, (module, qualname) in sorted(names.items())
        if (why := _problem(module, qualname)) is not None
    }
    assert not missing, "\n".join(f"{n}: {why}" for n, why in missing.items())


def test_the_surface_is_what_the_issue_names() -> None:
    """The walk reaches the public classes (a guard on the walk itself)."""
    names, _, _, _ = _surface()
    for expected in (
        "lance_semantic.dataset.reads.Reads.to_table",
        "lance_semantic.dataset.scanner.Scanner.to_table",
        "lance_semantic.dataset.fragment.LanceFragment.take",
        "lance_semantic.schema.field.TableSchema.field",
        "lance_semantic.schema.field.Field.semantic_type",
        "lance_semantic.dataset.maintenance.table_check.CheckReport.ok",
        "lance_semantic.dataset.mutations.merge_insert.MergeInsertBuilder.execute",
        "lance_semantic.dataset.versions.tags.Tags.create",
        "lance_semantic.dataset.compaction.compact.DatasetOptimizer.compact_files",
        "lance_semantic.errors.InvalidJsonError",
        "lance_semantic.dataset.dataset.dataset",
    ):
        assert expected in names


def test_constants_appear_in_an_example_of_their_module() -> None:
    """Exported values without a docstring of their own (``FLAG_SEMANTIC_TYPES``) are shown
    in an example of the module that exports them."""
    _, constants, _, _ = _surface()
    for name, exporter in constants.items():
        test = _doctests(exporter).get(exporter)
        sources = [e.source for e in test.examples] if test else []
        assert any(name in s for s in sources), f"{exporter}.{name}: in no example"


def test_inherited_members_come_from_known_bases() -> None:
    """Public members our classes inherit without defining them come from
    :data:`KNOWN_BASES` only: not ours to document."""
    _, _, inherited, _ = _surface()
    assert {base for _, _, base in inherited} <= KNOWN_BASES


def test_exclusions_are_current() -> None:
    """Every excluded class is still reached (or the exclusion goes)."""
    _, _, _, excluded = _surface()
    assert set(excluded) == set(EXCLUDED)


@pytest.mark.parametrize("module", ["lance_semantic"])
def test_package_docstring_is_doctested(module: str) -> None:
    assert _problem(module, module) is None
