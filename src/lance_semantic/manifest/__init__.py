"""On-disk table metadata: manifest and transaction codec, feature flags (layer L3).

``model`` holds the immutable values, ``codec`` converts them to and from the bytes of
``_versions/*.manifest`` and ``_transactions/*.txn`` files, ``flags`` names the feature
flag bits. The generated protobuf modules in ``_pb`` are private to this package.
"""
