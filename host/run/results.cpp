// Metrics, results JSON and the printed summary of one run. See results.hpp; the formulas are
// docs/RESULTS.md's "Metrics", the keys of its "The results JSON".
#include "host/run/results.hpp"

#include <algorithm>
#include <cstddef>
#include <span>

#include <fmt/format.h>

#include "host/io/atomic_file.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "kernels/op_desc.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kUsPerS = 1e6;

// a / b, or 0 when b is not positive (a view that took no time has no rate).
double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

std::string time_text(double us) { return fmt::format("{:.3f} us ({:.3f} ms)", us, us / 1000.0); }

// The pipelined view's launches in the results' `kernels` array (host/run/kernel_figures.hpp).
std::vector<const nlohmann::json*> pipelined_kernels(const RunResults& r) {
    std::vector<const nlohmann::json*> out;
    if (!r.extras.is_object() || !r.extras.contains("kernels")) return out;
    for (const nlohmann::json& k : r.extras.at("kernels"))
        if (k.value("view", "") == kernels::view_name(kernels::ViewKind::Pipelined)) out.push_back(&k);
    return out;
}

// What a reader of msprof's op summary knows each pipe by.
const char* pipe_label(const std::string& core, const std::string& pipe) {
    if (pipe == "cube") return "cube (TMATMUL)";
    if (pipe == "mte1") return "MTE1 (TEXTRACT)";
    if (pipe == "mte2") return "MTE2 (TLOAD)";
    if (pipe == "fixp") return "FIXP (TSTORE)";
    if (pipe == "mte3") return "MTE3 (TSTORE)";
    if (pipe == "vector") return "vector";
    if (pipe == "scalar") return core == "aic" ? "scalar (AIC)" : "scalar (AIV)";
    return "?";
}

// "  Pipe utilisation (AIC):  ..." then one line per pipe: mean [min, max] over the cores.
void pipe_ratio_lines(std::string& out, const nlohmann::json& k) {
    const nlohmann::json& ratios = k.at("pipe_ratio");
    for (const char* core : {"aic", "aiv"}) {
        if (!ratios.contains(core)) continue;
        const char* type = std::string_view(core) == "aic" ? "AIC" : "AIV";
        out += fmt::format("  {:<29}busy / kernel time on each of the {} {} cores that ran it: mean [min, max]\n",
                           fmt::format("Pipe utilisation ({}):", type), k.at("cores").at(core).get<int>(), type);
        // In msprof's order (the object's keys are sorted).
        for (const char* pipe : {"cube", "mte1", "mte2", "fixp", "vector", "mte3", "scalar"}) {
            if (!ratios.at(core).contains(pipe)) continue;
            const nlohmann::json& r = ratios.at(core).at(pipe);
            out += fmt::format("    {:<27}{:5.1f}% [{:.1f}, {:.1f}]\n", pipe_label(core, pipe), 100 * r.at("mean").get<double>(),
                               100 * r.at("min").get<double>(), 100 * r.at("max").get<double>());
        }
    }
}

}  // namespace

RunIdentity make_identity(const ResolvedRun& run) {
    RunIdentity id;
    id.run = run.request;
    id.run.op_desc = nullptr;  // the results outlive an API user's op
    id.title = run.op->title;
    id.comm_kind = run.op->comm_kind;
    id.comm_payload_bytes = run.op->comm_payload_bytes(run.params);
    id.seed_format = run.op->seed_format;
    return id;
}

const char* verification_name(Verification v) {
    switch (v) {
        case Verification::Passed: return "passed";
        case Verification::Failed: return "failed";
        case Verification::Skipped: return "skipped";
    }
    return "skipped";
}

