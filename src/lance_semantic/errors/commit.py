"""Commit errors (layer L0): a conflict, an outcome left unknown, a cleanup refused for
tagged versions. Import them from :mod:`lance_semantic.errors`.
"""

from __future__ import annotations

from .base import CommitError

__all__ = [
    "TaggedVersionsCleanupError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
]


class TaggedVersionsCleanupError(CommitError, OSError):
    """Raised by ``cleanup_old_versions(error_if_tagged_old_versions=True)`` when tagged
    versions match the cleanup policy; nothing is deleted. ``tags`` maps each such tag to
    its version. An ``OSError``, as pylance 14's cleanup error.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> ds.tags.create("keep")
    >>> _ = ds.insert(pa.table({"id": [2]}), mode="overwrite")
    >>> try:
    ...     ds.cleanup_old_versions(retain_versions=1)
    ... except ls.TaggedVersionsCleanupError as e:
    ...     print(e.tags, len(ds.versions()))
    {'keep': 1} 2
    >>> ds.cleanup_old_versions(retain_versions=1, error_if_tagged_old_versions=False).old_versions
    0
    """

    def __init__(self, tags: dict[str, int]) -> None:
        self.tags = dict(sorted(tags.items()))
        listed = ", ".join(f"{name!r}: {version}" for name, version in self.tags.items())
        super().__init__(
            f"Cleanup error: {len(self.tags)} tagged version(s) have been marked for cleanup. "
            f"Either set error_if_tagged_old_versions=False or delete the following tag(s) "
            f"to enable cleanup: {{{listed}}}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class CommitConflictError(CommitError):
    """Raised when a concurrent commit conflicts and retries are exhausted.

    ``retryable`` is False when re-running the operation on the newest version cannot help
    (the other commit replaced the table: an overwrite or a restore), as Lance's
    "incompatible" conflicts; delete / update / merge_insert re-run only retryable ones.

    >>> e = CommitConflictError(4, 5, "an overwrite replaced the table", retryable=False)
    >>> e.read_version, e.attempted_version, e.retryable
    (4, 5, False)
    >>> str(e)
    'commit conflict: read version 4, could not publish version 5 (an overwrite replaced the table)'
    """

    def __init__(
        self,
        read_version: int,
        attempted_version: int,
        reason: str = "",
        *,
        retryable: bool = True,
    ) -> None:
        self.read_version = read_version
        self.attempted_version = attempted_version
        self.retryable = retryable
        msg = (
            f"commit conflict: read version {read_version}, could not publish version "
            f"{attempted_version}"
        )
        super().__init__(msg + (f" ({reason})" if reason else ""))


class CommitOutcomeUnknownError(CommitError, OSError):
    """Raised when publishing a version (or creating a tag: ``tag``) failed in a way that
    leaves unknown whether the manifest was stored (the store's answer was lost and the
    manifest cannot be read back). The operation's data files are kept, since a published
    manifest may name them; ``ls.dataset(uri)`` shows whether version
    ``attempted_version`` exists.

    >>> e = CommitOutcomeUnknownError(3, "t.lance/_versions/3.manifest", "connection reset")
    >>> e.attempted_version, e.path, e.cause, isinstance(e, OSError)
    (3, 't.lance/_versions/3.manifest', 'connection reset', True)
    """

    def __init__(
        self, attempted_version: int, path: str, cause: str, *, tag: str | None = None
    ) -> None:
        self.attempted_version = attempted_version
        self.path = path
        self.cause = cause
        #: the tag whose creation is in doubt (a tag on ``attempted_version``), else None
        self.tag = tag
        if tag is not None:
            message = (
                f"could not tell whether tag {tag!r} (on version {attempted_version}) was "
                f"created ({path}): {cause}; list the tags to see"
            )
        else:
            message = (
                f"could not tell whether version {attempted_version} was published ({path}): "
                f"{cause}; its data files are kept; open the table to see which version is "
                "latest"
            )
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])
