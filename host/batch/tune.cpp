// The --tune search: grid, stages, ranking, report. See tune.hpp.
#include "host/batch/tune.hpp"

#include <algorithm>
#include <ostream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "host/run/program.hpp"
#include "host/batch/profile_cache.hpp"
#include "host/batch/sweep_outputs.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "host/params/param_words.hpp"
#include "host/batch/sweep_peers.hpp"
#include "host/batch/sweep_wire.hpp"
#include "host/batch/tune_contract.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

// What tells two configurations of one shape apart, in tie-break order.
using TuneKey = std::tuple<std::string, std::string, int, int, std::vector<std::pair<std::string, int>>, int, int>;

TuneKey key_of(const ResolvedRun& c) {
    const RunRequest& r = c.request;
    const std::map<std::string, int> knobs = c.effective_knobs();
    return {r.variant, r.schedule, r.base_m, r.base_n, {knobs.begin(), knobs.end()}, r.compute_blocks.value_or(0),
            r.comm_blocks.value_or(0)};
}

// The configuration `r` resolved, or nothing when the facade refuses it.
std::optional<ResolvedRun> resolved(const RunRequest& r, const Profile& p) {
    try {
        return resolve_run(r, p);
    } catch (const tandem::SimError&) {
        return std::nullopt;
    }
}

void add_unique(std::vector<int>& v, int x) {
    const IntRange blocks = *param_desc(Param::ComputeBlocks).range;
    if (x >= blocks.lo && x <= blocks.hi && std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// ", chunk_tiles 4 (default)": the knobs as used, "(default)" where the variant's rule chose it.
std::string knobs_text(const ResolvedRun& c) {
    std::string out;
    for (const auto& [name, value] : c.effective_knobs()) {
        out += fmt::format(", {} {}{}", name, value, c.request.knobs.count(name) > 0 ? "" : " (default)");
    }
    return out;
}

std::string config_text(const ResolvedRun& c) {
    const RunRequest& r = c.request;
    const bool only_variant = c.op->variants.size() == 1;
    const std::string variant = only_variant ? std::string() : fmt::format("{} {}, ", r.variant, r.schedule);
    return fmt::format("{}tile {}x{}{}, blocks {}/{} (compute/comm)", variant, r.base_m, r.base_n, knobs_text(c),
                       r.compute_blocks.value_or(0), r.comm_blocks.value_or(0));
}

// The configurations of one variant and schedule at one tile: the default knobs, then each knob
// at each of its tune values (one knob at a time).
std::vector<RunRequest> knob_configs(const RunRequest& tile, const kernels::VariantDesc& v) {
    std::vector<RunRequest> out = {tile};
    for (const kernels::KnobDesc& k : v.knobs) {
        for (int value : k.tune_values) {
            RunRequest c = tile;
            c.knobs[k.name] = value;
            out.push_back(c);
        }
    }
    return out;
}

// The request that runs exactly as `c` without parameter `p` given: the schema's default, or
// unset where the run resolves it.
RunRequest without(const RunRequest& c, Param p) {
    RunRequest r = c;
    if (const std::optional<std::string> fallback = param_text(RunRequest{}, p)) {
        set_param(r, p, *fallback);
        return r;
    }
    unset_param(r, p);
    return r;
}

// Whether running `r` again needs parameter `p`'s flag: always for the shape, the tiles and the
// blocks (what a configuration is) and the dtypes (the contract the search kept: a reader adding
// --out-dtype to the line gets what was timed); for the others, when the run would resolve
// differently without it (another op's variant does not resolve on the default op).
bool needs_flag(const RunRequest& r, const ParamDesc& p, const Profile& profile) {
    if (p.type == ParamType::Int || p.id == Param::Dtype || p.id == Param::OutDtype) return true;
    try {
        return param_text(with_defaults(without(r, p.id), profile), p.id) != param_text(r, p.id);
    } catch (const tandem::SimError&) {
        return true;
    }
}

// The variants left out, those with the same reason on one line: "ascend, ascend_subtile: fp16 ...".
std::vector<std::string> left_out_lines(const std::vector<LeftOutVariant>& left_out) {
    std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
    for (const LeftOutVariant& v : left_out) {
        auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& e) { return e.first == v.reason; });
        if (it == by_reason.end()) by_reason.push_back({v.reason, {v.variant}});
        else it->second.push_back(v.variant);
    }
    std::vector<std::string> lines;
    for (const auto& [reason, variants] : by_reason) {
        lines.push_back(fmt::format("{}: {} (another problem than the default's, not compared)", fmt::join(variants, ", "),
                                    reason));
    }
    return lines;
}

}  // namespace

