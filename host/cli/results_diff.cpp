// Two results JSONs compared. See results_diff.hpp.
#include "host/cli/results_diff.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

using nlohmann::json;

// Keys that repeat another key's value under a second name (docs/RESULTS.md): shown once.
const std::set<std::string>& aliases() {
    static const std::set<std::string> a = {"allgather_bytes", "allgather_gb_s", "allgather_gib_s", "tflops_pipelined"};
    return a;
}

// The figures a user reads first (the summary's): listed before the others when they moved.
const std::set<std::string>& headline() {
    static const std::set<std::string> h = {"pipelined_us",    "sequential_us",   "seq_comm_us", "seq_compute_us",
                                            "compute_only_us", "speedup",         "overlap_eff_pct",
                                            "exposed_comm_us", "tflops_per_rank", "comm_gib_s"};
    return h;
}

// An array element's name: by what tells the elements apart ("pipelined launch 1 MoeGmm1",
// "rank 3", "stage gmm1"), else its index.
std::string element_name(const json& e, std::size_t index) {
    if (e.is_object()) {
        if (e.contains("view") && e.contains("launch")) {
            return fmt::format("{} launch {}{}", e["view"].get<std::string>(), e["launch"].dump(),
                               e.contains("kernel") ? " " + e["kernel"].get<std::string>() : std::string());
        }
        if (e.contains("stage") && e["stage"].is_string()) return "stage " + e["stage"].get<std::string>();
        if (e.contains("rank") && e["rank"].is_number_integer()) return fmt::format("rank {}", e["rank"].get<int>());
    }
    return fmt::format("[{}]", index);
}

// Every number of `j` by its path (`prefix` first), in `out`; strings in `texts`.
void flatten(const json& j, const std::string& prefix, std::map<std::string, double>& out,
             std::map<std::string, std::string>& texts) {
    if (j.is_number()) {
        out[prefix] = j.get<double>();
    } else if (j.is_string() || j.is_boolean()) {
        texts[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
    } else if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            if (prefix.empty() && aliases().count(key) > 0) continue;
            flatten(value, prefix.empty() ? key : prefix + "." + key, out, texts);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            const std::string name = j[i].is_object() && prefix == "per_rank" ? fmt::format("rank {}", i)
                                                                               : element_name(j[i], i);
            flatten(j[i], fmt::format("{}[{}]", prefix, name), out, texts);
        }
    }
}

std::string group_of(const std::string& path) {
    if (path.rfind("kernels[", 0) == 0) return "kernels";
    if (path.rfind("per_rank[", 0) == 0) return "ranks";
    if (path.rfind("pipelined_stages", 0) == 0) return "stages";
    return "figures";
}

// The identity: what a run was asked for (strings, and the shape and blocks).
bool is_identity(const std::string& path) {
    static const std::set<std::string> ints = {"ranks", "m", "k", "n", "base_m", "base_n", "compute_blocks",
                                               "comm_blocks", "sweep_line"};
    return ints.count(path) > 0;
}

std::string number_text(double x) {
    if (x == std::floor(x) && std::fabs(x) < 1e15) return fmt::format("{:.0f}", x);
    return fmt::format("{:.6g}", x);
}

struct Change {
    std::string path;
    double a = 0;
    double b = 0;
    double rel_pct = 0;  // of |a|; infinite when a is 0 and b is not
};

std::string change_line(const Change& c, std::size_t width) {
    const std::string rel = std::isinf(c.rel_pct) ? std::string("new") : fmt::format("{:+.2f}%", c.rel_pct);
    return fmt::format("    {:<{}}  {} -> {}  ({:+.6g}, {})\n", c.path, width, number_text(c.a), number_text(c.b),
                       c.b - c.a, rel);
}

std::string run_label(const json& r) {
    auto s = [&r](const char* k) { return r.contains(k) ? (r[k].is_string() ? r[k].get<std::string>() : r[k].dump()) : "?"; };
    return fmt::format("{} {}, {} ranks, M={} K={} N={}, {}", s("op"), s("variant"), s("ranks"), s("m"), s("k"), s("n"),
                       s("soc"));
}

json load_results(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw SimError(fmt::format("{}: cannot read it", path));
    std::stringstream text;
    text << in.rdbuf();
    json j;
    try {
        j = json::parse(text.str());
    } catch (const json::exception& e) {
        throw SimError(fmt::format("{}: not JSON ({})", path, e.what()));
    }
    auto is_result = [](const json& r) { return r.is_object() && r.contains("pipelined_us"); };
    const bool ok = is_result(j) || (j.is_array() && !j.empty() && std::all_of(j.begin(), j.end(), is_result));
    if (!ok) {
        throw SimError(fmt::format("{}: not a Tandem results JSON (an object with pipelined_us, or a sweep's array of "
                                   "them: --json, --sweep-out)",
                                   path));
    }
    return j;
}

}  // namespace

