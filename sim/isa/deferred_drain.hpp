#pragma once
// Completing a kernel's deferred writes when it ends (sim/isa/deferred_cube.hpp), on the
// cluster's worker pool (every host core).
//
// Accumulator stores whose chain is one product of GM regions (the K steps of an output tile,
// adjacent in GM) are batched: stores that stack into a larger product (the row blocks of an
// output column strip sharing B, then strips sharing A side by side) are computed as one
// sgemm per band of rows straight into GM, with B widened once per batch. That is the same
// arithmetic as the tiles' own products (each output element summed over the same K), done
// in the blocks an efficient GEMM would use. Every other write is completed on its own.
// Bands are cut by a fixed rule and each is computed by one thread, so the results do not
// depend on the number of threads.
#include <memory>
#include <vector>

#include "sim/exec/worker_pool.hpp"
#include "sim/mem/gm_deferred.hpp"

namespace tandem {

// Completes every write in `writes` (those already done are skipped) on `pool`. Throws SimError
// if one fails.
void complete_deferred_writes(const std::vector<std::shared_ptr<PendingGmWrite>>& writes, WorkerPool& pool);

}  // namespace tandem
