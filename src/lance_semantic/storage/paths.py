"""Names of the files of a Lance table directory (layer L3; facts §1, §7, §8).

Pure functions: no IO. Manifests use the V2 naming scheme for new tables
(``u64::MAX - version``, zero-padded to 20 digits) and are read in either scheme.
"""

from __future__ import annotations

import uuid
from enum import Enum

__all__ = [
    "VERSIONS_DIR",
    "DATA_DIR",
    "TRANSACTIONS_DIR",
    "DELETIONS_DIR",
    "HINT_FILE",
    "NamingScheme",
    "manifest_name",
    "parse_manifest_name",
    "new_data_file_name",
    "transaction_file_name",
    "deletion_file_name",
]

VERSIONS_DIR = "_versions"
DATA_DIR = "data"
TRANSACTIONS_DIR = "_transactions"
DELETIONS_DIR = "_deletions"
HINT_FILE = "latest_version_hint.json"

_U64_MAX = (1 << 64) - 1
_V2_NAME_LEN = 20 + len(".manifest")


class NamingScheme(Enum):
    V1 = "v1"  # "{version}.manifest"
    V2 = "v2"  # "{u64::MAX - version:020d}.manifest"


def manifest_name(version: int, scheme: NamingScheme = NamingScheme.V2) -> str:
    """The file name of ``version``'s manifest under ``scheme``.

    >>> manifest_name(1)
    '18446744073709551614.manifest'
    >>> manifest_name(3, NamingScheme.V1)
    '3.manifest'
    """
    if scheme is NamingScheme.V1:
        return f"{version}.manifest"
    return f"{_U64_MAX - version:020d}.manifest"


def parse_manifest_name(name: str) -> tuple[int, NamingScheme] | None:
    """(version, scheme) of a manifest file name, or None for other files.

    Detached versions (``d…``) and ``_latest.manifest`` are not versions and give None.

    >>> parse_manifest_name('18446744073709551613.manifest')
    (2, <NamingScheme.V2: 'v2'>)
    >>> parse_manifest_name('12.manifest')
    (12, <NamingScheme.V1: 'v1'>)
    """
    if not name.endswith(".manifest") or name.startswith("d"):
        return None
    head = name.split(".", 1)[0]
    if not head.isdigit():
        return None
    if len(name) == _V2_NAME_LEN:
        return _U64_MAX - int(head), NamingScheme.V2
    return int(head), NamingScheme.V1


def new_data_file_name() -> str:
    """A fresh data file name shaped like pylance's (facts §1): 24 bits, then 26 hex digits.

    >>> len(new_data_file_name())
    56
    """
    raw = uuid.uuid4().bytes
    bits = "".join(f"{b:08b}" for b in raw[:3])
    return f"{bits}{raw[3:].hex()}.lance"


def transaction_file_name(read_version: int, txn_uuid: str) -> str:
    return f"{read_version}-{txn_uuid}.txn"


def deletion_file_name(fragment_id: int, read_version: int, file_id: int, bitmap: bool) -> str:
    return f"{fragment_id}-{read_version}-{file_id}.{'bin' if bitmap else 'arrow'}"
