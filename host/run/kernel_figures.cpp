#include "host/run/kernel_figures.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

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

TaskOverheads TaskOverheads::of(const Profile& profile) {
    return TaskOverheads{from_us(profile.host.task_start_us), from_us(profile.host.task_end_us)};
}

KernelFigures measure_kernel(const KernelStats& stats, TaskOverheads task) {
    KernelFigures f;
    f.start = stats.start;
    f.end = stats.end;
    f.task_start = stats.start - task.start_ps;
    f.task_end = stats.end + task.end_ps;
    f.stages = stats.stages;
    const SimTime kernel_ps = f.task_end - f.task_start;  // what the profiler divides a pipe's busy time by
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

std::vector<StageFigures> stage_figures(const KernelFigures& k, const std::vector<std::string>& stage_names) {
    std::vector<StageFigures> out;
    const double kernel_ps = static_cast<double>(k.end - k.start);
    for (std::size_t s = 0; s < k.stages.size(); ++s) {
        const StageBusy& b = k.stages[s];
        if (b.blocks == 0) continue;  // a stage id this kernel never entered
        StageFigures f{s < stage_names.size() ? stage_names[s] : fmt::format("stage{}", s), &b, Pipe::S, 0};
        for (int p = 0; p < kPipeCount; ++p) {
            const Pipe pipe = static_cast<Pipe>(p);
            if (pipe == Pipe::S || pipe == Pipe::ALL) continue;
            const double pct = kernel_ps > 0 ? 100.0 * static_cast<double>(b.busy_ps[static_cast<std::size_t>(p)]) /
                                                   (kernel_ps * b.blocks)
                                             : 0.0;
            if (pct > f.busiest_pct) {
                f.busiest_pct = pct;
                f.busiest = pipe;
            }
        }
        out.push_back(std::move(f));
    }
    return out;
}

namespace {

nlohmann::json stages_json(const KernelFigures& k, const std::vector<std::string>& stage_names, nlohmann::json& entry) {
    nlohmann::json out = nlohmann::json::array();
    const StageFigures* bound = nullptr;
    const std::vector<StageFigures> figures = stage_figures(k, stage_names);
    for (const StageFigures& f : figures) {
        nlohmann::json busy = nlohmann::json::object();
        for (int p = 0; p < kPipeCount; ++p) {
            const SimTime ps = f.busy->busy_ps[static_cast<std::size_t>(p)];
            if (ps > 0) busy[pipe_key(static_cast<Pipe>(p))] = to_us(ps);
        }
        nlohmann::json entry_json = {{"stage", f.name},
                                     {"start_us", to_us(f.busy->start)},
                                     {"end_us", to_us(f.busy->end)},
                                     {"span_us", to_us(f.busy->end - f.busy->start)},
                                     {"blocks", f.busy->blocks},
                                     {"busy_us", busy},
                                     {"busiest_pipe", f.busiest_pct > 0 ? pipe_key(f.busiest) : "none"},
                                     {"busiest_pipe_pct", f.busiest_pct}};
        // Each item's window (moe_ffn: a local expert's envelope over the cores that worked on
        // it, as the published stage profile gives it).
        nlohmann::json items = nlohmann::json::array();
        for (std::size_t i = 0; i < f.busy->items.size(); ++i) {
            const auto& [lo, hi] = f.busy->items[i];
            if (lo == kNever) continue;
            items.push_back({{"item", static_cast<int>(i)}, {"start_us", to_us(lo)}, {"end_us", to_us(hi)}});
        }
        if (!items.empty()) entry_json["items"] = std::move(items);
        out.push_back(std::move(entry_json));
        if (bound == nullptr || f.busiest_pct > bound->busiest_pct) bound = &f;
    }
    if (bound != nullptr) entry["bounding_stage"] = bound->name;
    return out;
}

}  // namespace

nlohmann::json pipelined_stages_json(const nlohmann::json& kernels) {
    struct Merged {
        double start = 0, end = 0;
        int blocks = 0;
        std::map<std::string, double> busy;
    };
    std::vector<std::pair<std::string, Merged>> stages;  // in order of first appearance
    double view_start = 0, view_end = 0;
    bool any = false, first_launch = true;
    for (const nlohmann::json& k : kernels) {
        if (k.value("view", "") != kernels::view_name(kernels::ViewKind::Pipelined) || k.at("per_rank").empty()) continue;
        const nlohmann::json& mine = k.at("per_rank").at(0);  // the entry's rank (the lowest that ran it)
        const double a = mine.at("start_us").get<double>(), b = mine.at("end_us").get<double>();
        view_start = first_launch ? a : std::min(view_start, a);
        view_end = first_launch ? b : std::max(view_end, b);
        first_launch = false;
        if (!k.contains("stages")) continue;
        any = true;
        for (const nlohmann::json& s : k.at("stages")) {
            const std::string name = s.at("stage").get<std::string>();
            auto it = std::find_if(stages.begin(), stages.end(), [&](const auto& e) { return e.first == name; });
            const bool fresh = it == stages.end();
            if (fresh) it = stages.insert(stages.end(), {name, Merged{}});
            Merged& m = it->second;
            m.start = fresh ? s.at("start_us").get<double>() : std::min(m.start, s.at("start_us").get<double>());
            m.end = fresh ? s.at("end_us").get<double>() : std::max(m.end, s.at("end_us").get<double>());
            m.blocks += s.at("blocks").get<int>();
            for (const auto& [pipe, us] : s.at("busy_us").items()) m.busy[pipe] += us.get<double>();
        }
    }
    if (!any) return nullptr;
    const double span = view_end - view_start;
    nlohmann::json list = nlohmann::json::array();
    std::string bound;
    double bound_pct = -1;
    for (const auto& [name, m] : stages) {
        std::string busiest = "none";
        double pct = 0;
        for (const auto& [pipe, us] : m.busy) {
            if (pipe == pipe_key(Pipe::S)) continue;
            const double x = span > 0 && m.blocks > 0 ? 100.0 * us / (span * m.blocks) : 0.0;
            if (x > pct) {
                pct = x;
                busiest = pipe;
            }
        }
        list.push_back({{"stage", name}, {"start_us", m.start}, {"end_us", m.end}, {"span_us", m.end - m.start},
                        {"blocks", m.blocks}, {"busiest_pipe", busiest}, {"busiest_pipe_pct", pct}});
        if (pct > bound_pct) {
            bound_pct = pct;
            bound = name;
        }
    }
    return {{"view_span_us", span}, {"stages", list}, {"bounding_stage", bound}};
}

nlohmann::json kernels_json(const std::vector<std::vector<KernelFigures>>& per_rank,
                            const std::vector<std::string>& stream_names, const std::vector<std::string>& stage_names) {
    // One entry per (view, launch), in view order; the figures of the lowest rank that ran it
    // (rank 0 for every shipped op, whose ranks all run the same launches) stand for it.
    using Key = std::tuple<kernels::ViewKind, int>;
    std::map<Key, nlohmann::json> entries;
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
        for (const KernelFigures& f : per_rank[r]) {
            nlohmann::json& e = entries[Key{f.view, f.launch}];
            const nlohmann::json mine = {{"rank", r}, {"kernel", f.kernel}, {"kernel_us", f.kernel_us()},
                                         {"blocks_us", f.blocks_us()}, {"start_us", to_us(f.start)},
                                         {"end_us", to_us(f.end)}, {"task_start_us", to_us(f.task_start)},
                                         {"task_end_us", to_us(f.task_end)}};
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
                     {"blocks_us", f.blocks_us()},
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
                if (!f.stages.empty()) e["stages"] = stages_json(f, stage_names, e);
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
