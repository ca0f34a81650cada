"""The torch thread count of a forward pass: chosen per pass, set and restored under one process-wide lock.

``torch.set_num_threads`` changes the whole process. So the setting and the pass
it is for happen together under :data:`TORCH_THREADS` (re-entrant): while one
command's pass runs with the count it chose, no other command can change it, and
no choice outlives the pass that made it.
"""

from __future__ import annotations

import os
import threading
import time

import torch

from tools.models.cpu import cores

#: Up to this many (padded) tokens in a forward pass one torch thread is faster than
#: every core on a 2-core machine: one 12-token input took 12 ms on 1 thread and 200 ms
#: on 2; from 24-48 tokens 2 threads won on an idle machine (bench/threads.py). Above
#: it a ThreadChooser picks from measured speed, since on a busy machine 1 thread wins.
SINGLE_THREAD_TOKENS = 32

#: Held while a thread count is set and the work it was set for runs.
TORCH_THREADS = threading.RLock()


def _fresh_lock_in_child() -> None:
    """A forked worker (ZeroGPU's) starts with the lock free: the thread that held it was not copied."""
    global TORCH_THREADS
    TORCH_THREADS = threading.RLock()


os.register_at_fork(after_in_child=_fresh_lock_in_child)


def max_threads() -> int:
    """The cores this process may use (:func:`tools.models.cpu.cores`; a seam the tests narrow)."""
    return cores()


class ThreadChooser:
    """Picks 1 thread or every core for large forward passes from their measured speed.

    On a 2-core machine two threads were 2-3x faster than one when the cores were
    idle and 3-5x slower when other processes kept them busy (bench/threads.py), and
    that changes from minute to minute. So each model keeps a moving average of
    seconds per token for both choices, uses the faster one, and tries the other
    every ``EXPLORE_EVERY`` large passes to notice when the machine changes.
    """

    EXPLORE_EVERY = 24  # trying the slower choice costs about 1/24 of the difference
    WEIGHT = 0.3  # of the newest measurement in the moving average

    def __init__(self, cores: int | None = None) -> None:
        self.choices = sorted({1, cores or max_threads()})
        self.rate: dict[int, float | None] = {c: None for c in self.choices}
        self.passes = 0
        self._lock = threading.Lock()

    def pick(self) -> int:
        """The thread count for the next large pass."""
        with self._lock:
            self.passes += 1
            known = {c: rate for c in self.choices if (rate := self.rate[c]) is not None}
            unknown = [c for c in self.choices if c not in known]
            if unknown:
                return unknown[-1]
            best = min(known, key=known.__getitem__)
            if self.passes % self.EXPLORE_EVERY == 0:
                return next(c for c in self.choices if c != best) if len(self.choices) > 1 else best
            return best

    def record(self, threads: int, n_tokens: int, seconds: float) -> None:
        """Fold one pass's seconds per token into the moving average of its thread count."""
        with self._lock:
            rate = seconds / max(1, n_tokens)
            old = self.rate.get(threads)
            self.rate[threads] = rate if old is None else (1 - self.WEIGHT) * old + self.WEIGHT * rate


class threads_for:
    """Run a block with one torch thread for small work and, for large passes, the faster of 1 and every core.

    Entering takes :data:`TORCH_THREADS`, sets the count, and leaves it set for the
    whole block; leaving restores the count before and releases the lock. ``chooser``
    (a model's :class:`ThreadChooser`) decides large passes from measured speed and
    is told how long each took; without one, large passes use every core.
    """

    def __init__(self, n_tokens: int, chooser: ThreadChooser | None = None) -> None:
        self.n_tokens = n_tokens
        self.chooser = chooser
        cores = max_threads()
        if cores == 1 or n_tokens <= SINGLE_THREAD_TOKENS:
            self.wanted = 1
        else:
            self.wanted = chooser.pick() if chooser is not None else cores

    def __enter__(self) -> threads_for:
        self.lock = TORCH_THREADS
        self.lock.acquire()
        self.before = torch.get_num_threads()
        if self.wanted != self.before:
            torch.set_num_threads(self.wanted)
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.chooser is not None and self.n_tokens > SINGLE_THREAD_TOKENS and exc[0] is None:
                self.chooser.record(self.wanted, self.n_tokens, time.perf_counter() - self.start)
            if torch.get_num_threads() != self.before:
                torch.set_num_threads(self.before)
        finally:
            self.lock.release()
