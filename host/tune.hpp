#pragma once
// `--tune`: for one shape, search the chunk size, the base tile and the block split, timing-only,
// and report the best configuration by pipelined time next to the default one.
//
// The search has two stages, so that it stays bounded (at most kMaxTuneConfigs runs):
//   A. every base tile of {64,128,256} x {128,256,512} that passes validate_run_config for the
//      shape and the profile's buffers, times every chunk size of {rule, 1,2,4,8,16,32,64} that
//      fits (1..tiles per source; "rule" is the published kernel's default, and a size equal
//      to the rule's is run once), at the default block split: <= 9 x 8 = 72 runs;
//   B. for the 3 best of A, every block split of compute {aic/2, 3*aic/4, aic} x comm
//      {aic/4, aic/2, aic, aiv} (plus the default's own counts): <= 3 x 20 = 60 more runs.
// The default configuration is the command line's (the seed's defaults for flags not given)
// and is always run first. Runs use the sweep's pool (SweepRunner) and output format.
// Ranking: pipelined time, ties broken by base_m, base_n, chunk tiles, compute blocks, comm
// blocks (ascending), so the result does not depend on the completion order.
#include <atomic>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/run_config.hpp"
#include "host/sweep.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

inline constexpr int kMaxTuneConfigs = 200;
inline constexpr int kTuneStageBTop = 3;  // stage A configurations refined in stage B

// The grid's values (before they are checked against the shape and the profile).
const std::vector<int>& tune_base_m_values();      // 64, 128, 256
const std::vector<int>& tune_base_n_values();      // 128, 256, 512
const std::vector<int>& tune_chunk_tile_values();  // 1, 2, 4, ..., 64

// Stage A: `ref` (validated, blocks resolved) first, then tile x chunk at ref's block split;
// only configurations that pass validate_run_config, each once.
std::vector<RunConfig> tune_stage_a(const RunConfig& ref, const Profile& profile);

// The block splits of stage B: (compute blocks, comm blocks), ascending, including ref's.
std::vector<std::pair<int, int>> tune_block_splits(const RunConfig& ref, const Profile& profile);

// Stage B: `base` at every split of tune_block_splits, except those `tried` already holds.
std::vector<RunConfig> tune_stage_b(const RunConfig& base, const RunConfig& ref, const Profile& profile,
                                    const std::vector<RunConfig>& tried);

// The tiles per chunk a config uses (its chunk_tiles, or the rule's value).
int effective_chunk_tiles(const RunConfig& cfg);

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
    double elapsed_s = 0;
};

// Runs the search for `ref` (validated, block counts resolved; forced timing-only).
TuneResult run_tune(const RunConfig& ref, const std::shared_ptr<const Profile>& profile, const SweepOptions& options);

// The printed report: default, best (with the flags that reproduce it), speedup, top 5.
std::string format_tune_report(const TuneResult& result, bool brief);

// `--tune` as the host program runs it (see run_sweep_command).
CommandOutcome run_tune_command(const RunConfig& cli, std::ostream& out, std::ostream& err,
                                const std::atomic<int>* interrupts, bool err_is_tty);

}  // namespace tandem::host
