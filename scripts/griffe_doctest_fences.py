"""A griffe extension for the docs site (``mkdocs.yml``): the docstrings' doctest examples
become fenced ``pycon`` blocks, and Sphinx roles (``:class:`X```) plain code.

The package's docstrings are written for ``help()`` and doctest, not for Markdown: there, a
``>>>`` line would be a nested block quote and an output such as ``[0, 1]`` a reference
link. The docstrings themselves are left as they are.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    """``text`` with every doctest run (a ``>>>`` line up to the next blank line) fenced."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return _ROLE.sub(r"`\1`", "\n".join(out))


class DoctestFences(griffe.Extension):
    """Rewrites each object's docstring as :func:`fence_doctests` says, once it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
