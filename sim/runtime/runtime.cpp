#include "sim/runtime/runtime.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "sim/mem/gm_deferred.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

// ---------------------------------------------------------------------------------- Stream --

Stream::Stream(HostContext& host, int stream_id, std::string name)
    : host_(host),
      id_(stream_id),
      name_(std::move(name)),
      lp_(host.cluster(), host.rank(), stream_id, name_),
      // A queued kernel's bound holds the windows until the kernel joins (see coordinator.hpp).
      bound_id_(host.cluster().coordinator().register_bound(std::nullopt, true)) {
    thread_ = std::thread([this] { thread_main(); });
}

Stream::~Stream() {
    host_.cluster().coordinator().update([&] { shutdown_ = true; });
    if (thread_.joinable()) thread_.join();
}

void Stream::launch(KernelLaunch kernel) {
    if (kernel.blocks < 1) {
        throw SimError(fmt::format("rank {}, stream '{}': kernel '{}' launched with {} blocks (need at least 1)",
                                   host_.rank(), name_, kernel.name, kernel.blocks));
    }
    Cluster& cluster = host_.cluster();
    const CostModel& cost = cluster.cost();
    Coordinator& coord = cluster.coordinator();
    if (Sanitizer* san = cluster.sanitizer(); san != nullptr && !kernel.signature.empty())
        san->note_launch_signature(name_, launches_, host_.rank(), kernel.name, kernel.signature);
    ++launches_;
    coord.update([&] {
        const SimTime h = host_.now_;
        queue_.push_back(Command{std::move(kernel), h + cost.launch_to_start_ps, nullptr,
                                 cluster.sanitizer() ? host_.san_release() : nullptr, host_.san_call_});
        refresh_bound_locked();
        host_.now_ = h + cost.launch_host_ps;
        coord.set_bound_locked(host_.host_id_, host_.now_);
    });
}

void Stream::record(Event& event) {
    host_.cluster().coordinator().update([&] {
        event.reached_ = false;
        queue_.push_back(Command{std::nullopt, 0, &event, nullptr, 0});
    });
}

void Stream::complete_locked(SimTime end) {
    tail_ = end;
    busy_ = false;
    refresh_bound_locked();
    if (queue_.empty() && waiting_host_) {
        // The waiting host resumes now; its clock bounds the next window from this very step,
        // and no window opens until it waits again.
        host_.now_ = std::max(host_.now_, tail_) + host_.cluster().cost().sync_ps;
        host_.cluster().coordinator().set_bound_locked(host_.host_id_, host_.now_);
        host_.cluster().coordinator().set_acting_locked(host_.host_id_, true);
        waiting_host_ = false;
    }
}

void Stream::refresh_bound_locked() {
    std::optional<SimTime> bound;
    if (!busy_) {
        for (const Command& c : queue_) {
            if (c.kernel) {
                bound = std::max(tail_, c.ready_at);
                break;
            }
        }
    }
    host_.cluster().coordinator().set_bound_locked(bound_id_, bound);
}

void Stream::synchronize() {
    Cluster& cluster = host_.cluster();
    Coordinator& coord = cluster.coordinator();
    const SimTime sync_ps = cluster.cost().sync_ps;
    bool done = false;
    coord.update([&] {
        if (!busy_ && queue_.empty()) {
            host_.now_ = std::max(host_.now_, tail_) + sync_ps;
            coord.set_bound_locked(host_.host_id_, host_.now_);
            done = true;
        } else {
            // Blocked: this host cannot act before the stream finishes, so it bounds nothing. The
            // stream installs the host's new clock the moment it finishes (see thread_main).
            waiting_host_ = true;
            coord.set_bound_locked(host_.host_id_, std::nullopt);
            coord.set_acting_locked(host_.host_id_, false);
        }
    });
    if (!done) coord.wait([&] { return !waiting_host_; });
    // The host now knows everything the stream's kernels did (a stream that ran no sanitized
    // kernel yet has nothing to tell).
    if (cluster.sanitizer() != nullptr && lp_.sanitizer() != nullptr) {
        coord.update([&] { host_.san_vc_.join(lp_.sanitizer()->stream_clock()); });
    }
}

void Stream::thread_main() {
    Cluster& cluster = host_.cluster();
    Coordinator& coord = cluster.coordinator();
    try {
        for (;;) {
            coord.wait([&] { return shutdown_ || !queue_.empty(); });
            Command cmd;
            bool stop = false;
            coord.update([&] {
                if (queue_.empty()) {
                    stop = true;
                    return;
                }
                cmd = std::move(queue_.front());
                queue_.pop_front();
                busy_ = true;
            });
            if (stop) return;
            if (cmd.kernel) {
                if (StreamSanitizer* san = lp_.sanitize_kernel(cmd.host_clock != nullptr)) {
                    san->begin_kernel(*cmd.host_clock, cmd.host_call,
                                      SanKernel{cmd.kernel->name, cmd.kernel->core_type.mix(), cmd.kernel->timing_only});
                }
                lp_.run_kernel(*cmd.kernel, std::max(tail_, cmd.ready_at), bound_id_, [&](const KernelStats& stats) {
                    stats_.push_back(stats);
                    complete_locked(stats.end + cluster.cost().kernel_end_ps);
                });
            } else {
                coord.update([&] {
                    cmd.event->time_ = tail_;
                    cmd.event->reached_ = true;
                    complete_locked(tail_);
                });
            }
        }
    } catch (const SimAborted&) {
        // The run failed elsewhere; the coordinator holds the error.
    } catch (const std::exception& e) {
        coord.fail(fmt::format("internal error in rank {}, stream '{}': {}", host_.rank(), name_, e.what()));
    }
}

