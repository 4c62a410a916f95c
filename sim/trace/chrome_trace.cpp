#include "sim/trace/chrome_trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "sim/core/cost_model.hpp"
#include "sim/net/topology.hpp"
#include "sim/output_file.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

constexpr int kTidsPerCore = 16;       // one per pipe, plus the BLOCKS track
constexpr int kBlocksTrack = 8;
constexpr int kAivTidBase = 100000;    // AIV tracks sort after AIC tracks
constexpr int kStageTidBase = 1000000; // one track per stage the op named, sorted before the cores
constexpr int kLaneTidStride = 10000000;  // lane n > 1's tracks: n - 1 strides on (16 lanes at most)
constexpr std::size_t kFlushBytes = 4 << 20;

// Microseconds with 6 decimals, exactly (one picosecond resolution, no floating point).
std::string us(SimTime ps) {
    const char* sign = ps < 0 ? "-" : "";
    const SimTime a = ps < 0 ? -ps : ps;
    return fmt::format("{}{}.{:06}", sign, a / 1000000, a % 1000000);
}

// A core's tracks are kTidsPerCore ids from its type's base: AIC ids stay below kAivTidBase only
// for cores below kMaxTracedCores, checked where a record's track is made.
constexpr int kMaxTracedCores = kAivTidBase / kTidsPerCore;

int track_id(CoreType type, int core, int slot) {
    if (core < 0 || core >= kMaxTracedCores) {
        throw SimError(fmt::format("trace: {} core {} is outside the {} cores per type a trace has tracks for",
                                   core_type_name(type), core, kMaxTracedCores));
    }
    return (type == CoreType::AIC ? 0 : kAivTidBase) + core * kTidsPerCore + slot;
}

std::string track_name(CoreType type, int core, const char* what) {
    return fmt::format("{}{} {}", core_type_name(type), core, what);
}

bool on_data_pipe(Opcode op) {
    switch (op) {
        case Opcode::TLOAD:
        case Opcode::TEXTRACT:
        case Opcode::TMATMUL:
        case Opcode::TMATMUL_ACC:
        case Opcode::TMATMUL_BIAS:
        case Opcode::TSTORE:
        case Opcode::TSTORE_ATOMIC_ADD:
        case Opcode::TADD:
        case Opcode::TADDS:
        case Opcode::TMULS:
        case Opcode::TCVT:
        case Opcode::TMOV:
        case Opcode::TADD_ROWVEC:
        case Opcode::TADD_COLVEC:
        case Opcode::TMUL:
        case Opcode::TDIV:
        case Opcode::TEXP:
        case Opcode::TABS:
        case Opcode::TROWMAX:
        case Opcode::TROWEXPANDMUL:
        case Opcode::TSORT:
        case Opcode::TMRGSORT:
        case Opcode::TSTORE_FP: return true;
        default: return false;
    }
}

bool on_scalar(const InstrRecord& r) {
    return r.op == Opcode::TNOTIFY || r.op == Opcode::TWAIT || r.op == Opcode::TTEST ||
           r.op == Opcode::CROSS_CORE_WAIT_FLAG || r.op == Opcode::SCALAR || r.op == Opcode::TGET_ASYNC ||
           r.op == Opcode::WAIT_ASYNC || r.op == Opcode::DSB || (r.op == Opcode::PIPE_BARRIER && r.pipe == Pipe::S);
}

// JSON string escaping for names that come from users (allocation names).
std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

class TraceWriter {
public:
    TraceWriter(const std::string& path, const TraceInput& in, const TraceFilter& filter)
        : path_(path), in_(in), filter_(filter) {
        try {
            out_file_ = plan_output_file(path);
        } catch (const SimError& e) {
            throw SimError(fmt::format("cannot write trace '{}': {}", path, e.what()));
        }
        tmp_ = out_file_.write_path.string();
        file_ = std::fopen(tmp_.c_str(), "wb");
        if (!file_) {
            throw SimError(fmt::format("cannot write trace '{}': cannot create '{}': {}", path, tmp_, std::strerror(errno)));
        }
    }
    ~TraceWriter() {
        if (file_) {
            std::fclose(file_);
            discard_output_file(out_file_);
        }
    }

