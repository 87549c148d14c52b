"""The pool of open data-file readers (``storage.datafile._ReaderPool``): taken and given
back without a lock, it must never hand one reader to two threads at once, and it keeps
readers of at most about ``capacity`` files."""

from __future__ import annotations

import threading
import time

from lance_semantic.storage.datafile import _ReaderPool


class _Reader:
    """Stands for a pylance reader: records that it is in use, and fails when two threads
    use it at once (as pylance's "Already borrowed")."""

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self.uses = 0

    def use(self) -> None:
        assert self.busy.acquire(blocking=False), "one reader used by two threads at once"
        try:
            self.uses += 1
            time.sleep(0)  # let other threads run while it is held
        finally:
            self.busy.release()


def test_no_reader_is_held_by_two_threads_at_once() -> None:
    pool = _ReaderPool(capacity=64)
    keys = [(f"f{k}", None, None) for k in range(5)]  # few files: threads meet on each
    opened: list[_Reader] = []
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for n in range(3000):
                key = keys[(seed * 7 + n) % len(keys)]
                reader = pool.take(key)
                if reader is None:
                    reader = _Reader()
                    opened.append(reader)
                reader.use()  # type: ignore[union-attr]
                pool.give(key, reader)  # type: ignore[arg-type]
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sum(r.uses for r in opened) == 8 * 3000
    # readers are reused: at most one per thread and file was ever opened
    assert len(opened) <= 8 * len(keys)


def test_capacity_bounds_the_files_kept_and_the_first_given_back_go_first() -> None:
    pool = _ReaderPool(capacity=10)
    for k in range(25):
        pool.give((f"f{k}", None, None), _Reader())  # type: ignore[arg-type]
    assert pool.take(("f0", None, None)) is None
    assert pool.take(("f24", None, None)) is not None
    kept = [k for k in range(25) if pool.take((f"f{k}", None, None)) is not None]
    assert len(kept) <= 10 and kept[-1] == 23


def test_concurrent_giving_back_past_capacity_keeps_it_bounded() -> None:
    pool = _ReaderPool(capacity=50)

    def work(seed: int) -> None:
        for n in range(2000):
            pool.give((f"f{seed}-{n}", None, None), _Reader())  # type: ignore[arg-type]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pool.give(("last", None, None), _Reader())  # type: ignore[arg-type]
    assert len(pool._idle) <= 50


class _SignalAfterTaking:
    """The pool's trimming lock, with a signal (``KeyboardInterrupt``) landing the first
    time it is taken by a call: Python checks for signals as a call returns, so a lock
    taken by ``acquire()`` can be held when the signal is raised, before any ``try``
    guards it. ``with`` takes it with no such moment (no check between entering the lock
    and the block), so entering by ``with`` is not interrupted here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.signalled = False

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        taken = self._lock.acquire(blocking, timeout)
        if taken and not self.signalled:
            self.signalled = True
            raise KeyboardInterrupt
        return taken

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def test_a_signal_while_the_pool_trims_leaves_it_bounded() -> None:
    """A Ctrl-C the moment the trimming lock is taken must not leave it taken for good
    (the pool would then never trim again and keep every reader opened since)."""
    pool = _ReaderPool(capacity=10)
    pool._trimming = _SignalAfterTaking()  # type: ignore[assignment]
    for k in range(40):
        try:
            pool.give((f"f{k}", None, None), _Reader())  # type: ignore[arg-type]
        except KeyboardInterrupt:
            pass
    assert len(pool._idle) <= 10
    assert not pool._trimming.locked()