std::string diff_results(const json& a, const json& b, const DiffOptions& options, bool& moved) {
    std::map<std::string, double> na, nb;
    std::map<std::string, std::string> ta, tb;
    flatten(a, "", na, ta);
    flatten(b, "", nb, tb);
    std::string out;
    // What the runs were: the parameters that differ.
    std::vector<std::string> identity;
    for (const auto& [path, text] : ta) {
        if (path.find('.') != std::string::npos || path.find('[') != std::string::npos) continue;
        const auto it = tb.find(path);
        if (it != tb.end() && it->second != text) identity.push_back(fmt::format("{} {} -> {}", path, text, it->second));
    }
    for (const auto& [path, x] : na) {
        const auto it = nb.find(path);
        if (is_identity(path) && path != "sweep_line" && it != nb.end() && it->second != x)
            identity.push_back(fmt::format("{} {} -> {}", path, number_text(x), number_text(it->second)));
    }
    out += identity.empty() ? "  the same run (op, variant, shape, dtypes, profile, ...)\n"
                            : fmt::format("  runs differ in: {}\n", fmt::join(identity, ", "));
    std::map<std::string, std::vector<Change>> groups;
    int unchanged = 0;
    int only_one = 0;
    for (const auto& [path, x] : na) {
        if (is_identity(path)) continue;
        const auto it = nb.find(path);
        if (it == nb.end()) {
            ++only_one;
            continue;
        }
        const double y = it->second;
        if (x == y) {
            ++unchanged;
            continue;
        }
        const double rel = x != 0 ? (y - x) / std::fabs(x) * 100.0 : INFINITY;
        moved = true;
        if (std::fabs(rel) < options.min_rel_pct) continue;
        groups[group_of(path)].push_back({path, x, y, rel});
    }
    for (const auto& [path, y] : nb) {
        (void)y;
        if (!is_identity(path) && na.count(path) == 0) ++only_one;
    }
    for (const char* group : {"figures", "kernels", "ranks", "stages"}) {
        std::vector<Change>& changes = groups[group];
        if (changes.empty()) continue;
        // The views and what follows from them first, then the rest by the size of the change.
        std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
            const bool hx = headline().count(x.path) > 0, hy = headline().count(y.path) > 0;
            if (hx != hy) return hx;
            return std::fabs(x.rel_pct) > std::fabs(y.rel_pct);
        });
        const std::size_t shown = options.limit > 0 ? std::min<std::size_t>(changes.size(), options.limit) : changes.size();
        std::size_t width = 0;
        for (std::size_t i = 0; i < shown; ++i) width = std::max(width, changes[i].path.size());
        out += fmt::format("  {} that moved ({}{}):\n", group, changes.size(),
                           std::string(group) == "figures" ? ": the views and their metrics, then the largest relative change first"
                                                           : ", the largest relative change first");
        for (std::size_t i = 0; i < shown; ++i) out += change_line(changes[i], width);
        if (shown < changes.size()) out += fmt::format("    ... and {} more (--all lists every one)\n", changes.size() - shown);
    }
    out += fmt::format("  {} figure{} the same{}\n", unchanged, unchanged == 1 ? "" : "s",
                       only_one > 0 ? fmt::format("; {} in one of the two only", only_one) : std::string());
    return out;
}

int run_diff_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    DiffOptions options;
    std::vector<std::string> files;
    try {
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "--all") {
                options.limit = 0;
            } else if (args[i] == "--min-pct") {
                if (i + 1 >= args.size()) throw SimError("--min-pct: give a percentage, like 1");
                try {
                    options.min_rel_pct = std::stod(args[++i]);
                } catch (const std::exception&) {
                    throw SimError(fmt::format("--min-pct {}: not a number", args[i]));
                }
            } else if (args[i] == "-h" || args[i] == "--help") {
                out << "Usage: tandem diff A.json B.json [--all] [--min-pct P]\n"
                       "  Which figures of two results JSONs (--json; a sweep's --sweep-out PREFIX.json) moved, B against A:\n"
                       "  the parameters that differ, then the run's figures, its kernels, its ranks and its stages,\n"
                       "  the largest relative change first. --all: every change (default: 12 per group);\n"
                       "  --min-pct P: leave out changes below P percent. Exit status 0: nothing moved, 1: some\n"
                       "  figure moved, 2: an error.\n";
                return 0;
            } else if (!args[i].empty() && args[i][0] == '-') {
                throw SimError(fmt::format("{}: not an option of diff (--all, --min-pct P, --help)", args[i]));
            } else {
                files.push_back(args[i]);
            }
        }
        if (files.size() != 2) {
            throw SimError(fmt::format("diff takes two results JSONs (tandem diff A.json B.json), got {}", files.size()));
        }
        const json a = load_results(files[0]);
        const json b = load_results(files[1]);
        if (a.is_array() != b.is_array()) {
            throw SimError(fmt::format("{} and {}: one is a sweep's array, the other one run; compare like with like",
                                       files[0], files[1]));
        }
        bool moved = false;
        out << fmt::format("tandem diff {} {} (B against A)\n", files[0], files[1]);
        if (!a.is_array()) {
            out << fmt::format("  A: {}\n  B: {}\n", run_label(a), run_label(b));
            out << diff_results(a, b, options, moved);
            return moved ? 1 : 0;
        }
        std::map<std::string, const json*> by_line;
        for (const json& e : b) by_line[e.value("sweep_line", json()).dump()] = &e;
        for (const json& e : a) {
            const std::string line = e.value("sweep_line", json()).dump();
            const auto it = by_line.find(line);
            if (it == by_line.end()) {
                out << fmt::format("sweep line {}: only in {}\n", line, files[0]);
                moved = true;
                continue;
            }
            out << fmt::format("sweep line {}: {}\n", line, run_label(e));
            out << diff_results(e, *it->second, options, moved);
            by_line.erase(it);
        }
        for (const auto& [line, e] : by_line) {
            (void)e;
            out << fmt::format("sweep line {}: only in {}\n", line, files[1]);
            moved = true;
        }
        return moved ? 1 : 0;
    } catch (const SimError& e) {
        err << "[ERROR] diff: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace tandem::host