    void write() {
        stalled_min_ps_ = in_.machine.issue_ps + in_.machine.twait_poll_ps;
        out_ += "{\"displayTimeUnit\":\"ns\",\n\"otherData\":";
        out_ += other_data().dump();
        out_ += ",\n\"traceEvents\":[\n";
        index_notifies();
        for (const InstrRecord& r : *in_.log) {
            if (!keep_rank(r.rank) || !in_window(r.start, r.end)) continue;
            instruction(r);
            if (r.stage >= 0 && on_data_pipe(r.op)) note_stage(r);
        }
        end_poll_runs();
        stage_slices();
        link_counters();
        memory_counters();
        track_metadata();
        out_ += "{\"name\":\"end\",\"ph\":\"M\",\"pid\":0,\"args\":{}}\n]}\n";
        flush();
        if (std::fclose(file_) != 0) {
            const int err = errno;
            file_ = nullptr;
            discard_output_file(out_file_);
            throw SimError(fmt::format("cannot write trace '{}': write to '{}' failed: {}", path_, tmp_, std::strerror(err)));
        }
        file_ = nullptr;
        try {
            commit_output_file(out_file_);
        } catch (const SimError& e) {
            throw SimError(fmt::format("cannot write trace '{}': {}", path_, e.what()));
        }
    }

private:
    bool keep_rank(int rank) const {
        return filter_.ranks.empty() || std::find(filter_.ranks.begin(), filter_.ranks.end(), rank) != filter_.ranks.end();
    }
    bool in_window(SimTime start, SimTime end) const {
        if (!filter_.window_us) return true;
        const SimTime a = in_.view_start + from_us(filter_.window_us->first);
        const SimTime b = in_.view_start + from_us(filter_.window_us->second);
        return end >= a && start <= b;
    }

    nlohmann::json other_data() const {
        nlohmann::json d = in_.metadata;
        d["view"] = "pipelined";
        d["view_start_us"] = to_us(in_.view_start);
        d["view_end_us"] = to_us(in_.view_end);
        nlohmann::json busy = nlohmann::json::object();
        for (const auto& [rank, pipes] : in_.busy_ps) {
            nlohmann::json per_pipe = nlohmann::json::object();
            for (Pipe p : {Pipe::M, Pipe::MTE1, Pipe::MTE2, Pipe::MTE3, Pipe::FIX, Pipe::V})
                per_pipe[pipe_name(p)] = to_us(pipes[static_cast<std::size_t>(pipe_index(p))]);
            busy[std::to_string(rank)] = per_pipe;
        }
        d["busy_us"] = busy;
        nlohmann::json f = nlohmann::json::object();
        f["ranks"] = filter_.ranks.empty() ? nlohmann::json("all") : nlohmann::json(filter_.ranks);
        f["window_us"] = filter_.window_us ? nlohmann::json({filter_.window_us->first, filter_.window_us->second})
                                           : nlohmann::json("all");
        d["filter"] = f;
        return d;
    }

    // TNOTIFYs by (destination rank, address, visible time): what released a TWAIT.
    void index_notifies() {
        for (std::size_t i = 0; i < in_.log->size(); ++i) {
            const InstrRecord& r = (*in_.log)[i];
            if (r.op == Opcode::TNOTIFY) notifies_.emplace(std::make_tuple(r.peer, r.address, r.visible), i);
        }
    }

    const std::string& stream_name(int id) const {
        static const std::string unknown = "stream";
        return id >= 0 && static_cast<std::size_t>(id) < in_.stream_names.size() ? in_.stream_names[static_cast<std::size_t>(id)] : unknown;
    }

    // The lane (1, 2, ...) of stream `id`'s tracks (TraceInput::stream_lanes).
    int lane_of(int id) const {
        const auto& lanes = in_.stream_lanes;
        return id >= 0 && static_cast<std::size_t>(id) < lanes.size() ? std::max(1, lanes[static_cast<std::size_t>(id)]) : 1;
    }

    // A record's track: its core's, or in lane n > 1 of a trace of several calls its own copy.
    int use_track(const InstrRecord& r, int slot, const char* what) {
        const int lane = lane_of(r.stream);
        const int tid = track_id(r.core_type, r.core, slot) + (lane - 1) * kLaneTidStride;
        std::string name = track_name(r.core_type, r.core, what);
        if (lane > 1) name += fmt::format(" (lane {})", lane);
        tracks_.emplace(r.rank, tid, std::move(name));
        return tid;
    }

    void instruction(const InstrRecord& r) {
        int tid;
        if (on_data_pipe(r.op)) {
            tid = use_track(r, pipe_index(r.pipe), pipe_name(r.pipe));
        } else if (on_scalar(r)) {
            tid = use_track(r, pipe_index(Pipe::S), pipe_name(Pipe::S));
        } else if (r.op == Opcode::BLOCK) {
            tid = use_track(r, kBlocksTrack, "BLOCKS");
        } else {
            return;  // set_flag / wait_flag / single-pipe barriers: no duration of their own
        }
        if (r.op == Opcode::TTEST) {
            poll(r, tid);
            return;
        }
        slice(r, tid, r.end, {});
    }