// ----------------------------------------------------------------------------- HostContext --

HostContext::HostContext(Runtime& rt, int rank)
    : rt_(rt), rank_(rank), host_id_(rt.cluster().coordinator().register_bound(SimTime{0})) {}

HostContext::~HostContext() { streams_.clear(); }

int HostContext::ranks() const { return rt_.ranks(); }
Cluster& HostContext::cluster() { return rt_.cluster(); }
SimTime HostContext::now() const { return now_; }

Stream& HostContext::create_stream(const std::string& name) {
    streams_.push_back(std::make_unique<Stream>(*this, static_cast<int>(streams_.size()), name));
    return *streams_.back();
}

GmAllocation& HostContext::malloc(const std::string& name, std::int64_t bytes) {
    return cluster().chip(rank_).gm.allocate(name, bytes);
}

namespace {
void check_host_copy_target(const char* what, int rank, const GmTensor& t) {
    if (!t.valid() || t.rank() != rank || t.layout() != Layout::ND) {
        throw SimError(fmt::format("rank {}: host {} needs an ND tensor of this rank{}", rank, what,
                                   t.valid() ? ", not " + t.describe() + " of rank " + std::to_string(t.rank()) : ""));
    }
}
}  // namespace

std::shared_ptr<const VectorClock> HostContext::san_release() {
    san_vc_.set(san_key(), san_clock_++);
    return std::make_shared<const VectorClock>(san_vc_);
}

void HostContext::san_access(SanAccess::Kind kind, const GmTensor& t, const char* what) {
    Sanitizer* san = cluster().sanitizer();
    if (san == nullptr) return;
    SanAccess a;
    cluster().coordinator().update([&] {
        a.time = now_;
        a.seq = san_seq_++;
        a.issue_clock = a.epoch = san_clock_;
        a.vc = std::make_shared<const VectorClock>(san_vc_);
    });
    a.thread = san_key();
    a.kind = kind;
    a.alloc = &t.allocation();
    a.offset = t.offset_bytes();
    const std::int64_t es = dtype_bytes(t.dtype());
    const bool nd = t.layout() == Layout::ND;
    a.rows = nd ? t.rows() : t.cols();
    a.row_bytes = std::int64_t{nd ? t.cols() : t.rows()} * es;
    a.ld_bytes = t.ld() * es;
    a.where = fmt::format("rank {} host, {} at {:.3f} us", rank_, what, to_us(a.time));
    san->add_access(std::move(a));
}

void HostContext::copy_device(const GmTensor& dst, const GmTensor& src) {
    check_host_copy_target("copy", rank_, dst);
    check_host_copy_target("copy", rank_, src);
    if (dst.rows() != src.rows() || dst.cols() != src.cols() || dst.dtype() != src.dtype()) {
        throw SimError(fmt::format("rank {}: host copy from {} into {}: shapes or dtypes differ", rank_, src.describe(),
                                   dst.describe()));
    }
    san_access(SanAccess::Kind::Read, src, "host copy (source)");
    san_access(SanAccess::Kind::Write, dst, "host copy (destination)");
    if (!cluster().functional()) return;
    gm_before_read(src.allocation(), GmSpan::of(src));
    gm_before_write(dst.allocation(), GmSpan::of(dst));
    const std::size_t row_bytes = static_cast<std::size_t>(src.cols()) * static_cast<std::size_t>(dtype_bytes(src.dtype()));
    for (int r = 0; r < src.rows(); ++r) std::memmove(dst.element_ptr(r, 0), src.element_ptr(r, 0), row_bytes);
}

void HostContext::zero_device(const GmTensor& dst) {
    check_host_copy_target("clear", rank_, dst);
    san_access(SanAccess::Kind::Write, dst, "host clear");
    if (!cluster().functional()) return;
    gm_before_write(dst.allocation(), GmSpan::of(dst));
    const std::size_t row_bytes = static_cast<std::size_t>(dst.cols()) * static_cast<std::size_t>(dtype_bytes(dst.dtype()));
    for (int r = 0; r < dst.rows(); ++r) std::memset(dst.element_ptr(r, 0), 0, row_bytes);
}

