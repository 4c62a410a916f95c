"""IrisWorkspace: what an op call returns on every rank (Iris's FusedWorkspace), sync or async."""
from __future__ import annotations

from tandem import _core


class IrisWorkspace:
    """An op call's workspace on one rank (Iris's FusedWorkspace): the call's identity at once
    (operation, shape (M, N, K), dtype, world_size, variant) and, once the call has completed (an
    async call: after ctx.barrier()), its simulated times in `results` and its trace file in
    `trace`. Pass it back to a later call (workspace=ws): a matching call reuses it, as Iris
    reuses a matching workspace, and a call of another op, shape, dtype or variant gets a new one,
    as Iris re-allocates one."""

    def __init__(self, operation, shape, dtype, world_size, variant, ignored):
        self.operation = operation
        self.shape = shape            # (M, N, K) of the whole product, as Iris's workspace holds it
        self.dtype = dtype            # A's dtype, as its framework writes it (numpy's or torch's)
        self.world_size = world_size
        self.variant = variant
        self.ignored = ignored        # FusedConfig fields set that have no Ascend counterpart
        self.prepared = True
        self._call = None             # the latest call made with it (tandem.iris._world.Call)

    def matches(self, operation, shape, dtype, world_size, variant) -> bool:
        return (operation, tuple(shape), dtype, world_size, variant) == (
            self.operation, tuple(self.shape), self.dtype, self.world_size, self.variant)

    @property
    def complete(self) -> bool:
        return self._call is not None and self._call.done

    def _outcome(self, what):
        call = self._call
        if call is None:
            return None
        if not call.done:
            raise RuntimeError(f"tandem.iris: IrisWorkspace.{what}: the async {self.operation} has not completed: call "
                               "ctx.barrier() first")
        if call.error is not None:
            raise _core.Error(call.error)
        return call.result

    @property
    def results(self) -> dict:
        """The latest call's simulated times (tandem's results: pipelined_us, per_rank_us, and
        beside them the unfused baseline's sequential_us = seq_comm_us + seq_compute_us, and
        compute_only_us, the GEMM alone); raises while an async call is pending."""
        outcome = self._outcome("results")
        return {} if outcome is None else outcome.results

    @property
    def trace(self):
        """The trace file the latest call wrote (spawn(trace=dir)), else None."""
        outcome = self._outcome("trace")
        return None if outcome is None else outcome.trace

    def __repr__(self):
        return (f"tandem.iris.IrisWorkspace(operation={self.operation!r}, shape={self.shape}, dtype={self.dtype}, "
                f"world_size={self.world_size}, variant={self.variant!r})")


FusedWorkspace = IrisWorkspace  # Iris's name
