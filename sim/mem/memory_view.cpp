#include "sim/mem/memory_view.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tandem {

namespace {

// The address range a view spans (rows of a row-major view, columns of a column-major one).
std::int64_t extent_bytes(const GmTensor& g) {
    const std::int64_t es = dtype_bytes(g.dtype());
    const std::int64_t lines = g.layout() == Layout::ND ? g.rows() : g.cols();
    const std::int64_t line = g.layout() == Layout::ND ? g.cols() : g.rows();
    return lines <= 0 || line <= 0 ? 0 : ((lines - 1) * g.ld() + line) * es;
}

std::int64_t rate_over(double bytes, SimTime start, SimTime end) {
    if (end <= start || bytes <= 0) return 0;
    return std::max<std::int64_t>(1, std::llround(bytes * 1.0e12 / static_cast<double>(end - start)));
}

std::int64_t share_of(std::int64_t cap, double part, double whole) {
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(cap) * part / whole));
}

}  // namespace

MemoryView::MemoryView(ChipMemory& own, int rank, int source, std::int64_t l2_bytes_per_s, std::int64_t hbm_bytes_per_s)
    : own_(own),
      rank_(rank),
      source_(source),
      l2_(std::make_unique<BandwidthCalendar>(fmt::format("rank {} L2", rank), l2_bytes_per_s)),
      hbm_(std::make_unique<BandwidthCalendar>(fmt::format("rank {} HBM", rank), hbm_bytes_per_s)) {}

void MemoryView::begin_kernel() {
    l2_ = std::make_unique<BandwidthCalendar>(l2_->name(), l2_->capacity());
    hbm_ = std::make_unique<BandwidthCalendar>(hbm_->name(), hbm_->capacity());
    // Everything still published is looked at again: usage that overlaps this kernel is added
    // as its clock reaches it, and the rest lies in the past.
    next_usage_ = own_.first_index();
}

void MemoryView::forget_before(SimTime horizon) {
    l2_->forget_before(horizon);
    hbm_->forget_before(horizon);
}

void MemoryView::catch_up(SimTime t) {
    next_usage_ = std::max(next_usage_, own_.first_index());
    const std::uint64_t end = own_.end_index();
    while (next_usage_ < end) {
        const PublishedUsage& p = own_.usage_at(next_usage_);
        if (p.published_at > t) break;  // published in publication order: the rest later too
        ++next_usage_;
        if (p.source == source_) continue;  // already in these calendars
        const MemUsage& u = p.usage;
        l2_->add_usage(u.start, u.end, rate_over(u.l2_bytes, u.start, u.end));
        hbm_->add_usage(u.start, u.end, rate_over(u.hbm_bytes, u.start, u.end));
    }
}

MemTraffic& MemoryView::traffic_for(int rank) { return traffic_[rank]; }

void MemoryView::touch(MemTraffic& traffic, std::int64_t region, bool own) {
    if (own) {
        if (!own_touched_.insert(region).second) return;
    } else if (!traffic.touched_regions.empty() && traffic.touched_regions.back() == region) {
        return;
    }
    traffic.touched_regions.push_back(region);
}

double MemoryView::resident_bytes(const ChipMemory& chip, const GmTensor& g, double bytes, SimTime t, bool own) {
    const std::int64_t extent = extent_bytes(g);
    if (extent <= 0 || bytes <= 0) return 0;
    const std::int64_t first = g.address();
    const std::int64_t last = first + extent - 1;
    const std::int64_t rb = chip.region_bytes();
    MemTraffic& traffic = traffic_for(own ? rank_ : g.rank());
    double resident = 0;
    for (std::int64_t r = chip.region_of(first); r <= chip.region_of(last); ++r) {
        const std::int64_t lo = std::max(first, r * rb);
        const std::int64_t hi = std::min(last + 1, (r + 1) * rb);
        const bool hit = chip.residency().resident_at(r, t) || (own && own_touched_.contains(r));
        if (hit) resident += bytes * static_cast<double>(hi - lo) / static_cast<double>(extent);
        touch(traffic, r, own);
    }
    return resident;
}

SimTime MemoryView::book_local(const GmTensor& g, MemAccess access, SimTime issue, SimTime start, double bytes,
                               std::int64_t cap) {
    catch_up(issue);
    SimTime end = start;
    double hbm_bytes = 0;
    if (access == MemAccess::Read) {
        const double hit = resident_bytes(own_, g, bytes, issue, true);
        const double miss = bytes - hit;
        l2_hit_bytes_ += hit;
        hbm_read_bytes_ += miss;
        hbm_bytes = miss;
        if (miss <= 0) {
            BandwidthCalendar* path[] = {l2_.get()};
            end = book_transfer(path, start, bytes, cap);
        } else if (hit <= 0) {
            BandwidthCalendar* path[] = {l2_.get(), hbm_.get()};
            end = book_transfer(path, start, bytes, cap);
        } else {
            // The resident part from the L2 alone, the rest through HBM, each at its share of
            // the core's rate, so that uncontended they end together.
            BandwidthCalendar* from_l2[] = {l2_.get()};
            BandwidthCalendar* from_hbm[] = {l2_.get(), hbm_.get()};
            end = std::max(book_transfer(from_l2, start, hit, share_of(cap, hit, bytes)),
                           book_transfer(from_hbm, start, miss, share_of(cap, miss, bytes)));
        }
    } else {
        // Written into the L2 (a region written is resident); an atomic add reads and writes it
        // there. The write-back to HBM follows on its own: it takes HBM bandwidth, not the store's.
        resident_bytes(own_, g, bytes, issue, true);
        const int passes = access == MemAccess::AtomicAdd ? 2 : 1;
        BandwidthCalendar* path[] = {l2_.get()};
        end = book_transfer(path, start, passes * bytes, passes * cap);
        hbm_bytes = bytes;
        hbm_->add_usage(start, end, rate_over(bytes, start, end));
    }
    const double l2_bytes = access == MemAccess::AtomicAdd ? 2 * bytes : bytes;
    if (end > start) traffic_for(rank_).usage.push_back(MemUsage{start, end, l2_bytes, hbm_bytes});
    return end;
}

void MemoryView::note_remote(ChipMemory& peer, const GmTensor& g, MemAccess access, SimTime issue, SimTime start,
                             SimTime end, double bytes) {
    if (end <= start || bytes <= 0) return;
    const double resident = resident_bytes(peer, g, bytes, issue, false);
    MemUsage u{start, end, access == MemAccess::AtomicAdd ? 2 * bytes : bytes,
               access == MemAccess::Read ? bytes - resident : bytes};
    traffic_for(g.rank()).usage.push_back(u);
}

std::map<int, MemTraffic> MemoryView::take_traffic() {
    own_touched_.clear();
    std::map<int, MemTraffic> out;
    out.swap(traffic_);
    return out;
}

}  // namespace tandem
