"""The field-metadata keys are spelled once, in lance_semantic.types.metadata_keys: no other
module of the package holds one of them (or any ``ARROW:extension:`` / ``lance-schema:`` /
``lance-encoding:`` key) as a string or bytes literal outside its docstrings."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lance_semantic.types import metadata_keys

PKG = Path(__file__).resolve().parents[3] / "src" / "lance_semantic"
HOME = PKG / "types" / "metadata_keys.py"
PREFIXES = ("ARROW:extension:", "lance-schema:", "lance-encoding:")
MODULES = sorted(p for p in PKG.rglob("*.py") if "_pb" not in p.parts and p != HOME)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the constant nodes that are docstrings (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _key_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in skip:
            continue
        value = node.value
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if isinstance(text, str) and text.startswith(PREFIXES):
            found.append((node.lineno, text))
    return found


def test_every_key_has_a_known_prefix() -> None:
    keys = [v for k, v in vars(metadata_keys).items() if k.endswith("_KEY")]
    assert keys and all(k.startswith(PREFIXES) for k in keys)
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_spells_a_metadata_key(path: Path) -> None:
    assert _key_literals(path) == []