RunMetrics compute_metrics(const RunIdentity& id, const ViewTimes& t) {
    RunMetrics r;
    r.sequential_us = t.seq_comm_us + t.seq_compute_us;
    r.speedup = ratio(r.sequential_us, t.pipelined_us);
    r.time_saved_us = r.sequential_us - t.pipelined_us;
    r.time_saved_pct = ratio(r.time_saved_us, r.sequential_us) * 100.0;
    // Overlap efficiency: the share of the shorter phase hidden behind the longer one. With one
    // phase taking no time there is nothing to overlap: defined as 0.
    const double shorter = std::min(t.seq_comm_us, t.seq_compute_us);
    r.overlap_eff_pct = shorter > 0 ? std::max(0.0, r.time_saved_us / shorter * 100.0) : 0.0;
    r.exposed_comm_us = t.pipelined_us - t.compute_only_us;
    r.ideal_bound_us = std::max(t.seq_comm_us, t.compute_only_us);
    r.flops = 2.0 * id.run.m * id.run.k * id.run.n;
    r.comm_payload_bytes = id.comm_payload_bytes;
    // flops / (us * 1e-6) / 1e12 = flops / us / 1e6
    r.tflops_per_rank = ratio(r.flops, t.pipelined_us) / kUsPerS;
    r.tflops_compute_only = ratio(r.flops, t.compute_only_us) / kUsPerS;
    r.tflops_sequential = ratio(r.flops, r.sequential_us) / kUsPerS;
    const double bytes_per_s = ratio(r.comm_payload_bytes, t.pipelined_us) * kUsPerS;
    r.comm_payload_gib_s = bytes_per_s / kGiB;
    r.comm_payload_gb_s = bytes_per_s / kGB;
    r.seq_comm_gib_s = ratio(r.comm_payload_bytes, t.seq_comm_us) * kUsPerS / kGiB;
    return r;
}

const std::vector<std::string>& contract_keys() {
    static const std::vector<std::string> keys = {
        "soc",           "ranks",          "m",           "k",          "n",
        "base_m",        "base_n",         "compute_blocks", "comm_blocks", "comm_mode",
        "data_mode",     "compute_only_us", "seq_comm_us",  "seq_compute_us", "sequential_us",
        "pipelined_us",  "speedup",        "overlap_eff_pct", "exposed_comm_us", "tflops_per_rank",
        "allgather_gib_s", "verification"};
    return keys;
}

const std::vector<std::string>& result_figure_keys() {
    static const std::vector<std::string> keys = {
        "compute_only_us", "seq_comm_us",       "seq_compute_us",     "sequential_us",    "pipelined_us",
        "speedup",         "overlap_eff_pct",   "exposed_comm_us",    "tflops_per_rank",  "allgather_gib_s",
        "verification",    "time_saved_us",     "time_saved_pct",     "ideal_bound_us",   "flops",
        "allgather_bytes", "allgather_gb_s",    "seq_comm_gib_s",     "tflops_compute_only", "tflops_sequential",
        "tflops_pipelined", "comm_payload_bytes", "comm_payload_gib_s", "comm_payload_gb_s", "comm_kind"};
    return keys;
}

