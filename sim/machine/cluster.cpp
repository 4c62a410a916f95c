#include "sim/machine/cluster.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "sim/host_threads.hpp"
#include "sim/isa/deferred_drain.hpp"
#include "sim/mem/element.hpp"
#include "sim/mem/fp16_widen.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {
int resolved_host_threads(int asked) {
    if (asked < 0) throw SimError(fmt::format("host threads: {} asked, need at least 1 (or 0: one per host core)", asked));
    return asked > 0 ? asked : host_core_count();
}

// The smallest latency of any cross-stream effect, a route's included (a die's package link
// may be quicker than a switch hop).
SimTime lookahead(const CostModel& cost, const Topology& topology) {
    const SimTime route = topology.min_route_latency_ps();
    const SimTime others = cost.min_cross_stream_latency();
    return route > 0 ? std::max<SimTime>(1, std::min(route, others)) : others;
}
}  // namespace

Cluster::Cluster(const Profile& profile, const ClusterOptions& options)
    : profile_(profile),
      options_(options),
      host_threads_(resolved_host_threads(options.host_threads)),
      cost_(profile),
      topology_(profile.interconnect, options.ranks),
      coordinator_(lookahead(cost_, topology_), *this, host_threads_),
      workers_(host_threads_) {
    link_hubs_.resize(static_cast<std::size_t>(topology_.link_count()));
    if (options.ranks < 1) throw SimError(fmt::format("a cluster needs at least 1 rank, got {}", options.ranks));
    chips_.reserve(static_cast<std::size_t>(options.ranks));
    for (int r = 0; r < options.ranks; ++r) {
        chips_.push_back(std::make_unique<Chip>(r, profile_, functional()));
        Chip& c = *chips_.back();
        chip_parts_.push_back(ChipParts{&c.gm, &c.memory, &c.signals, &c.ports});
    }
    set_sanitizing(options.sanitize);
}

void Cluster::set_sanitizing(bool on) {
    if (on && !sanitizer_) {
        std::vector<const GlobalMemory*> memories;
        for (const auto& chip : chips_) memories.push_back(&chip->gm);
        sanitizer_ = std::make_unique<Sanitizer>(std::move(memories));
    }
    sanitizing_ = on ? sanitizer_.get() : nullptr;
}

void Cluster::complete_deferred_writes(const std::vector<std::shared_ptr<PendingGmWrite>>& writes) {
    tandem::complete_deferred_writes(writes, workers_);
}

LinkHub& Cluster::link_hub(int link) {
    topology_.link(link);  // throws for an id out of range
    std::lock_guard lock(hubs_mu_);
    return hub_locked(link);
}

LinkHub& Cluster::hub_locked(int link) {
    auto& hub = link_hubs_.at(static_cast<std::size_t>(link));
    if (!hub) hub = std::make_unique<LinkHub>(&horizon_);
    return *hub;
}

void Cluster::deliver(const Message& m, std::uint64_t order) {
    if (m.kind == Message::Kind::LinkTraffic) {
        const std::shared_ptr<const LinkTraffic> traffic = m.link_traffic();
        if (!traffic) return;
        std::lock_guard lock(hubs_mu_);
        for (const LinkTraffic::Records& r : traffic->links) hub_locked(r.link).deliver(traffic, r, m.source, horizon_.load(std::memory_order_relaxed));
        return;
    }
    Chip& dst = chip(m.dst_rank);
    if (m.kind == Message::Kind::MemTraffic) {
        dst.memory.deliver(m.traffic(), m.visible_at, m.source);
        return;
    }
    if (m.kind == Message::Kind::PortTraffic) {
        if (const std::shared_ptr<const PortTraffic> holds = m.port_traffic()) {
            for (const PortHold& h : holds->holds) dst.ports.add(m.source, h);
        }
        return;
    }
    if (m.kind == Message::Kind::Signal) {
        for (int i = 0; i < m.count; ++i)
            dst.signals.insert(m.address + 4LL * i, SignalStore::Op{m.visible_at, order, m.op, m.value, m.stamp});
        return;
    }
    if (m.payload.empty() || m.dst_alloc == nullptr || m.dst_alloc->data.empty()) return;
    gm_before_write(*m.dst_alloc, GmSpan{m.dst_offset, m.rows, m.row_bytes, m.ld_bytes});
    if (m.kind == Message::Kind::AtomicAdd) {
        add_elements(m);
        return;
    }
    for (int r = 0; r < m.rows; ++r) {
        std::memcpy(m.dst_alloc->data.data() + m.dst_offset + r * m.ld_bytes, m.payload.data() + r * m.row_bytes,
                    static_cast<std::size_t>(m.row_bytes));
    }
}

