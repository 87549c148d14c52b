"""``manifest/model.py`` exports the values that its private modules (``_table.py``,
``_operations.py``) define, and they still name it as their module: reprs, pickles and
doctests read ``lance_semantic.manifest.model.X`` as before the split."""

from __future__ import annotations

import inspect
import io
import pickle
import typing

import pytest

from lance_semantic.manifest import model

from ._samples import sample_fragment

MODULE = "lance_semantic.manifest.model"
DEFINED = [
    name
    for name in model.__all__
    if inspect.isclass(getattr(model, name)) or inspect.isfunction(getattr(model, name))
]


@pytest.mark.parametrize("name", DEFINED)
def test_every_class_and_function_names_the_model_module(name: str) -> None:
    value = getattr(model, name)
    assert value.__module__ == MODULE
    for member in vars(value).values() if inspect.isclass(value) else ():
        function = member.fget if isinstance(member, property) else member
        if inspect.isfunction(function):
            assert function.__module__ == MODULE
            # annotations resolve in the module the class names
            typing.get_type_hints(function, globalns=vars(model))
    typing.get_type_hints(value)


class _Recording(pickle.Unpickler):
    """An unpickler that notes the module of every global (class, function) it loads."""

    def __init__(self, payload: bytes) -> None:
        super().__init__(io.BytesIO(payload))
        self.modules: set[str] = set()

    def find_class(self, module: str, name: str) -> object:
        self.modules.add(module)
        return super().find_class(module, name)


def test_values_pickle_by_the_model_path() -> None:
    value = model.Append((sample_fragment(0, deleted=2), sample_fragment(1)))
    loader = _Recording(pickle.dumps(value))
    assert loader.load() == value
    assert MODULE in loader.modules
    assert not {m for m in loader.modules if m.startswith("lance_semantic.manifest._")}
