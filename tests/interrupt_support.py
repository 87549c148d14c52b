"""Helpers of the interrupt tests: a ``KeyboardInterrupt`` injected at one call of a chosen
function, and guards that turn a hang into a test failure."""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Hung", "Interrupt", "in_main_thread", "in_thread", "on_every_thread"]


class Interrupt:
    """Raises ``KeyboardInterrupt`` at call number ``at`` (counted over every thread) of
    ``owner.name``.

    ``mode``: ``"before"`` the call; ``"after"`` it returns (the signal lands between a
    call that took a resource and the code that guards it: Python checks for signals as a
    call returns); ``"next"``: at the ``at``-th ``next()`` of the iterators the function
    returns, before the underlying iterator is asked (which is left suspended, as a
    consumer interrupted between two batches leaves it). ``at=0`` only counts the calls.
    """

    def __init__(self, owner: Any, name: str, mode: str, at: int = 0) -> None:
        self.owner, self.name, self.mode, self.at = owner, name, mode, at
        self.calls = 0
        self.fired = False
        self._lock = threading.Lock()
        self._original: Any = None

    def __repr__(self) -> str:
        owner = getattr(self.owner, "__name__", repr(self.owner))
        return f"{owner}.{self.name} ({self.mode}, call {self.at} of {self.calls})"

    def _tick(self) -> bool:
        with self._lock:
            self.calls += 1
            fire = self.calls == self.at and not self.fired
            self.fired = self.fired or fire
        return fire

    def _iterate(self, it: Iterable[Any]) -> Iterator[Any]:
        source = iter(it)
        while True:
            if self._tick():
                raise KeyboardInterrupt(f"injected at {self!r}")
            try:
                item = next(source)
            except StopIteration:
                return
            yield item

    def __enter__(self) -> Interrupt:
        original = self._original = getattr(self.owner, self.name)
        injected = self

        def call(*args: Any, **kwargs: Any) -> Any:
            if injected.mode == "before" and injected._tick():
                raise KeyboardInterrupt(f"injected at {injected!r}")
            out = original(*args, **kwargs)
            if injected.mode == "after" and injected._tick():
                raise KeyboardInterrupt(f"injected at {injected!r}")
            return injected._iterate(out) if injected.mode == "next" else out

        setattr(self.owner, self.name, call)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(self.owner, self.name, self._original)


class Hung(AssertionError):
    """A guarded call did not finish in time."""


def in_thread(fn: Callable[[], Any], timeout: float, what: str) -> Any:
    """``fn()`` run on a new thread; its result, or its exception re-raised here; a
    :class:`Hung` failure when it has not finished after ``timeout`` seconds (the thread
    is left behind: a daemon)."""
    out: list[Any] = []
    err: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # (re-raised on the caller's thread)
            err.append(e)

    t = threading.Thread(target=run, daemon=True, name="interrupt-test")
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise Hung(f"{what} did not finish in {timeout} s")
    if err:
        raise err[0]
    return out[0]


def in_main_thread(fn: Callable[[], Any], timeout: float, what: str) -> Any:
    """``fn()`` on this (the main) thread, where the state kept per thread is the state the
    interrupted call used; a :class:`Hung` failure when it has not finished after
    ``timeout`` seconds (a watchdog interrupts it)."""
    fired = threading.Event()

    def watchdog() -> None:
        fired.set()
        _thread.interrupt_main()

    timer = threading.Timer(timeout, watchdog)
    timer.start()
    try:
        return fn()
    except KeyboardInterrupt:
        if fired.is_set():
            raise Hung(f"{what} did not finish in {timeout} s") from None
        raise
    finally:
        timer.cancel()


def on_every_thread(
    submit: Callable[[Callable[[], Any]], Any], workers: int, fn: Callable[[], Any], timeout: float
) -> list[Any]:
    """``fn()`` on each of a thread pool's ``workers`` threads at once (``submit`` is the
    pool's): each task waits for all of them to start, so no thread runs two. A worker that
    never comes is a :class:`Hung` failure (a stuck thread)."""
    barrier = threading.Barrier(workers)

    def task() -> Any:
        try:
            barrier.wait(timeout)
        except threading.BrokenBarrierError:
            raise Hung(f"not every one of the {workers} pool threads took a task") from None
        return fn()

    futures = [submit(task) for _ in range(workers)]
    return [f.result(timeout=2 * timeout) for f in futures]