    // Back-to-back TTEST polls of one block on one track (a kernel sweeping its chunk flags: on
    // a big run a million slices of one poll each, most of the trace's bytes) are one slice with
    // "polls": N, from the first's start to the last's end: the same busy time, exactly.
    struct PollRun {
        const InstrRecord* first = nullptr;
        const InstrRecord* last = nullptr;
        int polls = 0;
    };

    void poll(const InstrRecord& r, int tid) {
        PollRun& run = polls_[{r.rank, tid}];
        if (run.polls > 0 && run.last->end == r.start && run.last->block == r.block && run.last->stream == r.stream) {
            run.last = &r;
            ++run.polls;
            return;
        }
        end_poll_run(run, tid);
        run = PollRun{&r, &r, 1};
    }

    void end_poll_run(PollRun& run, int tid) {
        if (run.polls == 0) return;
        std::string more;
        if (run.polls > 1) {
            more = fmt::format(",\"polls\":{},\"last_value\":{}", run.polls, run.last->value);
            const std::string sig = signal_of(*run.last);
            if (!sig.empty()) more += fmt::format(",\"last_signal\":{}", json_string(sig));
        }
        slice(*run.first, tid, run.last->end, more);
        run.polls = 0;
    }

    void end_poll_runs() {
        for (auto& [key, run] : polls_) end_poll_run(run, key.second);
    }

    // The name of the signal word a TNOTIFY, TWAIT or TTEST touches ("" when it has none).
    std::string signal_of(const InstrRecord& r) const {
        if (!in_.signal_name) return {};
        return in_.signal_name(r.op == Opcode::TNOTIFY ? r.peer : r.rank, r.address);
    }

    // One X event: record `r` on track `tid`, ending at `end` (a run of polls ends later than its
    // first), `more` appended to its args.
    void slice(const InstrRecord& r, int tid, SimTime end, const std::string& more) {
        const std::string name = r.op == Opcode::BLOCK ? fmt::format("block {}", r.block) : std::string(opcode_name(r.op));
        const bool stalled = r.op == Opcode::TWAIT && r.end - r.start > stalled_min_ps_;
        const std::string& stream = stream_name(r.stream);
        std::string args = fmt::format("\"block\":{},\"stream\":{}", r.block, json_string(stream));
        if (r.stage >= 0 && r.op != Opcode::BLOCK) args += fmt::format(",\"stage\":{}", json_string(stage_name(r.stage)));
        if (r.stage_item >= 0 && r.op != Opcode::BLOCK) args += fmt::format(",\"item\":{}", r.stage_item);
        if (r.op == Opcode::TMATMUL || r.op == Opcode::TMATMUL_ACC || r.op == Opcode::TMATMUL_BIAS) args += fmt::format(",\"flops\":{}", r.bytes);
        else if (r.bytes > 0) args += fmt::format(",\"bytes\":{}", r.bytes);
        if (r.address != 0) args += fmt::format(",\"address\":\"{:#x}\"", r.address);
        if (r.peer >= 0) args += fmt::format(",\"peer\":{}", r.peer);
        if (r.op == Opcode::CROSS_CORE_WAIT_FLAG) args += fmt::format(",\"flag\":{}", r.value);
        if (r.op == Opcode::TNOTIFY || r.op == Opcode::TWAIT || r.op == Opcode::TTEST) {
            args += fmt::format(",\"value\":{}", r.value);
            const std::string sig = signal_of(r);
            if (!sig.empty()) args += fmt::format(",\"signal\":{}", json_string(sig));
        }
        if (r.op == Opcode::TNOTIFY) args += fmt::format(",\"visible_us\":{}", us(r.visible));
        if (r.op == Opcode::TGET_ASYNC || r.op == Opcode::WAIT_ASYNC) args += fmt::format(",\"done_us\":{}", us(r.visible));
        args += more;
        out_ += fmt::format("{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},\"args\":{{{}}}}},\n",
                            json_string(name), json_string(stalled ? stream + ",stall" : stream), us(r.start), us(end - r.start),
                            r.rank, tid, args);
        if (stalled) flow_to(r, tid);
        if (out_.size() > kFlushBytes) flush();
    }

    std::string stage_name(int id) const {
        return static_cast<std::size_t>(id) < in_.stage_names.size() ? in_.stage_names[static_cast<std::size_t>(id)]
                                                                     : fmt::format("stage{}", id);
    }

