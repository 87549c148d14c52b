#!/usr/bin/env bash
# Regenerate src/lance_semantic/manifest/_pb/*_pb2.py(i) from manifest/protos/*.proto.
#
# Needs grpcio-tools (python -m grpc_tools.protoc). Run from anywhere:
#     scripts/gen_protos.sh            (uses $PYTHON, else python3; $OUT_DIR overrides the target)
#
# Post-processing:
#   * imports between our generated modules become package-relative
#     ("import lance_file_pb2 as ..." -> "from . import lance_file_pb2 as ...");
#   * the gencode/runtime version check (_runtime_version.ValidateProtobufRuntimeVersion)
#     is removed: protoc 35 emits a check that demands protobuf >= 7.35 (and warns on
#     older majors), but the generated code itself only uses APIs present since
#     protobuf 5.26, which is the minimum the project declares.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROTO_DIR="$ROOT/src/lance_semantic/manifest/protos"
OUT_DIR="${OUT_DIR:-$ROOT/src/lance_semantic/manifest/_pb}"
PYTHON="${PYTHON:-python3}"

mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR"/*_pb2.py "$OUT_DIR"/*_pb2.pyi

"$PYTHON" -m grpc_tools.protoc \
  --proto_path="$PROTO_DIR" \
  --python_out="$OUT_DIR" \
  --pyi_out="$OUT_DIR" \
  "$PROTO_DIR"/lance_file.proto \
  "$PROTO_DIR"/lance_table.proto \
  "$PROTO_DIR"/lance_transaction.proto

for f in "$OUT_DIR"/*_pb2.py "$OUT_DIR"/*_pb2.pyi; do
  # package-relative imports of our own generated modules
  sed -i -E 's/^import (lance_[a-z_]+_pb2)( as .*)?$/from . import \1\2/' "$f"
done

for f in "$OUT_DIR"/*_pb2.py; do
  # drop the runtime version check (see header)
  "$PYTHON" - "$f" <<'EOF'
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
text = re.sub(r"^from google\.protobuf import runtime_version as _runtime_version\n", "", text,
              flags=re.M)
text = re.sub(r"^_runtime_version\.ValidateProtobufRuntimeVersion\(\n(?:.*\n)*?\)\n", "", text,
              flags=re.M)
if "_runtime_version" in text:
    sys.exit(f"{path}: runtime version check not removed; update scripts/gen_protos.sh")
open(path, "w", encoding="utf-8").write(text)
EOF
done

cat > "$OUT_DIR/__init__.py" <<'EOF'
"""Generated protobuf modules (private; regenerate with scripts/gen_protos.sh)."""
EOF

echo "generated: $(ls "$OUT_DIR")"
