"""Table maintenance: the metadata-only upgrade to semantic types (layer L5; spec
"Compatibility and Migration: Upgrade"), and the JSON codec's warm-up."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..codecs import json as json_codec
from ..commit.committer import commit
from ..manifest.flags import FLAG_SEMANTIC_TYPES
from ..manifest.model import Project
from ..schema.legacy import upgrade_schema

if TYPE_CHECKING:
    from .dataset import Dataset

__all__ = ["upgrade", "upgrade_dataset", "warm_up"]

_log = logging.getLogger("lance_semantic")


def upgrade_dataset(ds: Dataset) -> Dataset:
    """Upgrade ``ds`` (advanced in place) to the Semantic Type Contract in one commit.

    Each legacy alias becomes its canonical type plus the output encoding that reproduces
    today's read type, then ``FLAG_SEMANTIC_TYPES`` is set. No data file is touched and
    reads return the same Arrow types, values and field ids as before. Upgrading a flagged
    table is a no-op (logged, nothing committed).
    """
    if ds.semantic_types:
        _log.info(
            "%s already uses semantic types (version %d): nothing to upgrade", ds.uri, ds.version
        )
        return ds
    manifest = ds.manifest
    schema = upgrade_schema(manifest.schema)
    new = commit(ds._store, manifest, Project(schema=schema), add_flags=FLAG_SEMANTIC_TYPES)
    ds._advance(new)
    return ds


def upgrade(
    uri: str | os.PathLike[str], *, storage_options: Mapping[str, str] | None = None
) -> Dataset:
    """Open the table at ``uri`` and upgrade it to semantic types in one metadata-only
    commit (see :func:`upgrade_dataset`); a flagged table is left as it is.

    Returns
    -------
    Dataset
        The table at its new version.

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"s": pa.array(["a"], pa.large_string())}), "t.lance")
    >>> ds = ls.upgrade("t.lance")
    >>> ds.semantic_types, ds.version, ds.semantic_schema.field("s").output_encoding
    (True, 2, 'large_utf8')
    >>> ls.upgrade("t.lance").version  # already upgraded: nothing committed
    2
    """
    from .dataset import dataset

    return upgrade_dataset(dataset(uri, storage_options=storage_options))


def warm_up() -> dict[str, float]:
    """Load the JSON codec's compiled kernels, or compile them into the user-wide cache now
    (the first time on a machine: 10 to 30 s each, said on stderr); seconds each took.

    Not needed: a process converts its first few MB of JSON without them and loads them when
    its work grows. Useful in an image build (``lance-semantic warm-up``) or before timing.

    >>> import lance_semantic as ls
    >>> sorted(ls.warm_up())
    ['check_rows', 'encode_rows', 'render_rows']
    """
    return json_codec.warm_up()
