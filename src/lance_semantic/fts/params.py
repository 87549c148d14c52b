"""The analyzer parameters of pylance's INVERTED index, read from the index (layer L3).

pylance 14 records an index's analyzer twice: as the ``params`` JSON in the schema metadata
of ``_indices/<uuid>/metadata.lance`` (every parameter, custom stop words included) and as
the manifest's ``InvertedIndexDetails`` protobuf (fields, measured on pylance 14.0.3: ``1``
base_tokenizer, ``2`` language as a JSON string, ``3`` with_position, ``4``
max_token_length (absent: no limit), ``5`` lower_case, ``6`` stem, ``7``
remove_stop_words, ``8`` ascii_folding, ``9`` / ``10`` ngram lengths, ``11`` prefix_only,
``12`` block_size, ``15`` posting format version; custom stop words are not there).
:func:`analyzer_params` reads either into :class:`AnalyzerParams`, with pylance's defaults
for what is missing.

>>> p = analyzer_params({b"params": b'{"base_tokenizer": "whitespace", "stem": false}'})
>>> p.base_tokenizer, p.stem, p.lower_case, p.max_token_length  # serde's defaults
('whitespace', False, True, None)
>>> d = analyzer_params(details=b"\\n\\x06simple\\x12\\t\\"English\\"\\x28\\x01")
>>> d.lower_case, d.stem, d.max_token_length  # proto3: an absent field is false / no limit
(True, False, None)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..errors import CorruptTableError

__all__ = ["AnalyzerParams", "LANGUAGES", "analyzer_params"]

#: the languages pylance 14 accepts (``language=``), for stemming and stop words
LANGUAGES = (
    "Arabic",
    "Danish",
    "Dutch",
    "English",
    "Finnish",
    "French",
    "German",
    "Greek",
    "Hungarian",
    "Italian",
    "Norwegian",
    "Portuguese",
    "Romanian",
    "Russian",
    "Spanish",
    "Swedish",
    "Tamil",
    "Turkish",
)


@dataclass(frozen=True, slots=True)
class AnalyzerParams:
    """The parameters of pylance 14's full-text analyzer, with its defaults.

    The names and defaults are those of ``create_scalar_index(..., "INVERTED", **params)``;
    the ``ngram`` tokenizer's defaults for ``stem`` and ``remove_stop_words`` are False
    there (pylance's Python layer), use :meth:`for_create` to get them.
    """

    base_tokenizer: str = "simple"
    language: str = "English"
    with_position: bool = False
    max_token_length: int | None = 40
    lower_case: bool = True
    stem: bool = True
    remove_stop_words: bool = True
    custom_stop_words: tuple[str, ...] | None = None
    ascii_folding: bool = True
    min_ngram_length: int = 3
    max_ngram_length: int = 3
    prefix_only: bool = False
    lance_tokenizer: str | None = "text"
    split_identifiers: bool = False
    split_on_numerics: bool = False
    preserve_original: bool = False
    index_operators: bool = False
    block_size: int = 128

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "bool" and not isinstance(value, bool):
                raise TypeError(f"{f.name} must be a bool, got {type(value).__name__}")
        for name in ("base_tokenizer", "language"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
        if self.language not in LANGUAGES:
            raise ValueError(
                f"language must be one of {', '.join(LANGUAGES)}; got {self.language!r}"
            )
        m = self.max_token_length
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 0):
            raise ValueError(f"max_token_length must be None or an int >= 0, got {m!r}")
        for name in ("min_ngram_length", "max_ngram_length", "block_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if self.min_ngram_length > self.max_ngram_length:
            raise ValueError(
                f"min_ngram_length ({self.min_ngram_length}) must not be greater than "
                f"max_ngram_length ({self.max_ngram_length})"
            )
        words = self.custom_stop_words
        if words is not None:
            if isinstance(words, str) or not all(isinstance(w, str) for w in words):
                raise TypeError("custom_stop_words must be None or a sequence of str")
            object.__setattr__(self, "custom_stop_words", tuple(words))

    @classmethod
    def for_create(cls, **params: Any) -> AnalyzerParams:
        """The parameters ``create_scalar_index(column, "INVERTED", **params)`` builds
        with: pylance's Python defaults, ``stem`` and ``remove_stop_words`` off for the
        ``ngram`` tokenizer unless given.

        >>> AnalyzerParams.for_create(base_tokenizer="ngram").stem
        False
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise TypeError(f"unknown analyzer parameter(s): {', '.join(unknown)}")
        if params.get("base_tokenizer") == "ngram":
            params.setdefault("stem", False)
            params.setdefault("remove_stop_words", False)
        return cls(**params)


def analyzer_params(
    metadata: Mapping[bytes, bytes] | Mapping[str, str] | None = None,
    details: bytes | None = None,
    *,
    where: str = "INVERTED index",
) -> AnalyzerParams:
    """The analyzer of an INVERTED index, from ``metadata.lance``'s schema metadata (its
    ``params`` JSON) or else from the manifest's ``InvertedIndexDetails`` bytes; pylance's
    defaults without either.

    Parameters
    ----------
    metadata
        The schema metadata of the index's ``metadata.lance`` (bytes or str keys).
    details
        The ``index_details`` value of the manifest entry (an ``InvertedIndexDetails``).
    where
        What is read, for error messages (the index file).

    Raises
    ------
    CorruptTableError
        If the JSON or the protobuf cannot be read or holds values pylance would refuse.
    """
    raw: object = None
    if metadata:
        raw = metadata.get(b"params") if b"params" in metadata else metadata.get("params")  # type: ignore[call-overload]
    try:
        if raw is not None:
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError("params is not a JSON object")
            return _from_json(value)
        if details is not None:
            return _from_details(details)
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        raise CorruptTableError(where, f"cannot read the analyzer parameters: {e}") from e
    return AnalyzerParams()


def _from_json(value: dict[str, Any]) -> AnalyzerParams:
    """The parameters of a ``params`` JSON (serde's defaults for missing keys: the
    booleans that default to true stay true, a missing ``max_token_length`` is no limit)."""
    known = {f.name for f in fields(AnalyzerParams)}
    kept = {k: v for k, v in value.items() if k in known}
    kept.setdefault("max_token_length", None)
    if kept.get("custom_stop_words") is not None:
        kept["custom_stop_words"] = tuple(kept["custom_stop_words"])
    for name in ("base_tokenizer", "language"):
        if kept.get(name) is None:
            kept.pop(name, None)
    return AnalyzerParams(**kept)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("InvertedIndexDetails ends inside a varint")
        b = data[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, pos
        shift += 7


def _from_details(data: bytes) -> AnalyzerParams:
    """The parameters of an ``InvertedIndexDetails`` message (proto3: an absent bool is
    false, an absent ``max_token_length`` is no limit)."""
    values: dict[int, int | bytes] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            values[field], pos = _varint(data, pos)
        elif wire == 2:
            n, pos = _varint(data, pos)
            if pos + n > len(data):
                raise ValueError("InvertedIndexDetails ends inside a field")
            values[field], pos = data[pos : pos + n], pos + n
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"InvertedIndexDetails field {field} has wire type {wire}")

    def flag(n: int) -> bool:
        return bool(values.get(n, 0))

    def number(n: int, default: int) -> int:
        v = values.get(n, default)
        if not isinstance(v, int):
            raise ValueError(f"InvertedIndexDetails field {n} is not a number")
        return v

    tokenizer = values.get(1, b"simple")
    language = values.get(2, b'"English"')
    if not isinstance(tokenizer, bytes) or not isinstance(language, bytes):
        raise ValueError("InvertedIndexDetails fields 1 and 2 must be strings")
    lang = json.loads(language.decode())
    if not isinstance(lang, str):
        raise ValueError("the language is not a JSON string")
    max_len = values.get(4)
    if max_len is not None and not isinstance(max_len, int):
        raise ValueError("InvertedIndexDetails field 4 is not a number")
    return AnalyzerParams(
        base_tokenizer=tokenizer.decode(),
        language=lang,
        with_position=flag(3),
        max_token_length=max_len,
        lower_case=flag(5),
        stem=flag(6),
        remove_stop_words=flag(7),
        ascii_folding=flag(8),
        min_ngram_length=number(9, 3) or 3,
        max_ngram_length=number(10, 3) or 3,
        prefix_only=flag(11),
        block_size=number(12, 128) or 128,
    )
