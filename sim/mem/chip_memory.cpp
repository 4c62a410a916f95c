#include "sim/mem/chip_memory.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "sim/burst_room.hpp"
#include "sim/mem/memory_view.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

L2Residency::L2Residency(std::int64_t capacity_regions) : capacity_(capacity_regions) {
    if (capacity_ < 1) throw SimError("the L2 must hold at least one region (check chip.l2_bytes and chip.l2_region_bytes)");
}

L2Residency::Region& L2Residency::region(std::int64_t id) {
    if (id < 0) throw SimError("L2 residency: negative region " + std::to_string(id));
    const auto index = static_cast<std::size_t>(id);
    if (index >= regions_.size()) regions_.resize(index + 1);
    return regions_[index];
}

void L2Residency::unlink(std::int64_t id, Region& r) {
    if (r.prev >= 0) regions_[static_cast<std::size_t>(r.prev)].next = r.next;
    else head_ = r.next;
    if (r.next >= 0) regions_[static_cast<std::size_t>(r.next)].prev = r.prev;
    else tail_ = r.prev;
    r.prev = r.next = -1;
    (void)id;
}

void L2Residency::push_front(std::int64_t id, Region& r) {
    r.prev = -1;
    r.next = head_;
    if (head_ >= 0) regions_[static_cast<std::size_t>(head_)].prev = id;
    head_ = id;
    if (tail_ < 0) tail_ = id;
}

void L2Residency::touch(std::int64_t id, const RegionPart& part, SimTime at) {
    Region& r = region(id);
    const bool resident = !r.intervals.empty() && r.intervals.back().second == kNever;
    if (resident) {
        if (!r.whole) r.whole = part.add_to(r.cells);
        if (head_ == id) return;
        unlink(id, r);
        push_front(id, r);
        return;
    }
    if (!r.touched) {
        r.touched = true;
        ++regions_touched_;
    }
    r.intervals.emplace_back(at, kNever);
    r.resident_since = at;
    r.cells = RegionCells{};
    r.whole = part.add_to(r.cells);
    push_front(id, r);
    if (++resident_ <= capacity_) return;
    // Least recently used out (it has an entry: nothing below grows regions_).
    const std::int64_t victim = tail_;
    Region& v = regions_[static_cast<std::size_t>(victim)];
    unlink(victim, v);
    if (v.intervals.back().first == at) {
        // In and out at the same instant (a window's touches of more regions than the L2 holds,
        // all published at its end): no time t lies in [at, at), and the interval before it ended
        // by `at`, so resident_cells() answers the same without it.
        v.intervals.pop_back();
    } else {
        v.intervals.back().second = at;
        ++closed_intervals_;
    }
    v.resident_since = kNever;
    v.cells = RegionCells{};
    v.whole = false;
    --resident_;
}

CellsView L2Residency::resident_cells(std::int64_t id, SimTime t) const {
    static const RegionCells kNone{};
    static const RegionCells kAll = all_cells();
    if (id < 0 || static_cast<std::size_t>(id) >= regions_.size()) return CellsView{&kNone, false};
    const Region& r = regions_[static_cast<std::size_t>(id)];
    if (t >= r.resident_since) return CellsView{&r.cells, r.whole};  // the usual case: in since before t, and still in
    // Otherwise one of the closed intervals, the latest first; a few at most.
    const auto& iv = r.intervals;
    for (auto i = iv.rbegin(); i != iv.rend(); ++i) {
        if (i->first <= t) return t < i->second ? CellsView{&kAll, true} : CellsView{&kNone, false};
    }
    return CellsView{&kNone, false};
}

void L2Residency::forget_before(SimTime horizon) {
    // Closed intervals that ended before the horizon are history. Only evictions close them, and
    // most runs never evict: the regions are visited once as many intervals have closed as there
    // are regions, so that applying a horizon costs O(1) on average.
    if (closed_intervals_ < regions_touched_ + 64) return;
    closed_intervals_ = 0;
    for (Region& r : regions_) {
        auto& iv = r.intervals;
        if (iv.size() < 2) continue;
        auto keep = std::find_if(iv.begin(), iv.end(), [&](const auto& p) { return p.second >= horizon; });
        iv.erase(iv.begin(), keep);
        release_burst_room(iv);  // sim/burst_room.hpp
    }
}