    // A stage's extent on a rank, from the data-pipe records kept (as KernelStats::stages):
    // [first start, last end], the blocks (core, block) that ran one and busy per pipe.
    struct StageSpan {
        SimTime start = kNever;
        SimTime end = 0;
        std::set<std::tuple<CoreType, int, int>> blocks;
        std::array<SimTime, kPipeCount> busy_ps{};
    };

    void note_stage(const InstrRecord& r) {
        StageSpan& s = stages_[{r.rank, r.stage}];
        s.start = std::min(s.start, r.start);
        s.end = std::max(s.end, r.end);
        s.blocks.emplace(r.core_type, r.core, r.block);
        s.busy_ps[static_cast<std::size_t>(pipe_index(r.pipe))] += r.end - r.start;
    }

    // One track per stage on each rank ("stage <name>") with one slice over the stage's extent:
    // a lane per stage group, above the cores.
    void stage_slices() {
        for (const auto& [key, s] : stages_) {
            const auto [rank, stage] = key;
            const int tid = kStageTidBase + stage;
            tracks_.emplace(rank, tid, "stage " + stage_name(stage));
            nlohmann::json busy = nlohmann::json::object();
            for (Pipe p : {Pipe::M, Pipe::MTE1, Pipe::MTE2, Pipe::MTE3, Pipe::FIX, Pipe::V}) {
                const SimTime ps = s.busy_ps[static_cast<std::size_t>(pipe_index(p))];
                if (ps > 0) busy[pipe_name(p)] = to_us(ps);
            }
            out_ += fmt::format("{{\"name\":{},\"cat\":\"stage\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},"
                                "\"args\":{{\"stage\":{},\"blocks\":{},\"busy_us\":{}}}}},\n",
                                json_string(stage_name(stage)), us(s.start), us(s.end - s.start), rank, tid,
                                json_string(stage_name(stage)), s.blocks.size(), busy.dump());
        }
    }

    // An arrow from the TNOTIFY whose write made this TWAIT's condition true.
    void flow_to(const InstrRecord& wait, int wait_tid) {
        const SimTime released = wait.end - in_.machine.twait_poll_ps;
        auto it = notifies_.find(std::make_tuple(wait.rank, wait.address, released));
        if (it == notifies_.end()) return;  // released by a host write
        const InstrRecord& n = (*in_.log)[it->second];
        // Only to a TNOTIFY the trace holds: one on a rank or outside the window left out would
        // start an arrow at no slice (check_trace.py: a stalled TWAIT without its flow is expected
        // in a filtered trace).
        if (!keep_rank(n.rank) || !in_window(n.start, n.end)) return;
        const int id = next_flow_++;
        const int notify_tid = use_track(n, pipe_index(Pipe::S), pipe_name(Pipe::S));
        out_ += fmt::format("{{\"name\":\"notify\",\"cat\":\"signal\",\"ph\":\"s\",\"id\":{},\"ts\":{},\"pid\":{},\"tid\":{}}},\n",
                            id, us(n.start), n.rank, notify_tid);
        // Bound to the enclosing slice: one picosecond before the wait's end, inside it.
        out_ += fmt::format("{{\"name\":\"notify\",\"cat\":\"signal\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"ts\":{},\"pid\":{},\"tid\":{}}},\n",
                            id, us(wait.end - 1), wait.rank, wait_tid);
    }

    // Bandwidth in use on each link, exactly as the links' calendars booked it.
    void link_counters() {
        for (const auto& [link, steps] : in_.link_usage) {
            const auto named = in_.machine.links.find(link);
            if (named == in_.machine.links.end()) throw SimError(fmt::format("internal: trace of link {} without its name", link));
            const int src = named->second.src;
            if (!keep_rank(src)) continue;
            const std::string name = named->second.name + " GB/s";
            for (const auto& [t, bytes_per_s] : steps) {
                if (!in_window(t, t)) continue;
                out_ += fmt::format("{{\"name\":{},\"ph\":\"C\",\"ts\":{},\"pid\":{},\"args\":{{\"GB/s\":{:.3f}}}}},\n",
                                    json_string(name), us(t), src, static_cast<double>(bytes_per_s) / 1e9);
            }
        }
    }

