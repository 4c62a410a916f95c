#include "sim/mem/usage_runs.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "sim/sim_error.hpp"

namespace tandem {

namespace {

// Appends bins [first, end) each holding (l2, hbm) bytes as one run, or extends out's last run.
void append_run(std::vector<MemUsage>& out, std::int64_t first, std::int64_t end, double l2, double hbm) {
    if (!out.empty()) {
        MemUsage& last = out.back();
        if (last.per_bin && last.end == first * kMemUsageBinPs && last.l2_bytes == l2 && last.hbm_bytes == hbm) {
            last.end = end * kMemUsageBinPs;
            return;
        }
    }
    out.push_back(MemUsage{first * kMemUsageBinPs, end * kMemUsageBinPs, l2, hbm, true});
}

// What `bytes` of a usage over [start, end) adds to bin `bin`, which lies in [first, last], the
// bins of start and end - 1: BinnedUsage::add_over's arithmetic (add_spread's shares, the whole
// bytes for a usage within one bin); 0 where it adds nothing (a bin takes only positive bytes).
double share_in_bin(SimTime start, SimTime end, std::int64_t first, std::int64_t last, double bytes, std::int64_t bin) {
    if (bytes <= 0) return 0.0;
    if (first == last) return bytes;
    const double span = static_cast<double>(end - start);
    double share;
    if (bin == first) {
        share = bytes * static_cast<double>(std::min(end, (first + 1) * kMemUsageBinPs) - start) / span;
    } else if (bin == last) {
        share = bytes * static_cast<double>(end - last * kMemUsageBinPs) / span;
    } else {
        share = bytes * static_cast<double>(kMemUsageBinPs) / span;
    }
    return share > 0 ? share : 0.0;
}

}  // namespace

void append_bin_runs(UsageBins& bins, std::vector<MemUsage>& out) {
    if (bins.l2.empty() && bins.hbm.empty()) return;
    const std::int64_t first = bins.l2.empty()    ? bins.hbm.first_bin()
                               : bins.hbm.empty() ? bins.l2.first_bin()
                                                  : std::min(bins.l2.first_bin(), bins.hbm.first_bin());
    const std::int64_t end = std::max(bins.l2.end_bin(), bins.hbm.end_bin());
    // Walks the pages that hold bins, not the gaps between (usage booked far ahead may lie far
    // apart in one window: a block's scalar issues long before its pipes run).
    const auto next_in = [](const BinnedUsage& u, std::int64_t b) {
        const std::int64_t n = u.next_kept_bin(b);
        return n < u.end_bin() ? n : std::numeric_limits<std::int64_t>::max();
    };
    const auto next_kept = [&](std::int64_t b) { return std::min(next_in(bins.l2, b), next_in(bins.hbm, b)); };
    for (std::int64_t b = next_kept(first); b < end; b = next_kept(b + 1)) {
        const double l2 = bins.l2.bytes_in(b);
        const double hbm = bins.hbm.bytes_in(b);
        if (l2 > 0 || hbm > 0) append_run(out, b, b + 1, l2, hbm);
    }
    bins.clear();
}

void usages_to_runs(std::vector<MemUsage>& usages, UsageRunsScratch& scratch) {
    const std::size_t count = usages.size();
    if (count == 0) return;
    if (count > std::numeric_limits<std::uint32_t>::max()) throw SimError("usages_to_runs: more than 2^32 usages in a window");
    // Each usage's first and last bins, worked out once (a division each), and every bin boundary
    // where some usage's share may change: its first bin, the bin after it, its last bin and the
    // bin after that.
    std::vector<std::int64_t>& first_bin = scratch.first_bin;
    std::vector<std::int64_t>& last_bin = scratch.last_bin;
    std::vector<std::int64_t>& bounds = scratch.bounds;
    first_bin.assign(count, 0);
    last_bin.assign(count, -1);  // an empty usage covers no bin
    bounds.clear();
    for (std::size_t i = 0; i < count; ++i) {
        const MemUsage& u = usages[i];
        if (u.end <= u.start) continue;
        const std::int64_t first = u.start / kMemUsageBinPs;
        const std::int64_t last = (u.end - 1) / kMemUsageBinPs;
        first_bin[i] = first;
        last_bin[i] = last;
        bounds.push_back(first);
        bounds.push_back(first + 1);
        if (last > first) {
            bounds.push_back(last);
            bounds.push_back(last + 1);
        }
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    const std::size_t n = bounds.size();
    // Which usages cover each stretch, one bit per usage: a usage joins at the stretch that
    // begins at its first bin and leaves at the one that begins after its last. The events are
    // put in stretch order (a counting sort), and the sums below take the covering usages in
    // their order, as a walk over all of them skipping the others would: the same sums, added in
    // the same order, as adding every usage bin by bin.
    std::vector<std::uint32_t>& event_start = scratch.event_start;  // per stretch, into `events`
    std::vector<std::uint32_t>& events = scratch.events;            // usage index, toggled
    event_start.assign(n + 1, 0);
    const auto stretch_of = [&](std::int64_t bin) {
        return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), bin) - bounds.begin());
    };
    // Each usage's join and leave stretches, looked up once.
    std::vector<std::uint32_t>& stretch_at = scratch.stretch_at;  // per usage: join, leave
    stretch_at.assign(2 * count, 0);
    for (std::size_t i = 0; i < count; ++i) {
        if (last_bin[i] < first_bin[i]) continue;
        stretch_at[2 * i] = static_cast<std::uint32_t>(stretch_of(first_bin[i]));
        stretch_at[2 * i + 1] = static_cast<std::uint32_t>(stretch_of(last_bin[i] + 1));
        ++event_start[stretch_at[2 * i] + 1];
        ++event_start[stretch_at[2 * i + 1] + 1];
    }
    for (std::size_t s = 0; s < n; ++s) event_start[s + 1] += event_start[s];
    events.assign(event_start[n], 0);
    {
        std::vector<std::uint32_t>& fill = scratch.fill;
        fill.assign(event_start.begin(), event_start.end() - 1);
        for (std::size_t i = 0; i < count; ++i) {
            if (last_bin[i] < first_bin[i]) continue;
            events[fill[stretch_at[2 * i]]++] = static_cast<std::uint32_t>(i);
            events[fill[stretch_at[2 * i + 1]]++] = static_cast<std::uint32_t>(i);
        }
    }
    // What each usage adds to its first, a middle and its last bin (share_in_bin's three cases),
    // worked out once for all the stretches it covers.
    std::vector<double>& shares = scratch.shares;  // per usage: L2 first, middle, last; HBM the same
    shares.assign(6 * count, 0.0);
    for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t first = first_bin[i];
        const std::int64_t last = last_bin[i];
        if (last < first) continue;
        const MemUsage& u = usages[i];
        const std::int64_t middle = first + 1 < last ? first + 1 : first;  // any bin strictly inside, or none
        double* mine = &shares[6 * i];
        for (int which = 0; which < 2; ++which) {
            const double bytes = which == 0 ? u.l2_bytes : u.hbm_bytes;
            mine[3 * which + 0] = share_in_bin(u.start, u.end, first, last, bytes, first);
            mine[3 * which + 1] = share_in_bin(u.start, u.end, first, last, bytes, middle);
            mine[3 * which + 2] = share_in_bin(u.start, u.end, first, last, bytes, last);
        }
    }
    std::vector<std::uint64_t>& covering = scratch.covering;
    covering.assign((count + 63) / 64, 0);
    // The runs go after the usages (no more than the stretches: room made first, so the usages
    // stay where they are), then the usages are dropped from the front.
    usages.reserve(count + n);
    for (std::size_t s = 0; s + 1 < n; ++s) {
        for (std::uint32_t e = event_start[s]; e < event_start[s + 1]; ++e) {
            covering[events[e] / 64] ^= std::uint64_t{1} << (events[e] % 64);  // joins or leaves
        }
        const std::int64_t bin = bounds[s];  // every bin of [bin, bounds[s + 1]) holds the same
        double l2 = 0;
        double hbm = 0;
        for (std::size_t w = 0; w < covering.size(); ++w) {
            for (std::uint64_t m = covering[w]; m != 0; m &= m - 1) {
                const std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(m));
                const int which = bin == first_bin[i] ? 0 : (bin == last_bin[i] ? 2 : 1);
                l2 += shares[6 * i + static_cast<std::size_t>(which)];
                hbm += shares[6 * i + 3 + static_cast<std::size_t>(which)];
            }
        }
        if (!(l2 > 0 || hbm > 0)) continue;
        if (usages.size() == count) {
            usages.push_back(MemUsage{bin * kMemUsageBinPs, bounds[s + 1] * kMemUsageBinPs, l2, hbm, true});
        } else {
            append_run(usages, bin, bounds[s + 1], l2, hbm);
        }
    }
    usages.erase(usages.begin(), usages.begin() + static_cast<std::ptrdiff_t>(count));
}

}  // namespace tandem