const std::vector<int>& tune_base_m_values() {
    static const std::vector<int> v = {64, 128, 256};
    return v;
}

const std::vector<int>& tune_base_n_values() {
    static const std::vector<int> v = {128, 256, 512};
    return v;
}

std::string reproduce_flags(const ResolvedRun& c, const Profile& profile) {
    const RunRequest& r = c.request;
    std::vector<std::string> flags;
    flags.push_back(r.profile_file.empty() ? "-v " + r.soc : "--profile " + r.profile_file);
    for (const ParamDesc& p : param_schema()) {
        if (p.scope != ParamScope::Run || p.cli_flag.empty() || p.id == Param::Soc || p.id == Param::ProfileFile) continue;
        const std::optional<std::string> value = param_text(r, p.id);
        if (!value) continue;
        const std::string flag = param_name_in(p.name, Dialect::Cli);
        if (p.type == ParamType::Flag) {
            if (*value == "true") flags.push_back(flag);
        } else if (needs_flag(r, p, profile)) {
            flags.push_back(fmt::format("{} {}", flag, *value));
        }
    }
    for (const auto& [name, value] : c.effective_knobs()) flags.push_back(fmt::format("{} {}", knob_flag(name), value));
    return fmt::format("{}", fmt::join(flags, " "));
}

std::vector<ResolvedRun> tune_stage_a(const ResolvedRun& ref, const Profile& profile, bool search_variants,
                                      bool search_schedules, std::vector<LeftOutVariant>* left_out) {
    std::vector<ResolvedRun> out = {ref};
    std::set<TuneKey> seen = {key_of(ref)};
    const RunRequest& rr = ref.request;
    const TuneContract contract = contract_of(ref);
    // The variants and schedules searched, ref's first; only variants that compute ref's contract.
    std::vector<RunRequest> bases = {rr};
    for (const kernels::VariantDesc& v : ref.op->variants) {
        if (!search_variants && v.name != rr.variant) continue;
        if (const std::string why = contract_difference(*ref.op, v, contract); !why.empty()) {
            if (left_out != nullptr) left_out->push_back({v.name, why});
            continue;
        }
        for (const std::string& schedule : v.schedules) {
            if (!search_schedules && v.name == rr.variant && schedule != rr.schedule) continue;
            if (!search_schedules && v.name != rr.variant && schedule != v.schedules.front()) continue;
            if (v.name == rr.variant && schedule == rr.schedule) continue;
            RunRequest b = rr;
            b.variant = v.name;
            b.schedule = schedule;
            b.knobs.clear();
            b.out_dtype = ref.params.out_dtype;  // the contract's, whatever the variant's default
            bases.push_back(b);
        }
    }
    for (const RunRequest& base : bases) {
        for (int bm : tune_base_m_values()) {
            for (int bn : tune_base_n_values()) {
                RunRequest tile = base;
                tile.base_m = bm;
                tile.base_n = bn;
                tile.knobs.clear();  // the default (rule) first; ref's own values are entry 0
                const std::optional<ResolvedRun> at_tile = resolved(tile, profile);
                if (!at_tile) continue;  // the shape or the buffers rule this tile out
                for (const RunRequest& c : knob_configs(tile, *at_tile->variant)) {
                    std::optional<ResolvedRun> run = resolved(c, profile);
                    if (run && seen.insert(key_of(*run)).second) out.push_back(std::move(*run));
                }
            }
        }
    }
    return out;
}

