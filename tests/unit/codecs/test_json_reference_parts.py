"""``codecs/json_reference.py`` exports the reference that its private parts
(``_jsonb_ref_*.py``) implement, and its names still name it as their module: reprs,
tracebacks and doctests read ``lance_semantic.codecs.json_reference.X`` as before the split."""

from __future__ import annotations

import inspect
import traceback

import pytest

from lance_semantic.codecs import json_reference

MODULE = "lance_semantic.codecs.json_reference"
NAMES = [*json_reference.__all__, "utf8_sequence_length"]


@pytest.mark.parametrize("name", NAMES)
def test_every_name_of_the_reference_names_its_module(name: str) -> None:
    value = getattr(json_reference, name)
    assert value.__module__ == MODULE
    for member in vars(value).values() if inspect.isclass(value) else ():
        if inspect.isfunction(member):
            assert member.__module__ == MODULE


def test_a_refused_document_names_the_reference_module() -> None:
    with pytest.raises(json_reference.JsonbReferenceError) as caught:
        json_reference.encode_value('{"a":1,"a":2}')
    line = traceback.format_exception_only(caught.value)[-1]
    assert line == f"{MODULE}.JsonbReferenceError: object has a duplicate key at byte 7\n"
