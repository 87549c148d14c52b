"""pylance's flat scan keywords turned into one checked ``ScanRequest`` (layer L5).

``Dataset.to_table`` / ``to_batches`` / ``scanner`` / ``take``, ``LanceFragment``'s reads
and ``ray.read_lance`` take pylance's keywords; each builds its request here, once, before
anything is read, so every entry point checks its arguments the same way and names the
argument that is wrong. Planning and execution then take the request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from ...read import Columns, Filter, ScanRequest
from . import arguments as args

__all__ = ["scan_request", "chosen_fragments"]


def scan_request(
    columns: object = None,
    filter: object = None,
    limit: object = None,
    offset: object = None,
    *,
    batch_size: object = None,
    with_row_id: object = False,
    with_row_address: object = False,
    output_encodings: object = None,
    fragments: object = None,
    use_scalar_index: object = None,
) -> ScanRequest:
    """The request of a scan given pylance's keywords (``Dataset.scanner``'s), checked.

    Raises
    ------
    TypeError, ValueError
        An argument of the wrong type, a negative ``limit`` or ``offset``,
        ``batch_size=0``, ``fragments`` that is not a list.

    Examples
    --------
    >>> from lance_semantic.dataset.core.scan_arguments import scan_request
    >>> scan_request(["id"], "id > 1", limit=True).limit
    1
    >>> scan_request(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be at least 1, got 0
    """
    args.check_columns(columns)
    args.check_filter("filter", filter)
    args.check_str_mapping("output_encodings", output_encodings, values="output encoding (str)")
    checked_limit = args.check_optional_int("limit", limit)
    checked_offset = args.check_optional_int("offset", offset)
    checked_batch = args.check_optional_int("batch_size", batch_size, minimum=1)
    row_id = bool(args.check_optional_bool("with_row_id", with_row_id))
    row_addr = bool(args.check_optional_bool("with_row_address", with_row_address))
    scalar_index = args.check_optional_bool("use_scalar_index", use_scalar_index)
    return ScanRequest(
        columns=cast("Columns | None", columns),
        filter=cast("Filter | None", filter),
        limit=checked_limit,
        offset=checked_offset,
        batch_size=checked_batch,
        with_row_id=row_id,
        with_row_address=row_addr,
        output_encodings=cast("Mapping[str, str] | None", output_encodings),
        fragments=chosen_fragments(fragments),
        use_scalar_index=scalar_index,
    )


def chosen_fragments(fragments: object) -> tuple[object, ...] | None:
    """``fragments`` as a tuple (None: every fragment); a ``TypeError`` for anything but a
    list (or other iterable) of fragments."""
    if fragments is None:
        return None
    if isinstance(fragments, str | bytes | Mapping) or not isinstance(fragments, Iterable):
        raise TypeError(f"fragments must be a list of LanceFragment, got {fragments!r}")
    return tuple(fragments)