std::vector<std::pair<int, int>> tune_block_splits(const ResolvedRun& ref, const Profile& profile) {
    const int aic = profile.chip.aic_cores;
    const int aiv = profile.chip.aiv_cores;
    std::vector<int> compute;
    for (int v : {aic / 2, 3 * aic / 4, aic}) add_unique(compute, std::max(1, v));
    add_unique(compute, ref.request.compute_blocks.value_or(aic));
    std::vector<int> comm;
    if (ref.op->communicates()) {
        for (int v : {aic / 4, aic / 2, aic, aiv}) add_unique(comm, std::max(1, v));
        add_unique(comm, ref.request.comm_blocks.value_or(aiv));
    } else {
        comm = {0};  // no communication kernel: only the compute blocks vary
    }
    std::sort(compute.begin(), compute.end());
    std::sort(comm.begin(), comm.end());
    std::vector<std::pair<int, int>> splits;
    for (int c : compute) {
        for (int m : comm) splits.emplace_back(c, m);
    }
    return splits;
}

std::vector<ResolvedRun> tune_stage_b(const ResolvedRun& base, const ResolvedRun& ref, const Profile& profile,
                                      const std::vector<ResolvedRun>& tried) {
    std::set<TuneKey> seen;
    for (const ResolvedRun& c : tried) seen.insert(key_of(c));
    std::vector<ResolvedRun> out;
    for (const auto& [compute, comm] : tune_block_splits(ref, profile)) {
        RunRequest c = base.request;
        c.compute_blocks = compute;
        c.comm_blocks = comm;
        std::optional<ResolvedRun> run = resolved(c, profile);
        if (run && seen.insert(key_of(*run)).second) out.push_back(std::move(*run));
    }
    return out;
}

std::vector<std::size_t> rank_tune_entries(const std::vector<SweepEntry>& entries) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].has_results && entries[i].status == SweepStatus::Ok) idx.push_back(i);
    }
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        const double ta = entries[a].results.times.pipelined_us;
        const double tb = entries[b].results.times.pipelined_us;
        if (ta != tb) return ta < tb;
        return key_of(entries[a].job.run) < key_of(entries[b].job.run);
    });
    return idx;
}

namespace {

// Rank 0's ranking of stage A (its first kTuneStageBTop entries), or nullopt when it stops after
// stage A, as every process of a tune over MPI sees it. Collective: every process calls it.
std::optional<std::vector<std::size_t>> share_best_of_stage_a(SweepPeers& peers,
                                                              const std::optional<std::vector<std::size_t>>& mine) {
    std::string text;
    if (peers.rank() == 0) {
        text = mine ? "best" : "stop";
        for (std::size_t i = 0; mine && i < mine->size() && i < static_cast<std::size_t>(kTuneStageBTop); ++i) {
            text += fmt::format(" {}", (*mine)[i]);
        }
    }
    const std::string got = peers.broadcast(text);
    if (got.rfind("stop", 0) == 0) return std::nullopt;
    if (got.rfind("best", 0) != 0) throw tandem::SimError(fmt::format("--tune over MPI: rank 0 sent '{}'", got));
    std::vector<std::size_t> best;
    std::istringstream in(got.substr(4));
    for (std::size_t i = 0; in >> i;) best.push_back(i);
    return best;
}

}  // namespace