ChipMemory::ChipMemory(std::int64_t l2_bytes, std::int64_t region_bytes)
    : region_bytes_(region_bytes), residency_(region_bytes > 0 ? l2_bytes / region_bytes : 0) {
    if (region_bytes <= 0) throw SimError("chip.l2_region_bytes must be positive");
    if (std::has_single_bit(static_cast<std::uint64_t>(region_bytes))) {
        region_shift_ = std::countr_zero(static_cast<std::uint64_t>(region_bytes));
    }
}

void ChipMemory::deliver(std::shared_ptr<const MemTraffic> traffic, SimTime at, int source) {
    if (!traffic) return;
    queued_.push_back(Delivery{std::move(traffic), at, source});
    queue_to_apply_.mark_pending();
}

void ChipMemory::forget_before(SimTime horizon) {
    queued_horizon_ = std::max(queued_horizon_, horizon);
    queue_to_apply_.mark_pending();
}

void ChipMemory::sync() {
    queue_to_apply_.run_if_pending([this] {
        for (const Delivery& d : queued_) apply(d);
        queued_.clear();  // frees the traffic here, in a window, not at the barrier
        if (queued_horizon_ >= 0) settle_and_forget(queued_horizon_);
        queued_horizon_ = -1;
    });
}

void ChipMemory::apply(const Delivery& d) {
    for (const RegionTouch& t : d.traffic->touched_regions) residency_.touch(t.region(), t.part(), d.at);
    const std::vector<MemUsage>& usage = d.traffic->usage;
    if (usage.empty()) return;
    publications_.push_back(Publication{end_index(), d.at, d.source});
    recent_.insert(recent_.end(), usage.begin(), usage.end());
}

void ChipMemory::settle_and_forget(SimTime horizon) {
    // History is forgotten once per bin of time, not at every barrier (there are far more).
    const std::int64_t bin = horizon / kMemUsageBinPs;
    const bool forget = bin > forgotten_bin_;
    if (recent_.empty() && !forget) return;
    {
        // The records published by the horizon that every running stream has looked at go into
        // the total. (A stream looks at the records itself, in its windows, in parallel.)
        std::lock_guard lock(views_mu_);  // a stream may be attaching
        // Published by the horizon: a prefix, which only grows (records arrive in publication
        // order and horizons only grow). Kept rather than searched: while a stream sleeps through
        // windows in a kernel (a parked comm block), nothing settles and the records pile up.
        // A delivery's records share their publication time: whole deliveries at a time.
        if (published_end_ < end_index()) {
            auto p = std::prev(std::upper_bound(publications_.begin(), publications_.end(), published_end_,
                                                [](std::uint64_t i, const Publication& q) { return i < q.begin; }));
            for (; p != publications_.end() && p->published_at <= horizon; ++p) {
                const auto next = std::next(p);
                published_end_ = next == publications_.end() ? end_index() : next->begin;
            }
        }
        std::uint64_t settle_end = published_end_;
        for (const MemoryView* view : views_) {
            if (view->running()) settle_end = std::min(settle_end, view->next_record());
        }
        for (; first_index_ < settle_end; ++first_index_) {
            settled_.add(recent_.front());
            recent_.pop_front();
        }
        // Deliveries whose records have all settled.
        while (publications_.size() > 1 && publications_[1].begin <= first_index_) publications_.pop_front();
        if (recent_.empty()) publications_.clear();
    }
    if (!forget) return;
    forgotten_bin_ = bin;
    residency_.forget_before(horizon);
    settled_.forget_before(horizon);
}

void ChipMemory::attach(MemoryView& view) {
    std::lock_guard lock(views_mu_);
    views_.push_back(&view);
}

void ChipMemory::detach(MemoryView& view) {
    std::lock_guard lock(views_mu_);
    std::erase(views_, &view);
}

}  // namespace tandem
