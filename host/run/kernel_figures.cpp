#include "host/run/kernel_figures.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace tandem::host {

namespace {

const char* core_key(CoreType t) { return t == CoreType::AIC ? "aic" : "aiv"; }

const char* launch_type_name(LaunchCores c) {
    if (c.mix()) return "MIX";
    return core_type_name(c.single());
}

nlohmann::json ratio_json(const PipeRatio& r) { return {{"mean", r.mean}, {"min", r.min}, {"max", r.max}}; }

}  // namespace

const std::vector<Pipe>& profiled_pipes(CoreType t) {
    static const std::vector<Pipe> aic = {Pipe::M, Pipe::MTE1, Pipe::MTE2, Pipe::FIX, Pipe::S};
    static const std::vector<Pipe> aiv = {Pipe::MTE2, Pipe::V, Pipe::MTE3, Pipe::S};
    return t == CoreType::AIC ? aic : aiv;
}

const char* pipe_key(Pipe p) {
    switch (p) {
        case Pipe::M: return "cube";
        case Pipe::MTE1: return "mte1";
        case Pipe::MTE2: return "mte2";
        case Pipe::FIX: return "fixp";
        case Pipe::V: return "vector";
        case Pipe::MTE3: return "mte3";
        case Pipe::S: return "scalar";
        case Pipe::ALL: break;
    }
    return "?";
}

const PipeRatio* KernelFigures::ratio(CoreType t, Pipe p) const {
    for (const PipeRatio& r : pipe_ratio)
        if (r.core_type == t && r.pipe == p) return &r;
    return nullptr;
}

KernelFigures measure_kernel(const KernelStats& stats) {
    KernelFigures f;
    f.start = stats.start;
    f.end = stats.end;
    const SimTime kernel_ps = stats.end - stats.start;
    for (CoreType t : {CoreType::AIC, CoreType::AIV}) {
        int cores = 0;
        for (const CoreBusy& c : stats.cores) cores += c.type == t ? 1 : 0;
        (t == CoreType::AIC ? f.aic_cores : f.aiv_cores) = cores;
        if (cores == 0) continue;
        for (Pipe p : profiled_pipes(t)) {
            PipeRatio r{t, p, 0, 0, 0};
            double sum = 0;
            bool first = true;
            for (const CoreBusy& c : stats.cores) {
                if (c.type != t) continue;
                const double x = kernel_ps > 0 ? static_cast<double>(c.busy_ps[static_cast<std::size_t>(pipe_index(p))]) /
                                                     static_cast<double>(kernel_ps)
                                               : 0.0;
                sum += x;
                r.min = first ? x : std::min(r.min, x);
                r.max = first ? x : std::max(r.max, x);
                first = false;
            }
            r.mean = std::clamp(sum / cores, r.min, r.max);  // the rounding of the sum must not put it outside
            f.pipe_ratio.push_back(r);
        }
    }
    return f;
}

nlohmann::json kernels_json(const std::vector<std::vector<KernelFigures>>& per_rank,
                            const std::vector<std::string>& stream_names) {
    // One entry per (view, launch), in view order; the figures of the lowest rank that ran it
    // (rank 0 for every shipped op, whose ranks all run the same launches) stand for it.
    using Key = std::tuple<kernels::ViewKind, int>;
    std::map<Key, nlohmann::json> entries;
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
        for (const KernelFigures& f : per_rank[r]) {
            nlohmann::json& e = entries[Key{f.view, f.launch}];
            const nlohmann::json mine = {{"rank", r}, {"kernel", f.kernel}, {"kernel_us", f.kernel_us()},
                                         {"start_us", to_us(f.start)}, {"end_us", to_us(f.end)}};
            if (e.is_null()) {
                const std::size_t s = static_cast<std::size_t>(f.stream);
                e = {{"view", kernels::view_name(f.view)},
                     {"launch", f.launch},
                     {"phase", f.phase},
                     {"stream", s < stream_names.size() ? stream_names[s] : std::to_string(f.stream)},
                     {"kernel", f.kernel},
                     {"core_type", launch_type_name(f.cores)},
                     {"blocks", f.blocks},
                     {"rank", r},
                     {"kernel_us", f.kernel_us()},
                     {"kernel_us_min", f.kernel_us()},
                     {"kernel_us_max", f.kernel_us()}};
                nlohmann::json cores = nlohmann::json::object();
                nlohmann::json ratios = nlohmann::json::object();
                for (CoreType t : {CoreType::AIC, CoreType::AIV}) {
                    const int n = t == CoreType::AIC ? f.aic_cores : f.aiv_cores;
                    if (n == 0) continue;
                    cores[core_key(t)] = n;
                    nlohmann::json pipes = nlohmann::json::object();
                    for (Pipe p : profiled_pipes(t)) pipes[pipe_key(p)] = ratio_json(*f.ratio(t, p));
                    ratios[core_key(t)] = pipes;
                }
                e["cores"] = cores;
                e["pipe_ratio"] = ratios;
                e["per_rank"] = nlohmann::json::array();
            }
            e["kernel_us_min"] = std::min(e["kernel_us_min"].get<double>(), f.kernel_us());
            e["kernel_us_max"] = std::max(e["kernel_us_max"].get<double>(), f.kernel_us());
            nlohmann::json row = mine;
            if (row["kernel"] == e["kernel"]) row.erase("kernel");  // named only where a rank ran another kernel
            e["per_rank"].push_back(row);
        }
    }
    nlohmann::json out = nlohmann::json::array();
    for (auto& [key, e] : entries) out.push_back(std::move(e));
    return out;
}

}  // namespace tandem::host