TuneResult run_tune(const ResolvedRun& ref_in, const std::shared_ptr<const Profile>& profile, const SweepOptions& options,
                    bool search_variants, bool search_schedules) {
    ResolvedRun ref = ref_in;
    if (!ref.request.timing_only) {  // tuning compares times only
        RunRequest timing = ref.request;
        timing.timing_only = true;
        ref = resolve_run(timing, *profile);
    }
    TuneResult result;
    std::vector<ResolvedRun> stage_a = tune_stage_a(ref, *profile, search_variants, search_schedules, &result.left_out);
    const int splits = static_cast<int>(tune_block_splits(ref, *profile).size());

    // Many variants: keep each variant's default tile and knobs so that stage B still fits.
    const int stage_b_max = kTuneStageBTop * (splits - 1);
    if (static_cast<int>(stage_a.size()) + stage_b_max > kMaxTuneConfigs) {
        std::vector<ResolvedRun> reduced;
        for (const ResolvedRun& c : stage_a) {
            const bool default_tile = c.request.base_m == ref.request.base_m && c.request.base_n == ref.request.base_n;
            if (reduced.empty() || default_tile) reduced.push_back(c);
        }
        if (static_cast<int>(reduced.size()) + stage_b_max > kMaxTuneConfigs)
            reduced.resize(static_cast<std::size_t>(std::max(1, kMaxTuneConfigs - stage_b_max)));
        stage_a = std::move(reduced);
        result.grid_reduced = true;
    }
    result.tiles_in_grid = static_cast<int>(tune_base_m_values().size() * tune_base_n_values().size());
    std::set<std::pair<int, int>> tiles;
    for (std::size_t i = 1; i < stage_a.size(); ++i) tiles.insert({stage_a[i].request.base_m, stage_a[i].request.base_n});
    result.tiles_tried = static_cast<int>(tiles.size());

    int number = 0;
    auto jobs_of = [&](const std::vector<ResolvedRun>& configs) {
        std::vector<SweepJob> jobs;
        for (const ResolvedRun& c : configs) {
            SweepJob j;
            j.line = ++number;
            j.origin = fmt::format("tune config {} ({})", j.line, config_text(c));
            j.run = c;
            j.profile = profile;
            jobs.push_back(std::move(j));
        }
        return jobs;
    };

    SweepPeers* const peers = options.peers != nullptr && options.peers->size() > 1 ? options.peers : nullptr;
    std::vector<SweepJob> stage_a_jobs = jobs_of(stage_a);
    if (peers != nullptr) {
        // Every process plans the search from the same command line; a difference (a profile
        // that differs between hosts) would hand out rows by index into different lists.
        std::string mine;
        for (const SweepJob& j : stage_a_jobs) mine += j.origin + '\n';
        if (peers->broadcast(mine) != mine) {
            throw tandem::SimError("--tune over MPI: the search plans differently here than on rank 0 (a profile that "
                                   "differs between hosts?)");
        }
    }
    SweepRunner runner(options);
    const int top = std::min<int>(kTuneStageBTop, static_cast<int>(stage_a.size()));
    runner.set_expected_total(static_cast<int>(stage_a.size()) + top * (splits - 1));
    runner.run(std::move(stage_a_jobs));

    // Stage B refines the best of stage A. Over MPI only rank 0 holds every result of stage A:
    // it tells the others which entries won (or that the search stops), so that every process
    // plans the same stage B. An abandoned stage A ends the job (the caller exits at once).
    std::optional<std::vector<std::size_t>> best_of_a;
    if (!runner.interrupted()) best_of_a = rank_tune_entries(runner.entries());
    if (peers != nullptr && runner.abandoned() == 0) best_of_a = share_best_of_stage_a(*peers, best_of_a);

    if (best_of_a) {
        const std::vector<SweepEntry> after_a = runner.entries();
        const std::vector<std::size_t>& ranked = *best_of_a;
        std::vector<ResolvedRun> tried = stage_a;
        std::vector<ResolvedRun> stage_b;
        for (std::size_t r = 0; r < ranked.size() && r < static_cast<std::size_t>(kTuneStageBTop); ++r) {
            if (ranked[r] >= after_a.size()) {
                throw tandem::SimError(fmt::format("--tune over MPI: rank 0 named configuration {} of {}", ranked[r],
                                                   after_a.size()));
            }
            std::vector<ResolvedRun> more = tune_stage_b(after_a[ranked[r]].job.run, ref, *profile, tried);
            tried.insert(tried.end(), more.begin(), more.end());
            stage_b.insert(stage_b.end(), more.begin(), more.end());
        }
        if (static_cast<int>(tried.size()) > kMaxTuneConfigs) {  // the grid above keeps well below it
            throw tandem::SimError(fmt::format("--tune: {} configurations, above the bound of {}", tried.size(),
                                               kMaxTuneConfigs));
        }
        runner.set_expected_total(static_cast<int>(tried.size()));
        runner.run(jobs_of(stage_b));
    }
    runner.finish_progress();
    if (peers != nullptr) result.rows_by_process = runner.rows_per_process();
    result.entries = runner.entries();
    result.ranking = rank_tune_entries(result.entries);
    result.interrupted = runner.interrupted();
    result.abandoned = runner.abandoned();
    result.failed = runner.failed();
    result.elapsed_s = runner.elapsed_seconds();
    return result;
}