void HostContext::write_signals(std::int64_t address, int count, std::int32_t value) {
    Cluster& c = cluster();
    if (count < 1) throw SimError(fmt::format("rank {}: host signal write of {} words", rank_, count));
    c.chip(rank_).gm.check_signal_word(address);
    c.chip(rank_).gm.check_signal_word(address + 4LL * (count - 1));
    // Quietly: a pending write is nothing any waiting thread's condition reads.
    c.coordinator().update_quietly([&] {
        Message m;
        m.kind = Message::Kind::Signal;
        m.visible_at = now_ + c.cost().host_write_ps;
        m.source = host_source_id(rank_);
        m.seq = message_seq_++;
        m.dst_rank = rank_;
        m.address = address;
        m.op = NotifyOp::Set;
        m.value = value;
        m.count = count;
        if (c.sanitizer()) {
            auto stamp = std::make_shared<SanSignalStamp>();
            stamp->clock = *san_release();
            stamp->thread = san_key();
            stamp->thread_clock = stamp->clock.get(san_key());
            stamp->call = san_call_;
            stamp->by_host = true;
            stamp->where = fmt::format("call {}: rank {} host signal write of {} at {:.3f} us", san_call_, rank_, value,
                                       to_us(now_));
            m.stamp = std::move(stamp);
        }
        c.coordinator().post_locked(std::move(m));
    });
}

void HostContext::barrier(const std::function<void()>& on_release) {
    Coordinator& coord = cluster().coordinator();
    std::uint64_t generation = 0;
    coord.update([&] {
        generation = rt_.barrier_generation_;
        rt_.barrier_max_ = std::max(rt_.barrier_max_, now_);
        coord.set_bound_locked(host_id_, std::nullopt);
        coord.set_acting_locked(host_id_, false);
        if (cluster().sanitizer()) {
            san_vc_.set(san_key(), san_clock_++);  // arriving releases this host's past
            rt_.barrier_vc_.join(san_vc_);
        }
        if (++rt_.barrier_arrived_ == rt_.ranks()) {
            if (on_release) on_release();
            rt_.barrier_released_ = std::move(rt_.barrier_vc_);
            rt_.barrier_vc_ = VectorClock();
            const SimTime release = rt_.barrier_max_ + cluster().cost().host_barrier_ps;
            for (auto& h : rt_.hosts_) {
                h->now_ = release;
                coord.set_bound_locked(h->host_id_, release);
                coord.set_acting_locked(h->host_id_, true);
            }
            rt_.barrier_arrived_ = 0;
            rt_.barrier_max_ = 0;
            ++rt_.barrier_generation_;
        }
    });
    coord.wait([&] {
        if (rt_.barrier_generation_ == generation) return false;
        // Released: every host's past happens before what each does next. (The next barrier
        // cannot release before this host arrives at it, so this is still this one's clock.)
        san_vc_.join(rt_.barrier_released_);
        return true;
    });
    ++san_call_;  // only this host's thread uses it (not in the predicate: others may evaluate that)
}

void HostContext::finish() {
    cluster().coordinator().update([&] {
        cluster().coordinator().set_bound_locked(host_id_, std::nullopt);
        cluster().coordinator().set_acting_locked(host_id_, false);
    });
}

void HostContext::stop_acting() {
    cluster().coordinator().update([&] { cluster().coordinator().set_acting_locked(host_id_, false); });
}

// -------------------------------------------------------------------------------- Runtime --

Runtime::Runtime(const Profile& profile, const ClusterOptions& options) : cluster_(profile, options) {
    for (int r = 0; r < options.ranks; ++r) hosts_.push_back(std::make_unique<HostContext>(*this, r));
}

Runtime::~Runtime() { hosts_.clear(); }

void Runtime::run_hosts(const std::function<void(HostContext&)>& program, AfterProgram after) {
    Coordinator& coord = cluster_.coordinator();
    // Kernels left running by an earlier call (KeepClocks) first run as far as the hosts' clocks
    // let them: the hosts then start acting on the same windows however fast those kernels ran.
    wait_until_parked();
    coord.update([&] {
        for (auto& h : hosts_) {
            coord.set_bound_locked(h->host_id_, h->now_);
            coord.set_acting_locked(h->host_id_, true);
            ++h->san_call_;  // a program is a new call (an API call, say)
        }
    });
    std::vector<std::thread> threads;
    threads.reserve(hosts_.size());
    for (auto& h : hosts_) {
        threads.emplace_back([&coord, &program, after, host = h.get()] {
            try {
                program(*host);
            } catch (const SimAborted&) {
            } catch (const std::exception& e) {
                coord.fail(e.what());
            }
            if (after == AfterProgram::Finish || coord.failed()) host->finish();
            else host->stop_acting();  // its clock keeps bounding the windows
        });
    }
    for (auto& t : threads) t.join();
    if (coord.failed()) throw SimError(coord.error());
}

void Runtime::wait_until_parked() {
    Coordinator& coord = cluster_.coordinator();
    std::vector<int> stream_bounds;
    for (auto& h : hosts_)
        for (auto& s : h->streams_) stream_bounds.push_back(s->bound_id());
    try {
        coord.wait([&] { return coord.parked_locked(stream_bounds); });
    } catch (const SimAborted&) {
        throw SimError(coord.error());
    }
}

}  // namespace tandem
