#pragma once
// `--tune`: for one shape of one op, search the variant and schedule (when not given on the
// command line), the base tile, the variant's knobs (chunk size, ...) and the block split,
// timing-only, and report the best configuration by pipelined time next to the default one.
//
// The search has two stages, so that it stays bounded (at most kMaxTuneConfigs runs):
//   A. for each variant and schedule searched, every base tile of {64,128,256} x {128,256,512}
//      that the ops facade accepts for the shape and the profile's buffers, at the default
//      knobs and then with each knob at each of its tune values (one knob at a time; a value
//      equal to the default's is run once), at the default block split. For AllGather+GEMM:
//      every chunk size of {rule, 1,2,4,8,16,32,64} that fits: <= 9 x 8 = 72 runs;
//   B. for the 3 best of A, every block split of compute {aic/2, 3*aic/4, aic} x comm
//      {aic/4, aic/2, aic, aiv} (plus the default's own counts): <= 3 x 20 = 60 more runs. An op
//      without communication (gemm) has no comm kernel: only its compute blocks vary.
// When stage A alone would pass the bound (many variants), each variant keeps the default tile
// and its knobs; the report says so. The default configuration is the command line's (the
// defaults for flags not given) and is always run first. Runs use the sweep's pool
// (SweepRunner) and output format. Ranking: pipelined time, ties broken by variant, schedule,
// base_m, base_n, knobs, compute blocks, comm blocks (ascending), so the result does not
// depend on the completion order.
#include <atomic>
#include <cstddef>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/batch/batch_options.hpp"
#include "host/batch/sweep_command.hpp"
#include "host/batch/sweep_entry.hpp"
#include "host/batch/sweep_runner.hpp"
#include "host/batch/tune_contract.hpp"
#include "host/ops/op_facade.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

inline constexpr int kMaxTuneConfigs = 200;
inline constexpr int kTuneStageBTop = 3;  // stage A configurations refined in stage B

// The grid's values (before they are checked against the shape and the profile).
const std::vector<int>& tune_base_m_values();      // 64, 128, 256
const std::vector<int>& tune_base_n_values();      // 128, 256, 512

// Stage A: `ref` first, then (variant x schedule when searched) x tile x knob values at ref's
// block split; only configurations the ops facade accepts, each once, and only variants that
// compute ref's contract (tune_contract.hpp: its inputs, output dtype, bias and what each rank
// ends with); the others go to `left_out` with the reason.
std::vector<ResolvedRun> tune_stage_a(const ResolvedRun& ref, const Profile& profile, bool search_variants = false,
                                      bool search_schedules = false, std::vector<LeftOutVariant>* left_out = nullptr);

// The block splits of stage B: (compute blocks, comm blocks), ascending, including ref's.
std::vector<std::pair<int, int>> tune_block_splits(const ResolvedRun& ref, const Profile& profile);

// Stage B: `base` at every split of tune_block_splits, except those `tried` already holds.
std::vector<ResolvedRun> tune_stage_b(const ResolvedRun& base, const ResolvedRun& ref, const Profile& profile,
                                      const std::vector<ResolvedRun>& tried);

// The command-line flags that run `c` again: every parameter whose value is not what the run
// would get without its flag (the shape, tiles and blocks always), then the knobs as used.
std::string reproduce_flags(const ResolvedRun& c, const Profile& profile);

// Indices of the entries with results (status Ok), best first.
std::vector<std::size_t> rank_tune_entries(const std::vector<SweepEntry>& entries);

struct TuneResult {
    std::vector<SweepEntry> entries;   // every configuration, in run order (sweep_line = its number)
    std::vector<std::size_t> ranking;  // entries that ran, best first
    std::size_t reference = 0;         // the default configuration (entries[0])
    bool interrupted = false;
    int abandoned = 0;
    int failed = 0;
    int tiles_tried = 0;               // base tiles of the grid that fit the shape and the buffers
    int tiles_in_grid = 0;
    bool grid_reduced = false;         // stage A kept each variant's default tile (the bound)
    std::vector<LeftOutVariant> left_out;  // variants that compute another contract, not searched
    double elapsed_s = 0;
    std::vector<int> rows_by_process;  // over MPI (rank 0): configurations run, by rank; else empty
};

// Runs the search for `ref` (a timing-only run: tuning compares times only). With
// options.peers of more than one process, every process calls it with the same arguments.
TuneResult run_tune(const ResolvedRun& ref, const std::shared_ptr<const Profile>& profile, const SweepOptions& options,
                    bool search_variants = false, bool search_schedules = false);

// The printed report: default, best (with the flags that reproduce it), speedup, top 5.
std::string format_tune_report(const TuneResult& result, bool brief);

// `--tune` as the host program runs it (see run_sweep_command). With `peers` of more than one
// process (mpirun), the configurations of each stage are spread over them as a sweep's rows are:
// rank 0 prints the report and writes the files, which are byte-identical to one process's;
// between the stages it tells the others which configurations stage B refines.
// `request` is the command line's run (the shape searched; its variant and schedule are searched
// when not given); `batch` the command's options (--sweep-out, --jobs, quiet).
CommandOutcome run_tune_command(const RunRequest& request, const BatchOptions& batch, std::ostream& out,
                                std::ostream& err, const std::atomic<int>* interrupts, bool err_is_tty,
                                SweepPeers* peers = nullptr);

}  // namespace tandem::host