    // Each chip's L2 and HBM throughput per usage bin, every stream's traffic and its peers'
    // stores into it summed: where the memory system, not a pipe, sets the pace.
    void memory_counters() {
        if (in_.memory_usage.empty()) return;
        const SimTime bin_ps = in_.memory_bin_ps;
        if (bin_ps <= 0) throw SimError("internal: a trace of memory usage without the bins' length");
        const double gib_s_per_byte = 1e12 / static_cast<double>(bin_ps) / 1073741824.0;
        auto counter = [&](int rank, SimTime t, std::int64_t l2, std::int64_t hbm) {
            out_ += fmt::format("{{\"name\":\"memory GiB/s\",\"ph\":\"C\",\"ts\":{},\"pid\":{},\"args\":{{\"L2\":{:.3f},\"HBM\":{:.3f}}}}},\n",
                                us(t), rank, static_cast<double>(l2) * gib_s_per_byte, static_cast<double>(hbm) * gib_s_per_byte);
        };
        for (const auto& [rank, bins] : in_.memory_usage) {
            if (!keep_rank(rank)) continue;
            for (std::size_t i = 0; i < bins.size(); ++i) {
                const SimTime t = bins[i].bin * bin_ps;
                if (!in_window(t, t + bin_ps)) continue;
                counter(rank, t, bins[i].l2_bytes, bins[i].hbm_bytes);
                // Back to zero where the next bin with traffic is not the next bin.
                if (i + 1 == bins.size() || bins[i + 1].bin != bins[i].bin + 1) counter(rank, t + bin_ps, 0, 0);
            }
        }
    }

    void track_metadata() {
        std::set<int> ranks;
        for (const auto& [rank, tid, name] : tracks_) ranks.insert(rank);
        for (int rank : ranks) {
            out_ += fmt::format("{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"rank {}\"}}}},\n", rank, rank);
            out_ += fmt::format("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"sort_index\":{}}}}},\n", rank, rank);
        }
        for (const auto& [rank, tid, name] : tracks_) {
            out_ += fmt::format("{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}},\n", rank,
                                tid, json_string(name));
            // Stage tracks first, then the cores in tid order.
            out_ += fmt::format("{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}},\n",
                                rank, tid, tid >= kStageTidBase ? tid - 2 * kStageTidBase : tid);
        }
    }

    void flush() {
        if (!out_.empty() && std::fwrite(out_.data(), 1, out_.size(), file_) != out_.size())
            throw SimError(fmt::format("cannot write trace '{}': write to '{}' failed: {}", path_, tmp_, std::strerror(errno)));
        out_.clear();
    }

    std::string path_;
    OutputFile out_file_;
    std::string tmp_;  // where the bytes go (out_file_.write_path)
    const TraceInput& in_;
    const TraceFilter& filter_;
    std::FILE* file_ = nullptr;
    std::string out_;
    SimTime stalled_min_ps_ = 0;
    std::multimap<std::tuple<int, std::int64_t, SimTime>, std::size_t> notifies_;
    std::set<std::tuple<int, int, std::string>> tracks_;
    std::map<std::pair<int, int>, StageSpan> stages_;  // by (rank, stage)
    std::map<std::pair<int, int>, PollRun> polls_;     // the open run of polls by (rank, track)
    int next_flow_ = 1;
};

}  // namespace

TraceMachine trace_machine(const CostModel& cost, const Topology& topology, const std::map<int, LinkSteps>& link_usage) {
    TraceMachine m;
    m.issue_ps = cost.issue_ps;
    m.twait_poll_ps = cost.twait_poll_ps;
    for (const auto& [link, steps] : link_usage) m.links[link] = TraceLink{topology.link(link).src, topology.describe_link(link)};
    return m;
}

void write_chrome_trace(const std::string& path, const TraceInput& in, const TraceFilter& filter) {
    if (in.log == nullptr) throw SimError("internal: trace requested without an event log");
    TraceWriter(path, in, filter).write();
}

std::vector<int> parse_rank_list(const std::string& text) {
    std::vector<int> ranks;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = text.find(',', pos);
        const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        std::size_t used = 0;
        int rank = -1;
        try {
            rank = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size() || rank < 0)
            throw SimError(fmt::format("ranks '{}': expected a comma-separated list of ranks like 0,3", text));
        ranks.push_back(rank);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
}

std::pair<double, double> parse_window_us(const std::string& text) {
    const std::size_t colon = text.find(':');
    try {
        if (colon != std::string::npos) {
            std::size_t ua = 0, ub = 0;
            const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
            const double lo = std::stod(a, &ua), hi = std::stod(b, &ub);
            if (ua == a.size() && ub == b.size() && lo >= 0 && hi > lo) return {lo, hi};
        }
    } catch (const std::exception&) {
    }
    throw SimError(fmt::format("window '{}': expected START:END in microseconds from the view's start, "
                               "START >= 0 and END > START, like 0:250",
                               text));
}

}  // namespace tandem
