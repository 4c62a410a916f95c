"""Ranks as threads of one process, behaving as Iris's processes do towards each other.

- **They take turns.** One rank runs Python at a time; it hands the turn on when it waits for a
  collective call (an op the other ranks have not all made yet, a barrier) or returns, to the next
  rank in rank order that can go on. So a program runs the same way every time, whatever the
  host's thread timing.
- **Each rank has its own process-wide random state**, as each Iris process has its own: numpy's
  global generator (np.random.seed / np.random.*), Python's `random` and torch's default generator
  (torch.manual_seed / torch.randn) are saved when a rank hands the turn on and restored when it
  takes it back. Each rank starts from the state of the program that called spawn (as a forked
  process would), so `torch.manual_seed(42)` on every rank gives every rank the same tensors, and
  `torch.manual_seed(42 + rank)` different ones.
- **Collective calls meet**: the k-th collective call of every rank is one call; the rank that
  makes it last runs it (tandem.Context, every rank's operands at once).

Ranks meet only through tandem.iris's calls, as Iris's processes meet only through the heap and
the process group: a rank that waits for another rank by other means (a threading.Event) would
wait for ever, since the other cannot run meanwhile.
"""
from __future__ import annotations

import math
import os
import pathlib
import random
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tandem import _core
from tandem._context import Context
from tandem.iris import _tensors

Error = _core.Error
DEFAULT_TIMEOUT_S = 120.0


class RanksDidNotMeet(Error):
    """A collective call that cannot complete: a rank did not make it (in time, or at all)."""


_local = threading.local()


def current(what: str):
    """(the world, this thread's rank); raises outside spawn."""
    world = getattr(_local, "world", None)
    if world is None:
        raise RuntimeError(f"tandem.iris.{what}: call it from a function run by tandem.iris.spawn(fn, nprocs) "
                           "(each Iris rank is one of its threads)")
    return world, _local.rank


def _random_states():
    """The process-wide random states a program draws from."""
    torch = _tensors.torch()
    return np.random.get_state(), random.getstate(), (torch.get_rng_state() if torch is not None else None)


def _restore_random_states(states):
    np.random.set_state(states[0])
    random.setstate(states[1])
    torch = _tensors.torch()
    if torch is not None:  # a rank that has not seen torch yet starts from a fresh process's state
        torch.set_rng_state(states[2] if states[2] is not None else torch.Generator().get_state())


class Call:
    """One collective call, met by every rank."""

    def __init__(self, name):
        self.name = name
        self.entries = {}       # rank -> its part (arguments captured at its call)
        self.done = False
        self.error = None       # the message every rank raises
        self.error_type = Error
        self.result = None      # what the run returned


