#include "sim/mem/usage_runs.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>

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

// Past this many usages the stretches (up to 4 per usage, each summing over every usage) cost
// more than the bins.
constexpr std::size_t kMaxUsagesForStretches = 48;

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

void usages_to_runs(std::vector<MemUsage>& usages, UsageBins& bins_for_many) {
    const std::size_t count = usages.size();
    if (count == 0) return;
    if (count > kMaxUsagesForStretches) {
        for (const MemUsage& u : usages) bins_for_many.add(u);
        usages.clear();
        append_bin_runs(bins_for_many, usages);
        return;
    }
    // Each usage's first and last bins, worked out once (a division each).
    std::array<std::int64_t, kMaxUsagesForStretches> first_bin;
    std::array<std::int64_t, kMaxUsagesForStretches> last_bin;
    // Every bin boundary where some usage's share may change: its first bin, the bin after it,
    // its last bin and the bin after that.
    std::array<std::int64_t, 4 * kMaxUsagesForStretches> bounds;
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const MemUsage& u = usages[i];
        if (u.end <= u.start) continue;
        const std::int64_t first = u.start / kMemUsageBinPs;
        const std::int64_t last = (u.end - 1) / kMemUsageBinPs;
        first_bin[i] = first;
        last_bin[i] = last;
        bounds[n++] = first;
        bounds[n++] = first + 1;
        if (last > first) {
            bounds[n++] = last;
            bounds[n++] = last + 1;
        }
    }
    std::sort(bounds.begin(), bounds.begin() + static_cast<std::ptrdiff_t>(n));
    n = static_cast<std::size_t>(std::unique(bounds.begin(), bounds.begin() + static_cast<std::ptrdiff_t>(n)) - bounds.begin());
    // Which usages cover each stretch, one bit per usage: a usage joins at the stretch that begins
    // at its first bin and leaves at the one that begins after its last. The sums below take the
    // covering usages in their order, as a walk over all of them skipping the others would.
    static_assert(kMaxUsagesForStretches <= 64, "one bit per usage");
    std::array<std::uint64_t, 4 * kMaxUsagesForStretches> joins{};
    std::array<std::uint64_t, 4 * kMaxUsagesForStretches> leaves{};
    const auto stretch_of = [&](std::int64_t bin) {
        return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.begin() + static_cast<std::ptrdiff_t>(n), bin) -
                                        bounds.begin());
    };
    for (std::size_t i = 0; i < count; ++i) {
        if (usages[i].end <= usages[i].start) continue;
        joins[stretch_of(first_bin[i])] |= std::uint64_t{1} << i;
        leaves[stretch_of(last_bin[i] + 1)] |= std::uint64_t{1} << i;
    }
    // The runs go after the usages (no more than the stretches: room made first, so the usages
    // stay where they are), then the usages are dropped from the front.
    usages.reserve(count + n);
    std::uint64_t covering = 0;
    for (std::size_t s = 0; s + 1 < n; ++s) {
        covering = (covering | joins[s]) & ~leaves[s];
        const std::int64_t bin = bounds[s];  // every bin of [bin, bounds[s + 1]) holds the same
        double l2 = 0;
        double hbm = 0;
        for (std::uint64_t m = covering; m != 0; m &= m - 1) {
            const auto i = static_cast<std::size_t>(std::countr_zero(m));
            const MemUsage& u = usages[i];
            l2 += share_in_bin(u.start, u.end, first_bin[i], last_bin[i], u.l2_bytes, bin);
            hbm += share_in_bin(u.start, u.end, first_bin[i], last_bin[i], u.hbm_bytes, bin);
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
