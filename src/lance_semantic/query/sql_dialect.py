"""Lance's SQL dialect, spelled for DataFusion (layer L3).

pylance 14 reads user SQL (filters, ``update`` values and conditions, ``add_columns``,
SQL projections, ``merge_insert`` conditions) with these rules, which DataFusion's own
parser does not follow (it lower-cases every unquoted identifier, so a column ``userId``
could not be named at all):

- an unquoted column name is the column of exactly that name, else the one column whose
  name differs only in case (``USERID`` is ``userId``);
- a struct member after ``.`` is named exactly (``St.InN``; ``St.inn`` is no member);
- a name in backticks is exact (```has space```);
- text in double quotes is a string literal (``x = "v"`` is ``x = 'v'``).

:func:`to_datafusion` rewrites a text into DataFusion's spelling of the same expression:
the columns it names as double-quoted identifiers, double-quoted strings as single-quoted
ones; everything else (single-quoted strings, comments, keywords, function names, type
names, numbers) is left as written. The text is only re-spelled token by token, never
assembled into a query. :func:`referenced_names` gives the top-level columns a text names,
by the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

__all__ = ["to_datafusion", "referenced_names"]

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
    |(?P<comment>--[^\n]*|/\*.*?\*/)
    |(?P<string>'(?:[^']|'')*')
    |(?P<dquote>"(?:[^"]|"")*")
    |(?P<backtick>`[^`]*`)
    |(?P<word>[A-Za-z_][A-Za-z0-9_$]*)
    |(?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)
    |(?P<other>.)
    """,
    re.S | re.X,
)

#: words that are SQL syntax where an expression may name a column: never taken as names
_KEYWORDS = frozenset(
    """AND OR NOT IS NULL TRUE FALSE UNKNOWN CASE WHEN THEN ELSE END IN BETWEEN LIKE ILIKE
    SIMILAR TO ESCAPE DISTINCT FROM AS CAST TRY_CAST INTERVAL EXISTS SELECT ANY ALL SOME""".split()
)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tokens(sql: str) -> list[tuple[str, str]]:
    """(kind, text) of every token of ``sql``, whitespace and comments included: joined,
    they give ``sql`` back."""
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(sql)]


def _significant(tokens: list[tuple[str, str]]) -> list[int]:
    return [i for i, (kind, _) in enumerate(tokens) if kind not in ("ws", "comment")]


def _word_at(tokens: list[tuple[str, str]], order: list[int], pos: int) -> str:
    """The upper-cased word at significant position ``pos`` ('' if none)."""
    if pos < 0:
        return ""
    kind, text = tokens[order[pos]]
    return text.upper() if kind == "word" else ""


def _resolve(word: str, names: Sequence[str], lowered: dict[str, list[str]]) -> str | None:
    """The column an unquoted ``word`` names: the exact one, else the only one equal to it
    but for case (None: no column, or several)."""
    if word in names:
        return word
    found = lowered.get(word.lower(), [])
    return found[0] if len(found) == 1 else None


def _names_used(
    tokens: list[tuple[str, str]], names: Sequence[str]
) -> Iterator[tuple[int, str, bool]]:
    """(token index, the name it means, top level) of each word or backticked name of
    ``tokens`` that names a column or a member: a top-level column resolved against
    ``names``, a member after ``.`` as written."""
    lowered: dict[str, list[str]] = {}
    for n in dict.fromkeys(names):
        lowered.setdefault(n.lower(), []).append(n)
    order = _significant(tokens)
    for pos, i in enumerate(order):
        kind, text = tokens[i]
        if kind not in ("word", "backtick"):
            continue
        before = tokens[order[pos - 1]] if pos else ("", "")
        after = tokens[order[pos + 1]] if pos + 1 < len(order) else ("", "")
        member = before == ("other", ".")
        if kind == "backtick":
            yield i, text[1:-1], not member
            continue
        if (
            text.upper() in _KEYWORDS
            or after == ("other", "(")  # a function
            or after[0] == "string"  # a typed literal: DATE '2024-01-01'
            or (before[0] == "string" and _word_at(tokens, order, pos - 2) == "INTERVAL")
            or _word_at(tokens, order, pos - 1) == "AS"  # a type: CAST(x AS T)
        ):
            continue
        if member:
            yield i, text, False
            continue
        name = _resolve(text, names, lowered)
        if name is not None:
            yield i, name, True


def to_datafusion(sql: str, names: Sequence[str]) -> str:
    """``sql`` in Lance's dialect as DataFusion's spelling of the same expression, over a
    frame whose columns are ``names``."""
    tokens = _tokens(sql)
    out = [text for _, text in tokens]
    for i, name, _ in _names_used(tokens, names):
        out[i] = _quoted(name)
    for i, (kind, text) in enumerate(tokens):
        if kind == "dquote":
            out[i] = "'" + text[1:-1].replace('""', '"').replace("'", "''") + "'"
    return "".join(out)


def referenced_names(sql: str, names: Iterable[str]) -> set[str]:
    """The top-level columns among ``names`` that ``sql`` names."""
    names = list(names)
    wanted = set(names)
    return {n for _, n, top in _names_used(_tokens(sql), names) if top and n in wanted}