class World:
    def __init__(self, nprocs, context: Context, timeout_s, trace_dir=None, trace_ranks=None):
        self.nprocs = nprocs
        self.context = context
        self.timeout_s = timeout_s
        self.cond = threading.Condition()
        self.next_call = [0] * nprocs
        self.calls = {}
        self.handles = [None] * nprocs
        self.pending = [[] for _ in range(nprocs)]  # each rank's async calls not yet waited for
        self.gone = {}  # rank -> why it will make no more calls ("returned", "raised ValueError: ...")
        self.trace_dir = trace_dir      # a pathlib.Path: each op call writes its trace there
        self.trace_ranks = trace_ranks  # "0,3" (the config's form), or None for every rank
        self.op_calls = 0               # op calls run so far (barriers not counted): the trace files' numbers
        # Turns: the rank running Python, and for each rank not running, when it may go on.
        self.turn = 0
        start = _random_states()
        self.random_states = [start] * nprocs
        self.waiting = {r: (lambda: True) for r in range(nprocs)}

    # Turns ------------------------------------------------------------------------------------

    def _hand_on(self, rank):
        """The rank holding the turn stops: the next rank after it that may go on gets the turn."""
        for step in range(1, self.nprocs + 1):
            r = (rank + step) % self.nprocs
            if r in self.waiting and self.waiting[r]():
                self.turn = r
                break
        else:
            self.turn = None  # every rank waits: the first whose wait ends (a timeout) takes it
        self.cond.notify_all()

    def _take(self, rank):
        self.turn = rank
        del self.waiting[rank]
        _restore_random_states(self.random_states[rank])

    def enter(self, rank):
        """A rank's thread starts: it runs when its turn comes."""
        with self.cond:
            self.cond.wait_for(lambda: self.turn == rank)
            self._take(rank)

    def leave(self, rank, why):
        """A rank's function ended (`why`: returned, raised ...): the others stop waiting for calls it
        will not make."""
        with self.cond:
            self.gone[rank] = why
            self._hand_on(rank)

    def _block(self, rank, settled: Callable[[], bool], on_timeout: Callable[[], None]):
        """The running rank waits until settled() (calling on_timeout() once the world's timeout
        has passed without it), handing the turn on meanwhile. Called holding the lock."""
        self.random_states[rank] = _random_states()
        self.waiting[rank] = settled
        self._hand_on(rank)
        deadline = time.monotonic() + self.timeout_s
        while not (settled() and self.turn in (None, rank)):
            if settled():
                self.cond.wait()
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                on_timeout()
                self.cond.notify_all()
                continue
            self.cond.wait(remaining)
        self._take(rank)

    # Collective calls -------------------------------------------------------------------------

    def meet(self, rank, name, entry, run: Callable[[dict], Any], wait: bool) -> Call:
        """Rank `rank`'s part of its next collective call: the last rank to make it runs it."""
        with self.cond:
            index = self.next_call[rank]
            self.next_call[rank] += 1
            call = self.calls.setdefault(index, Call(name))
            if call.name != name and not call.done:
                call.error = (f"tandem.iris: collective call #{index} is {call.name} on rank "
                              f"{min(call.entries)} but {name} on rank {rank}: every rank must make the same calls "
                              "in the same order")
                call.done = True
            call.entries[rank] = entry
            if not call.done and len(call.entries) == self.nprocs:
                try:
                    call.result = run(call.entries)
                except Exception as e:  # every rank raises the op's error
                    call.error, call.error_type = f"{e}", type(e)
                call.done = True
                self.cond.notify_all()
            if wait:
                self.wait(rank, index, call)
            else:
                self.pending[rank].append((index, call))
            return call

    def wait(self, rank, index, call):
        """Waits for call #index to complete; raises its error (or why it cannot complete)."""
        with self.cond:
            def missing():
                return sorted(set(range(self.nprocs)) - set(call.entries))

            def settled():
                return call.done or any(r in self.gone for r in missing())

            def timed_out():
                if not call.done:
                    call.error = (f"tandem.iris: {call.name} (collective call #{index}) was called by rank(s) "
                                  f"{', '.join(map(str, sorted(call.entries)))} but not by rank(s) "
                                  f"{', '.join(map(str, missing()))} within {self.timeout_s:g} s")
                    call.error_type = RanksDidNotMeet
                    call.done = True

            if not settled():
                self._block(rank, settled, timed_out)
            if not call.done:  # a rank that has not called never will
                r = next(r for r in missing() if r in self.gone)
                call.error = (f"tandem.iris: {call.name} (collective call #{index}) cannot complete: rank {r} "
                              f"{self.gone[r]} without calling it")
                call.error_type = RanksDidNotMeet
                call.done = True
            if call.error is not None:
                raise call.error_type(call.error)

    def wait_pending(self, rank):
        """Completes the rank's async calls (in the order it made them)."""
        while True:
            with self.cond:
                if not self.pending[rank]:
                    return
                index, call = self.pending[rank].pop(0)
            self.wait(rank, index, call)

    def barrier(self, rank):
        self.wait_pending(rank)
        self.meet(rank, "barrier", None, lambda entries: None, wait=True)

    def next_trace_file(self, op: str) -> Optional[str]:
        """The file the next op call traces to, or None when spawn was given no trace directory.
        Called by the rank that runs the call: numbered in call order."""
        index = self.op_calls
        self.op_calls += 1
        if self.trace_dir is None:
            return None
        return os.fspath(self.trace_dir / f"{index:03d}_{op}.json")


# spawn ------------------------------------------------------------------------------------------