std::string format_tune_report(const TuneResult& r, bool brief) {
    std::string out;
    if (r.entries.empty()) return out;
    const SweepEntry& ref = r.entries[r.reference];
    const ResolvedRun& rc = ref.job.run;
    const RunRequest& rr = rc.request;
    const int ran = static_cast<int>(r.ranking.size());
    if (!brief) {
        out += fmt::format("[INFO] Tune: {}{} ranks x {}, M={} K={} N={}, comm mode {}, timing-only: {} configurations "
                           "run in {:.1f} s ({} of the {} base tiles fit the shape and the buffers)\n",
                           rr.op == default_op_name() ? std::string() : rr.op + ", ", rr.ranks, ref.job.profile->name,
                           rr.m, rr.k, rr.n, rr.comm_mode, ran, r.elapsed_s, r.tiles_tried,
                           r.tiles_in_grid);
        if (r.grid_reduced) {
            out += fmt::format("[INFO] The full grid passes the bound of {} runs: each variant was tried at the default "
                               "tile only\n",
                               kMaxTuneConfigs);
        }
    }
    auto line = [&out](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<10}{}\n", fmt::format("{}:", label), value);
    };
    for (const std::string& text : left_out_lines(r.left_out)) line("Left out", text);
    if (!ref.has_results) {
        line("Default", fmt::format("{}: did not run{}", config_text(rc), ref.error.empty() ? "" : " (" + ref.error + ")"));
    } else {
        line("Default", fmt::format("{}: pipelined {:.3f} us", config_text(rc), ref.results.times.pipelined_us));
    }
    if (r.ranking.empty()) return out;
    const SweepEntry& best = r.entries[r.ranking.front()];
    line(r.interrupted ? "Best yet" : "Best", fmt::format("{}: pipelined {:.3f} us (config {})", config_text(best.job.run),
                             best.results.times.pipelined_us, best.job.line));
    if (ref.has_results) {
        const double t0 = ref.results.times.pipelined_us;
        const double t1 = best.results.times.pipelined_us;
        line("Speedup", fmt::format("{:.3f}x vs the default (saves {:.3f} us, {:.1f}%)", t1 > 0 ? t0 / t1 : 0.0, t0 - t1,
                                    t0 > 0 ? (t0 - t1) / t0 * 100.0 : 0.0));
    }
    line("Run it", reproduce_flags(best.job.run, *best.job.profile));
    if (brief) return out;
    out += "  Top 5:\n";
    out += fmt::format("  {:>4} {:>6} {:>14} {:>8} {:>9} {:>6} {:>6} {:>7} {:>5}  {}\n", "rank", "config",
                       "pipelined us", "TFLOPS", "overlap %", "base_m", "base_n", "compute", "comm", "variant, knobs");
    for (std::size_t i = 0; i < r.ranking.size() && i < 5; ++i) {
        const SweepEntry& e = r.entries[r.ranking[i]];
        const RunMetrics m = compute_metrics(e.results.id, e.results.times);
        const RunRequest& c = e.job.run.request;
        std::string knobs = fmt::format("{} {}", c.variant, c.schedule);
        for (const auto& [name, value] : e.job.run.effective_knobs()) knobs += fmt::format(", {}={}", name, value);
        out += fmt::format("  {:>4} {:>6} {:>14.3f} {:>8.2f} {:>9.1f} {:>6} {:>6} {:>7} {:>5}  {}{}\n", i + 1,
                           e.job.line, e.results.times.pipelined_us, m.tflops_per_rank, m.overlap_eff_pct,
                           c.base_m, c.base_n, c.compute_blocks.value_or(0), c.comm_blocks.value_or(0), knobs, r.ranking[i] == r.reference ? "  (default)" : "");
    }
    return out;
}

