"""Filters given as ``pyarrow.compute.Expression`` (what DuckDB and Polars push down): the
columns they reference (layer L3).

An Arrow expression does not list its field references. They are found by binding it
against the empty table of a growing subset of the columns: each failed bind names one
missing field ("No match for FieldRef.Name(a) in ..."), which joins the subset, until the
expression binds. Every column found is one the expression needs, so late materialisation
reads only those first. Whatever this cannot tell (a positional ``pc.field(0)``, which would
bind to another column in a subset; a message it does not recognise; a type error) gives
every column: a superset only reads more.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds

__all__ = ["expression_columns"]

_NO_MATCH = "No match for "


def expression_columns(expr: pc.Expression, schema: pa.Schema) -> list[str]:
    """The top-level columns of ``schema`` that ``expr`` references, in schema order (all of
    them when that cannot be told)."""
    names = list(schema.names)
    if "FieldPath(" in str(expr):  # a positional reference: its column depends on the subset
        return names
    chosen: set[str] = set()
    for _ in range(len(names) + 1):
        subset = pa.schema([f for f in schema if f.name in chosen])
        try:
            pds.dataset(subset.empty_table()).scanner(columns={"m": expr})
        except pa.ArrowInvalid as e:
            missing = _missing(str(e), names) - chosen
            if not missing:
                return names
            chosen |= missing
            continue
        except (pa.ArrowException, TypeError, ValueError):
            return names
        return [n for n in names if n in chosen]
    return names


def _missing(message: str, names: list[str]) -> set[str]:
    """The columns a bind error's ``message`` says are missing (possibly several names when
    one column's name is a prefix of another's text)."""
    if not message.startswith(_NO_MATCH):
        return set()
    rest = message[len(_NO_MATCH) :]
    return {
        n
        for n in names
        if rest.startswith(f"FieldRef.Name({n}) in ")
        or rest.startswith(f"FieldRef.Nested(FieldRef.Name({n}) ")
    }
