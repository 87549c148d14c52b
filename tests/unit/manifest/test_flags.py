"""Feature flag names, read/write checks and the next version's flags (facts §6)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lance_semantic.errors import CorruptManifestError, UnsupportedFeatureError
from lance_semantic.manifest import flags
from lance_semantic.manifest.flags import (
    FLAG_BASE_PATHS,
    FLAG_DELETION_FILES,
    FLAG_MIXED_FILE_VERSIONS,
    FLAG_SEMANTIC_TYPES,
    FLAG_STABLE_FIELD_IDS,
    FLAG_STABLE_ROW_IDS,
    FLAG_TABLE_CONFIG,
    FLAG_USE_V2_FORMAT_DEPRECATED,
    check_readable,
    check_writable,
    flag_names,
    next_flags,
)

from ._samples import sample_fragment, sample_manifest


def test_bit_values():
    assert [FLAG_DELETION_FILES, FLAG_STABLE_ROW_IDS, FLAG_USE_V2_FORMAT_DEPRECATED] == [1, 2, 4]
    assert [FLAG_TABLE_CONFIG, FLAG_BASE_PATHS, FLAG_MIXED_FILE_VERSIONS] == [8, 16, 256]
    assert FLAG_STABLE_FIELD_IDS == 32768
    assert FLAG_SEMANTIC_TYPES == 1 << 32


def test_flag_names():
    assert flag_names(0) == []
    assert flag_names(1 | 8 | (1 << 32) | (1 << 40)) == [
        "deletion_files",
        "table_config",
        "semantic_types",
        "bit40",
    ]


@pytest.mark.parametrize("bits", [0, 1, 2, 4, 8, 256, 1 << 32, 1 | 2 | 256 | (1 << 32)])
def test_readable_bits(bits):
    check_readable(bits)


@pytest.mark.parametrize("bit", [4, 5, 6, 7, 9, 10, 11, 14, 15, 16, 17, 31, 33, 63])
def test_unknown_reader_bit_refused(bit):
    with pytest.raises(UnsupportedFeatureError) as err:
        check_readable(1 | 1 << bit, "mem://t")
    assert err.value.kind == "reader"
    assert err.value.flags == 1 << bit
    assert err.value.bits == (bit,)
    assert err.value.uri == "mem://t"


@pytest.mark.parametrize("bits", [0, 1, 4, 8, 256, 1 << 32])
def test_writable_bits(bits):
    check_writable(bits)


@pytest.mark.parametrize("bit", [1, 4, 5, 6, 7, 10, 14, 15, 16, 40])
def test_unknown_writer_bit_refused(bit):
    with pytest.raises(UnsupportedFeatureError) as err:
        check_writable(1 << bit)
    assert err.value.kind == "writer"
    assert err.value.bits == (bit,)


def test_checks_accept_a_manifest():
    m = sample_manifest(
        reader_feature_flags=1 | FLAG_SEMANTIC_TYPES, writer_feature_flags=9 | FLAG_SEMANTIC_TYPES
    )
    check_readable(m)
    check_writable(m)
    with pytest.raises(UnsupportedFeatureError):
        check_writable(replace(m, writer_feature_flags=FLAG_STABLE_FIELD_IDS))
    check_readable(replace(m, writer_feature_flags=FLAG_STABLE_FIELD_IDS))


def test_mixed_file_versions_must_be_paired():
    m = sample_manifest(reader_feature_flags=256, writer_feature_flags=0)
    with pytest.raises(CorruptManifestError):
        check_readable(m, "t")
    with pytest.raises(CorruptManifestError):
        check_writable(m, "t")
    check_readable(replace(m, writer_feature_flags=256))


def test_next_flags_recomputes_owned_bits():
    no_deletions = sample_manifest(fragments=(sample_fragment(0),), config={})
    assert next_flags(1 | 4, 1 | 4 | 8, no_deletions) == (0, 0)
    with_deletions = sample_manifest(config={"a": "b"})
    assert next_flags(0, 0, with_deletions) == (1, 1 | 8)


def test_next_flags_carries_bits_it_does_not_own():
    m = sample_manifest(fragments=(), config={})
    carried_r = FLAG_SEMANTIC_TYPES | FLAG_STABLE_ROW_IDS | FLAG_MIXED_FILE_VERSIONS | 1 << 20
    carried_w = FLAG_SEMANTIC_TYPES | FLAG_STABLE_FIELD_IDS | FLAG_MIXED_FILE_VERSIONS
    assert next_flags(carried_r | 1, carried_w | 8, m) == (carried_r, carried_w)


def test_flag_constants_are_exported():
    for name in flags.__all__:
        assert hasattr(flags, name)