void Cluster::add_elements(const Message& m) {
    // float holds the exact sum of two fp16 or bf16 values, and float addition rounds an fp32
    // sum correctly: storing the float sum rounds it once to the element's dtype.
    if (m.dtype == DType::F16 || m.dtype == DType::BF16) {
        // The same, vectorised: widening is exact and narrowing rounds like store_from_float.
        constexpr std::int64_t kChunk = 512;
        float dst_f[kChunk];
        float add_f[kChunk];
        const std::int64_t n = m.row_bytes / 2;
        for (int r = 0; r < m.rows; ++r) {
            auto* row = reinterpret_cast<std::uint16_t*>(m.dst_alloc->data.data() + m.dst_offset + r * m.ld_bytes);
            const auto* add = reinterpret_cast<const std::uint16_t*>(m.payload.data() + r * m.row_bytes);
            for (std::int64_t i0 = 0; i0 < n; i0 += kChunk) {
                const std::size_t len = static_cast<std::size_t>(std::min(kChunk, n - i0));
                widen_16bit(m.dtype, row + i0, dst_f, len);
                widen_16bit(m.dtype, add + i0, add_f, len);
                for (std::size_t i = 0; i < len; ++i) dst_f[i] += add_f[i];
                narrow_16bit(m.dtype, dst_f, row + i0, len);
            }
        }
        return;
    }
    dispatch_float_dtype(m.dtype, [&]<DType T>() {
        const std::int64_t es = dtype_bytes(T);
        const std::int64_t n = m.row_bytes / es;
        for (int r = 0; r < m.rows; ++r) {
            std::byte* row = m.dst_alloc->data.data() + m.dst_offset + r * m.ld_bytes;
            const std::byte* add = m.payload.data() + r * m.row_bytes;
            for (std::int64_t i = 0; i < n; ++i)
                store_from_float<T>(row + i * es, load_as_float<T>(row + i * es) + load_as_float<T>(add + i * es));
        }
    });
}

void Cluster::fold_before(SimTime horizon) {
    const bool forget_ports = barriers_to_port_forget_-- == 0;
    if (forget_ports) barriers_to_port_forget_ = kPortForgetBarriers - 1;
    for (auto& c : chips_) {
        c->signals.fold_before(horizon);
        c->memory.forget_before(horizon);
        // No stream issues a load before the horizon again, and each looks back one sample.
        if (forget_ports && !c->ports.empty()) c->ports.forget_ending_before(horizon - cost_.cluster_port_sample_ps);
    }
    // The links' hubs forget when usage is delivered to them (LinkHub::deliver, at horizon_), and
    // here, a few links per barrier in turn.
    horizon_.store(horizon, std::memory_order_release);
    constexpr std::size_t kLinksVisitedPerBarrier = 32;
    std::lock_guard lock(hubs_mu_);
    for (std::size_t i = 0; i < std::min(kLinksVisitedPerBarrier, link_hubs_.size()); ++i) {
        if (next_hub_to_forget_ >= link_hubs_.size()) next_hub_to_forget_ = 0;
        if (auto& hub = link_hubs_[next_hub_to_forget_++]) hub->forget_before(horizon);
    }
}

void Cluster::set_logging(bool on, std::vector<int> ranks) {
    options_.record_log = on;
    options_.log_ranks = on ? std::move(ranks) : std::vector<int>{};
}

bool Cluster::record_instructions_of(int rank) const {
    if (!options_.record_log) return false;
    const std::vector<int>& kept = options_.log_ranks;
    return kept.empty() || std::find(kept.begin(), kept.end(), rank) != kept.end();
}

void Cluster::append_log(std::vector<InstrRecord>&& records) {
    std::lock_guard lock(log_mu_);
    logs_.push_back(std::move(records));
}

std::vector<InstrRecord> Cluster::event_log() const {
    std::lock_guard lock(log_mu_);
    std::vector<InstrRecord> all;
    for (const auto& l : logs_) all.insert(all.end(), l.begin(), l.end());
    std::sort(all.begin(), all.end(), record_order);
    return all;
}

void Cluster::append_link_usage(int link, LinkSteps&& steps) {
    std::lock_guard lock(log_mu_);
    link_usage_.emplace_back(link, std::move(steps));
}

std::map<int, LinkSteps> Cluster::link_usage() const {
    std::lock_guard lock(log_mu_);
    // Sum the step functions of every stream that booked a link: as rate changes at each
    // breakpoint, added in time order (integer arithmetic, so the order of streams is irrelevant).
    std::map<int, std::map<SimTime, std::int64_t>> deltas;
    for (const auto& [link, steps] : link_usage_) {
        std::int64_t previous = 0;
        for (const auto& [t, rate] : steps) {
            deltas[link][t] += rate - previous;
            previous = rate;
        }
    }
    std::map<int, LinkSteps> out;
    for (const auto& [link, changes] : deltas) {
        std::int64_t level = 0;
        for (const auto& [t, delta] : changes) {
            level += delta;
            out[link].emplace_back(t, level);
        }
    }
    return out;
}

void Cluster::append_memory_usage(int rank, std::vector<MemBinBytes>&& bins) {
    std::lock_guard lock(log_mu_);
    memory_usage_.emplace_back(rank, std::move(bins));
}

std::map<int, std::vector<MemBinBytes>> Cluster::memory_usage() const {
    std::lock_guard lock(log_mu_);
    // Whole bytes, so the sums do not depend on the order the streams handed theirs in.
    std::map<int, std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>>> sums;
    for (const auto& [rank, bins] : memory_usage_) {
        for (const MemBinBytes& b : bins) {
            auto& s = sums[rank][b.bin];
            s.first += b.l2_bytes;
            s.second += b.hbm_bytes;
        }
    }
    std::map<int, std::vector<MemBinBytes>> out;
    for (const auto& [rank, bins] : sums) {
        for (const auto& [bin, bytes] : bins) out[rank].push_back(MemBinBytes{bin, bytes.first, bytes.second});
    }
    return out;
}

void Cluster::clear_log() {
    std::lock_guard lock(log_mu_);
    logs_.clear();
    link_usage_.clear();
    memory_usage_.clear();
}

}  // namespace tandem
