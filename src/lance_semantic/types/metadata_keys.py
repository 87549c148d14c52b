"""The field-metadata keys and extension names this library reads and writes (layer L1; it
imports nothing, so every layer can).

Arrow's keys name an extension type; pylance's ``lance-encoding:*`` keys mark blob columns and
tune their storage; ``lance-schema:*`` keys are the Lance-owned entries of the table schema:
the output encoding (spec "Output Encoding"), an extension layered over a type that already
has an Arrow extension (open decision 2), and the unenforced primary / clustering keys pylance
records. Keys are ``str``; code that looks them up in pyarrow metadata (``bytes`` keys) uses
``KEY.encode()``.

>>> OUTPUT_ENCODING_KEY
'lance-schema:output-encoding'
>>> EXTENSION_NAME_KEY.startswith(EXTENSION_KEY_PREFIX)
True
"""

from __future__ import annotations

__all__ = [
    "EXTENSION_KEY_PREFIX",
    "EXTENSION_NAME_KEY",
    "EXTENSION_METADATA_KEY",
    "LAYERED_NAME_KEY",
    "LAYERED_METADATA_KEY",
    "OUTPUT_ENCODING_KEY",
    "BLOB_KEY",
    "PACKED_KEY",
    "INLINE_THRESHOLD_KEY",
    "DEDICATED_THRESHOLD_KEY",
    "PACK_FILE_THRESHOLD_KEY",
    "PRIMARY_KEY_KEY",
    "PRIMARY_KEY_POSITION_KEY",
    "CLUSTERING_KEY_POSITION_KEY",
    "ARROW_JSON_EXTENSION",
    "LANCE_JSON_EXTENSION",
    "BLOB_V2_EXTENSION",
    "BFLOAT16_EXTENSION",
]

# ---- Arrow's extension keys ----
#: the prefix of Arrow's extension keys (both below)
EXTENSION_KEY_PREFIX = "ARROW:extension:"
EXTENSION_NAME_KEY = "ARROW:extension:name"
EXTENSION_METADATA_KEY = "ARROW:extension:metadata"

# ---- Lance-owned schema keys ----
#: an extension layered over a type that has an Arrow extension of its own (``arrow.json``)
LAYERED_NAME_KEY = "lance-schema:extension-name"
LAYERED_METADATA_KEY = "lance-schema:extension-metadata"
#: the field's output encoding (read-only on data files: the table schema holds it)
OUTPUT_ENCODING_KEY = "lance-schema:output-encoding"
#: pylance's unenforced primary key and the positions of primary / clustering key columns
PRIMARY_KEY_KEY = "lance-schema:unenforced-primary-key"
PRIMARY_KEY_POSITION_KEY = "lance-schema:unenforced-primary-key:position"
CLUSTERING_KEY_POSITION_KEY = "lance-schema:unenforced-clustering-key:position"

# ---- pylance's blob encoding keys (docs/format/lance-format-facts.md §10) ----
#: marks a blob v1 column (``large_binary``), value ``"true"``
BLOB_KEY = "lance-encoding:blob"
#: marks a packed blob v1 column
PACKED_KEY = "lance-encoding:packed"
#: blob v2 size thresholds (inline / dedicated file / pack file)
INLINE_THRESHOLD_KEY = "lance-encoding:blob-inline-size-threshold"
DEDICATED_THRESHOLD_KEY = "lance-encoding:blob-dedicated-size-threshold"
PACK_FILE_THRESHOLD_KEY = "lance-encoding:blob-pack-file-size-threshold"

# ---- extension names (values of EXTENSION_NAME_KEY) ----
ARROW_JSON_EXTENSION = "arrow.json"
LANCE_JSON_EXTENSION = "lance.json"
BLOB_V2_EXTENSION = "lance.blob.v2"
BFLOAT16_EXTENSION = "lance.bfloat16"