nlohmann::json to_json(const RunResults& r) {
    const RunIdentity& id = r.id;
    const ViewTimes& t = r.times;
    const RunMetrics m = compute_metrics(id, t);
    nlohmann::json j = {
        // the contract's figures (its identity keys are the run's parameters, below)
        {"compute_only_us", t.compute_only_us},
        {"seq_comm_us", t.seq_comm_us},
        {"seq_compute_us", t.seq_compute_us},
        {"sequential_us", m.sequential_us},
        {"pipelined_us", t.pipelined_us},
        {"speedup", m.speedup},
        {"overlap_eff_pct", m.overlap_eff_pct},
        {"exposed_comm_us", m.exposed_comm_us},
        {"tflops_per_rank", m.tflops_per_rank},
        {"allgather_gib_s", m.comm_payload_gib_s},  // the seed's name of comm_payload_gib_s
        {"verification", verification_name(r.verification)},
        // extras
        {"time_saved_us", m.time_saved_us},
        {"time_saved_pct", m.time_saved_pct},
        {"ideal_bound_us", m.ideal_bound_us},
        {"flops", m.flops},
        {"allgather_bytes", m.comm_payload_bytes},  // the seed's names of comm_payload_bytes, _gb_s
        {"allgather_gb_s", m.comm_payload_gb_s},
        {"comm_payload_bytes", m.comm_payload_bytes},
        {"comm_payload_gib_s", m.comm_payload_gib_s},
        {"comm_payload_gb_s", m.comm_payload_gb_s},
        {"seq_comm_gib_s", m.seq_comm_gib_s},
        {"tflops_compute_only", m.tflops_compute_only},
        {"tflops_sequential", m.tflops_sequential},
        {"tflops_pipelined", m.tflops_per_rank},
        {"comm_kind", id.comm_kind},
    };
    // The run's parameters under their schema keys: the contract's soc ... data_mode, the op's
    // identity op ... bias (docs/RESULTS.md "The results JSON").
    for (const ParamDesc& p : param_schema()) {
        if (p.scope == ParamScope::Run && !p.json_key.empty()) j[p.json_key] = param_json(id.run, p.id);
    }
    if (!r.extras.is_null()) {
        if (!r.extras.is_object()) throw tandem::SimError("results extras must be a JSON object");
        for (const auto& [key, value] : r.extras.items()) {
            if (j.contains(key)) throw tandem::SimError(fmt::format("results extra key '{}' clashes with a built-in key", key));
            j[key] = value;
        }
    }
    return j;
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) {
    const std::string text = j.dump(2) + "\n";
    write_file_atomic(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

std::string format_summary(const RunResults& r) {
    const RunIdentity& id = r.id;
    const RunRequest& run = id.run;
    const ViewTimes& t = r.times;
    const RunMetrics m = compute_metrics(id, t);
    const bool failed = r.verification == Verification::Failed;
    // An op that keeps the seed's format (OpDesc::seed_format) prints the seed's lines only.
    const bool seed = id.seed_format.has_value();
    std::string mode = data_mode_name(run.timing_only);
    // Warm-ups are not views: only how many ran before each (RunRequest::warmup_runs).
    if (run.warmup_runs > 0) mode += fmt::format(", {} warm-up run{} before each view", run.warmup_runs, run.warmup_runs == 1 ? "" : "s");
    if (r.verification != Verification::Skipped) {
        mode += fmt::format(", verification {}", failed ? "FAILED" : "passed");
    }
    const std::string what = seed ? id.title : fmt::format("{} {}", run.op, run.variant);
    std::string out = fmt::format("{} {} (Tandem sim, {}, {} ranks, {})\n", failed ? "[FAILED]" : "[SUCCESS]", what,
                                  run.soc, run.ranks, mode);
    auto line = [&out](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<29}{}\n", fmt::format("{}:", label), value);
    };
    const std::string op_line = fmt::format("{} variant {}, schedule {}, {} in, {} out, bias {}", run.op, run.variant,
                                            run.schedule, dtype_name(run.dtype),
                                            dtype_name(run.out_dtype.value_or(DType::F32)), kernels::bias_name(run.bias));
    if (id.comm_kind == kernels::kNoComm) {
        // No communication: the three views time the same kernel; overlap figures mean nothing.
        line("Shape", fmt::format("M={} K={} N={}, tile {}x{}, {} compute blocks, no communication", run.m, run.k,
                                  run.n, run.base_m, run.base_n, run.compute_blocks.value_or(0)));
        for (const nlohmann::json* k : pipelined_kernels(r)) {
            const double us = k->at("kernel_us").get<double>();
            line("Kernel (device)", fmt::format("{} {}, {:.2f} TFLOPS (the task duration as the profiler counts it, rank {})",
                                                k->at("kernel").get<std::string>(), time_text(us),
                                                us > 0 ? m.flops / us / 1e6 : 0.0, k->at("rank").get<int>()));
            pipe_ratio_lines(out, *k);
        }
        line("Host-timed view", fmt::format("{}, {:.2f} TFLOPS (launch, kernel and synchronize on the host's clock)",
                                            time_text(t.compute_only_us), m.tflops_compute_only));
        line("Views", fmt::format("no communication: sequential and pipelined are the kernel alone ({:.3f} and {:.3f} us)",
                                  m.sequential_us, t.pipelined_us));
        line("Op", op_line);
        return out;
    }
    line("Shape", fmt::format("M={} K={} N={}, tile {}x{}, {} compute + {} comm blocks, {}", run.m, run.k, run.n,
                              run.base_m, run.base_n, run.compute_blocks.value_or(0), run.comm_blocks.value_or(0),
                              run.comm_mode));
    line("Compute-only", time_text(t.compute_only_us));
    line("Sequential (comm + compute)", fmt::format("{} = {:.3f} + {:.3f} us", time_text(m.sequential_us),
                                                    t.seq_comm_us, t.seq_compute_us));
    line("Pipelined", time_text(t.pipelined_us));
    // Device time of each launch of the pipelined view.
    if (!seed) {
        std::vector<std::string> parts;
        int rank = 0;
        for (const nlohmann::json* k : pipelined_kernels(r)) {
            parts.push_back(fmt::format("{} {:.3f} us", k->at("kernel").get<std::string>(), k->at("kernel_us").get<double>()));
            rank = k->at("rank").get<int>();
        }
        if (!parts.empty()) {
            line("Kernels (device)", fmt::format("{} (pipelined view, rank {}, task durations as the profiler counts them)",
                                                 fmt::join(parts, ", "), rank));
        }
        // The stages, when the op names them (docs/RESULTS.md "Stages"): each one's extent and
        // the one whose busiest pipe was busiest on its blocks.
        if (r.extras.is_object() && r.extras.contains("pipelined_stages")) {
            const nlohmann::json& st = r.extras.at("pipelined_stages");
            std::vector<std::string> spans;
            const nlohmann::json* bound = nullptr;
            for (const nlohmann::json& s : st.at("stages")) {
                spans.push_back(fmt::format("{} {:.1f}", s.at("stage").get<std::string>(), s.at("span_us").get<double>()));
                if (s.at("stage") == st.at("bounding_stage")) bound = &s;
            }
            line("Stages (device)", fmt::format("{} us, first to last instruction (pipelined view, rank {})",
                                                fmt::join(spans, ", "), rank));
            if (bound != nullptr) {
                line("Bounding stage", fmt::format("{}: {} busy {:.1f}% of the view, averaged over its {} blocks (the busiest stage)",
                                                   bound->at("stage").get<std::string>(), bound->at("busiest_pipe").get<std::string>(),
                                                   bound->at("busiest_pipe_pct").get<double>(), bound->at("blocks").get<int>()));
            }
        }
    }
    line("Speedup", fmt::format("{:.3f}x (sequential / pipelined)", m.speedup));
    line("Time saved", fmt::format("{}, {:.1f}% of sequential", time_text(m.time_saved_us), m.time_saved_pct));
    // Past 100% the variant saved more than all of min(comm, compute): its own communication
    // costs less than the baseline's collective kernel (docs/RESULTS.md), which reads as an error
    // unless said.
    line("Overlap eff", fmt::format("{:.1f}% (of min(comm, compute) hidden{})", m.overlap_eff_pct,
                                    m.overlap_eff_pct > 100.0 ? "; over 100%: the variant's comm costs less than "
                                                                "the sequential baseline's collective"
                                                              : ""));
    line("Exposed comm", fmt::format("{} (pipelined - compute-only)", time_text(m.exposed_comm_us)));
    line("Ideal bound", fmt::format("{} (max(seq comm, compute-only))", time_text(m.ideal_bound_us)));
    line("TFLOPS (per rank)", fmt::format("{:.2f} pipelined, {:.2f} compute-only, {:.2f} sequential",
                                          m.tflops_per_rank, m.tflops_compute_only, m.tflops_sequential));
    if (!seed) line("Op", op_line);
    line(seed ? id.seed_format->bandwidth_label : fmt::format("Comm bandwidth ({})", id.comm_kind),
         fmt::format("{:.2f} GiB/s ({:.2f} GB/s) over the pipelined time", m.comm_payload_gib_s, m.comm_payload_gb_s));
    // What the pipelined view really put on the links (a variant re-reading remote data moves
    // more than the collective's payload).
    if (!seed && r.extras.contains("comm_bytes_per_rank")) {
        const double moved = r.extras.at("comm_bytes_per_rank").get<double>();
        line("Link traffic (per rank)",
             fmt::format("{:.2f} MiB moved, {:.2f}x the {} payload of {:.2f} MiB", moved / (1 << 20),
                         m.comm_payload_bytes > 0 ? moved / m.comm_payload_bytes : 0.0, id.comm_kind,
                         m.comm_payload_bytes / (1 << 20)));
    }
    return out;
}

}  // namespace tandem::host