def _trace_directory(trace) -> Optional[pathlib.Path]:
    """spawn's `trace`: the directory the op calls' traces go to, made if missing."""
    if trace is None:
        return None
    if not isinstance(trace, (str, os.PathLike)) or not os.fspath(trace):
        raise TypeError(f"spawn: trace = {trace!r}: a directory (a str or a pathlib.Path) for the op calls' traces")
    path = pathlib.Path(trace)
    if path.exists() and not path.is_dir():
        raise ValueError(f"spawn: trace = '{path}' is a file: give a directory; each op call writes its own "
                         "trace there (000_<op>.json, 001_<op>.json, ...)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"spawn: trace = '{path}': cannot make the directory: {e.strerror}") from None
    return path


def _trace_rank_list(trace_ranks, nprocs: int, traced: bool) -> Optional[str]:
    """spawn's `trace_ranks` (a list of ranks, one rank, or "0,3") as the config's "0,3"."""
    if trace_ranks is None:
        return None
    if not traced:
        raise ValueError(f"spawn: trace_ranks = {trace_ranks!r} without trace: give trace (the directory) too")
    if isinstance(trace_ranks, str):
        try:
            ranks = [int(r) for r in trace_ranks.split(",")]
        except ValueError:
            raise ValueError(f"spawn: trace_ranks = {trace_ranks!r}: ranks, as a list or a string like '0,3'") from None
    elif isinstance(trace_ranks, (int, np.integer)) and not isinstance(trace_ranks, bool):
        ranks = [int(trace_ranks)]
    elif isinstance(trace_ranks, (list, tuple)) and trace_ranks and all(
            isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in trace_ranks):
        ranks = [int(r) for r in trace_ranks]
    else:
        raise TypeError(f"spawn: trace_ranks = {trace_ranks!r}: ranks, as a list or a string like '0,3'")
    for r in ranks:
        if not 0 <= r < nprocs:
            raise ValueError(f"spawn: trace_ranks = {trace_ranks!r}: rank {r} does not exist ({nprocs} ranks)")
    return ",".join(map(str, ranks))


def spawn(fn: Callable, nprocs: int = 1, args: Sequence = (), join: bool = True, daemon: bool = False,
          start_method: str = "spawn", *, soc: str = "Ascend910B1", profile: str = "", functional: bool = True,
          timeout_s: float = DEFAULT_TIMEOUT_S, trace=None, trace_ranks=None) -> list:
    """Runs fn(rank, *args) for every rank in [0, nprocs), each on a thread of its own taking
    turns (the module's doc), on one simulated cluster (`soc` or a `profile` file;
    `functional=False` simulates times only, outputs are not computed). Returns each rank's return
    value. torch.multiprocessing.spawn's own arguments are taken: join (must be True: spawn
    returns when every rank has ended), daemon and start_method (no meaning for threads).

    If a rank raises, spawn raises that rank's exception (the lowest rank that failed on its own,
    rather than for want of another) once every rank has ended; a rank that never makes a
    collective call the others make fails theirs after `timeout_s` with the missing ranks named.
    With `trace` (a directory, made if missing) each op call writes its trace there, numbered in
    call order: 000_<op>.json, 001_<op>.json, ... (barriers are not op calls); `trace_ranks`
    (a list, one rank or "0,3") keeps only those ranks' events. The program itself is unchanged."""
    if not callable(fn):
        raise TypeError(f"spawn: fn = {fn!r}: must be callable, fn(rank, *args)")
    if not isinstance(nprocs, (int, np.integer)) or isinstance(nprocs, (bool, np.bool_)) or nprocs < 1:
        raise ValueError(f"spawn: nprocs = {nprocs!r}: must be a positive integer")
    if isinstance(args, (str, bytes)) or not isinstance(args, (tuple, list)):
        raise TypeError(f"spawn: args = {args!r}: must be a tuple or list of fn's arguments after the rank")
    if join is not True:
        raise ValueError(f"spawn: join = {join!r}: tandem.iris.spawn returns when every rank has ended (join=True)")
    if (not isinstance(timeout_s, (int, float, np.integer, np.floating)) or isinstance(timeout_s, (bool, np.bool_))
            or not math.isfinite(timeout_s) or timeout_s <= 0):
        raise ValueError(f"spawn: timeout_s = {timeout_s!r}: must be a positive number of seconds")
    ranks = _trace_rank_list(trace_ranks, int(nprocs), trace is not None)  # before the directory is made
    try:  # the cluster up front: a bad nprocs, soc or profile is spawn's error, not every rank's
        context = Context(num_ranks=int(nprocs), soc=soc, profile=profile, functional=functional)
    except (ValueError, TypeError, RuntimeError) as e:
        raise type(e)(str(e).replace("Context: num_ranks", "spawn: nprocs").replace("Context: ", "spawn: ")) from None
    world = World(int(nprocs), context, float(timeout_s), _trace_directory(trace), ranks)
    caller_states = _random_states()
    results = [None] * world.nprocs
    errors = [None] * world.nprocs

    def main(rank):
        _local.world, _local.rank = world, rank
        why = "returned"
        try:
            world.enter(rank)
            results[rank] = fn(rank, *args)
            world.wait_pending(rank)
        except BaseException as e:  # reported by spawn, after every rank has ended
            errors[rank] = e
            why = f"raised {type(e).__name__}: {e}"
        finally:
            _local.world = None
            world.leave(rank, why)

    threads = [threading.Thread(target=main, args=(r,), name=f"iris-rank-{r}") for r in range(world.nprocs)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        _restore_random_states(caller_states)  # the ranks' draws leave the caller's random state as it was
    # A rank's own failure first: the others then only failed to meet it.
    failures = [e for e in errors if e is not None]
    for e in sorted(failures, key=lambda e: isinstance(e, RanksDidNotMeet)):
        raise e
    return results
