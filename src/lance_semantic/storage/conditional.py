"""Create-once puts whose outcome is settled by reading back (layer L3).

A manifest or a tag file is created with put-if-absent, and a writer must know whether
*its* bytes are the ones stored. The store's answer is not enough: an object store
client retries a PUT whose answer was lost, and the retry then meets the object the
first attempt stored (412, "already exists"); a PUT whose answer never came may also be
applied by the server later. So every refusal and every failure is settled by reading
the object back: byte for byte ours means stored by us; another well-formed object means
another writer's; nothing there after a failed put is put again, with the same bytes (at
most one of the puts can be stored), until the store answers for certain.
"""

from __future__ import annotations

from collections.abc import Callable

from .object_store import ObjectStore

__all__ = ["OutcomeUnknown", "create_once", "ATTEMPTS"]

#: puts of one object (the first included) before its outcome is called unknown
ATTEMPTS = 4


class OutcomeUnknown(OSError):
    """No answer settled whether the object was stored (``cause``: the last failure)."""

    def __init__(self, uri: str, cause: BaseException | None) -> None:
        self.uri = uri
        self.cause = "the store gave no definite answer" if cause is None else str(cause)
        super().__init__(f"{uri}: {self.cause}")


def create_once(
    store: ObjectStore,
    path: str,
    data: bytes,
    *,
    well_formed: Callable[[bytes], bool] = lambda _: True,
    attempts: int = ATTEMPTS,
) -> bool:
    """Create ``path`` holding ``data`` unless it exists: True when the store holds our
    bytes there now, False when it holds another writer's.

    ``well_formed`` tells a complete object from a damaged read of one (a truncated body
    is read again, never taken for another writer's object).

    Raises
    ------
    OSError
        On a local disk, the put failed and nothing was stored.
    OutcomeUnknown
        No answer settled it within ``attempts`` puts (an object store).
    """
    failure: BaseException | None = None
    for _ in range(attempts):
        try:
            if store.put_if_absent(path, data):
                return True
        except OSError as e:
            failure = e
        try:
            there = store.get(path)
        except FileNotFoundError:
            if failure is not None and store.is_local:
                raise failure from None  # a local put that failed stored nothing
            continue  # refused, then gone; or a remote put that may not have landed
        except OSError as e:
            failure = e
            continue
        if there == data:
            return True
        if not well_formed(there):
            failure = OSError(f"what was read back from {store.uri(path)} is damaged")
            continue
        return False
    raise OutcomeUnknown(store.uri(path), failure) from failure