namespace {

struct TuneSetup {
    ResolvedRun ref;
    std::shared_ptr<const Profile> profile;
};

// The default configuration (the command line's, timing-only): it must be valid itself.
TuneSetup set_up_tune(const RunRequest& request, ProfileCache& profiles) {
    RunRequest ref = request;
    ref.timing_only = true;  // tuning compares times only
    TuneSetup t;
    t.profile = profiles.of(ref);
    t.ref = resolve_run(ref, *t.profile);
    return t;
}

// Another rank of a tune over MPI: run the configurations rank 0 hands out, print nothing.
CommandOutcome run_tune_for_rank0(const RunRequest& request, const BatchOptions& batch, std::ostream& err,
                                  SweepPeers& peers) {
    if (!decode_sweep_start(peers.broadcast(std::string())).ok) return CommandOutcome{2, false};  // rank 0 says why
    try {
        ProfileCache profiles;
        const TuneSetup t = set_up_tune(request, profiles);
        SweepOptions opt;
        opt.jobs = effective_jobs(batch.jobs);
        opt.label = "tune";
        opt.peers = &peers;
        run_tune(t.ref, t.profile, opt, request.variant.empty(), request.schedule.empty());
    } catch (const std::exception& e) {
        err << fmt::format("[ERROR] tune over MPI, rank {} of {}: {}\n", peers.rank(), peers.size(), e.what());
        err.flush();
        peers.abort(2);
    }
    return CommandOutcome{};
}

}  // namespace

CommandOutcome run_tune_command(const RunRequest& request, const BatchOptions& batch, std::ostream& out,
                                std::ostream& err, const std::atomic<int>* interrupts, bool err_is_tty,
                                SweepPeers* peers) {
    if (peers != nullptr && peers->size() <= 1) peers = nullptr;
    if (peers != nullptr && peers->rank() != 0) return run_tune_for_rank0(request, batch, err, *peers);
    ProfileCache profiles;
    TuneSetup t;
    const std::string prefix = batch.out_prefix.empty() ? std::string("out/tune") : batch.out_prefix;
    try {
        t = set_up_tune(request, profiles);
        // Over MPI, everything that can refuse the search happens before the others start.
        if (peers != nullptr) prepare_sweep_out(prefix);
    } catch (...) {
        if (peers != nullptr) peers->broadcast(encode_sweep_start(SweepStart{}));  // the others end quietly
        throw;
    }
    if (peers != nullptr) peers->broadcast(encode_sweep_start(SweepStart{true, {}, {}}));
    SweepOptions options = sweep_options_for(batch, prefix, "tune", err, interrupts, err_is_tty);
    options.peers = peers;
    TuneResult r;
    try {
        r = run_tune(t.ref, t.profile, options, request.variant.empty(), request.schedule.empty());
    } catch (const std::exception& e) {
        if (peers == nullptr) throw;
        // The other ranks wait for configurations: end the job rather than leave them waiting.
        err << fmt::format("[ERROR] tune over MPI, rank 0 of {}: {}\n", peers->size(), e.what());
        err.flush();
        peers->abort(2);
    }

    out << format_tune_report(r, batch.quiet);
    if (!r.rows_by_process.empty()) {
        out << fmt::format("  {:<10}{} MPI processes (configurations by rank: {})\n", "Over:", r.rows_by_process.size(),
                           fmt::join(r.rows_by_process, " "));
    }
    out << fmt::format("  {:<10}{}.csv, {}.json (every configuration tried)\n", "Results:", prefix, prefix);
    CommandOutcome outcome;
    if (r.interrupted) {
        err << fmt::format("tune: interrupted: {} configurations saved in {}.csv and {}.json{}\n", r.ranking.size(),
                           prefix, prefix,
                           r.abandoned > 0 ? fmt::format(" ({} running abandoned)", r.abandoned) : std::string());
        outcome.exit_code = 130;
        outcome.abandoned_runs = r.abandoned > 0;
        return outcome;
    }
    outcome.exit_code = r.failed == 0 && !r.ranking.empty() ? 0 : 1;
    return outcome;
}

}  // namespace tandem::host
