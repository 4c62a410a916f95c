#include "sim/net/breakpoint_list.hpp"

#include <algorithm>
#include <limits>

#include "sim/sim_error.hpp"

namespace tandem {

bool BreakpointList::find_last_at_or_before(SimTime t, Pos& p) const {
    if (size_ == 0 || t < first_[head_]) return false;
    const std::size_t j = leaf_for(t);
    const std::vector<StoredBreakpoint>& leaf = leaves_[j];
    const auto after = std::upper_bound(leaf.begin(), leaf.end(), t, [](SimTime v, const StoredBreakpoint& b) { return v < b.t; });
    p = Pos{j, static_cast<std::size_t>(after - leaf.begin()) - 1};
    return true;
}

// The last leaf whose first time is <= t (first_[head_] <= t). The breakpoints of a calendar are
// spread fairly evenly over time, so a guess by linear interpolation lands close; a galloping
// search from there brackets the answer, and a binary search inside the bracket finds it.
std::size_t BreakpointList::leaf_for(SimTime t) const {
    std::size_t lo = head_;
    std::size_t hi = first_.size() - 1;
    if (first_[hi] <= t) return hi;
    // Now first_[lo] <= t < first_[hi]: the answer is in [lo, hi).
    if (hi - lo > 16) {
        const double fraction = static_cast<double>(t - first_[lo]) / static_cast<double>(first_[hi] - first_[lo]);
        std::size_t g = lo + static_cast<std::size_t>(fraction * static_cast<double>(hi - lo));
        g = std::min(g, hi - 1);
        std::size_t step = 1;
        if (first_[g] <= t) {
            while (g + step < hi && first_[g + step] <= t) {
                g += step;
                step *= 2;
            }
            lo = g;
            hi = std::min(hi, g + step);
        } else {
            while (g - lo > step && first_[g - step] > t) {
                g -= step;
                step *= 2;
            }
            if (g - lo > step) lo = g - step;
            hi = g;
        }
    }
    const auto it = std::upper_bound(first_.begin() + static_cast<std::ptrdiff_t>(lo),
                                     first_.begin() + static_cast<std::ptrdiff_t>(hi), t);
    return static_cast<std::size_t>(it - first_.begin()) - 1;
}

void BreakpointList::replace(Pos p, std::size_t count, std::span<const Breakpoint> entries) {
    const std::size_t n = entries.size();
    if (is_end(p)) {  // count is 0: an append
        if (n == 0) return;
        if (head_ == leaves_.size()) {
            leaves_.emplace_back();
            first_.push_back(0);
        }
        std::vector<StoredBreakpoint>& last = leaves_.back();
        const std::size_t old_size = last.size();
        last.resize(old_size + n);
        encode_into(last, old_size, entries);
        size_ += n;
        fix_leaves(leaves_.size() - 1, leaves_.size());
        return;
    }
    const std::size_t j = p.leaf;
    std::vector<StoredBreakpoint>& leaf = leaves_[j];
    const auto at = leaf.begin() + static_cast<std::ptrdiff_t>(p.i);
    if (p.i + count <= leaf.size()) {  // the usual case: inside one leaf
        if (n > count) {
            leaf.insert(at + static_cast<std::ptrdiff_t>(count), n - count, StoredBreakpoint{});
        } else if (n < count) {
            leaf.erase(at + static_cast<std::ptrdiff_t>(n), at + static_cast<std::ptrdiff_t>(count));
        }
        encode_into(leaf, p.i, entries);
        size_ = size_ + n - count;
        fix_leaves(j, j + 1);
        return;
    }
    // Across leaves: erase leaf by leaf, then put the new entries where the first one was.
    std::size_t remaining = count;
    std::size_t k = j;
    std::size_t from = p.i;
    while (remaining > 0) {
        std::vector<StoredBreakpoint>& l = leaves_[k];
        const std::size_t take = std::min(remaining, l.size() - from);
        l.erase(l.begin() + static_cast<std::ptrdiff_t>(from), l.begin() + static_cast<std::ptrdiff_t>(from + take));
        remaining -= take;
        size_ -= take;
        ++k;
        from = 0;
    }
    leaves_[j].insert(leaves_[j].begin() + static_cast<std::ptrdiff_t>(p.i), n, StoredBreakpoint{});
    encode_into(leaves_[j], p.i, entries);
    size_ += n;
    fix_leaves(j, k);
}

void BreakpointList::erase_before(Pos p, bool including) {
    for (std::size_t k = head_; k < p.leaf; ++k) {
        size_ -= leaves_[k].size();
        std::vector<StoredBreakpoint>().swap(leaves_[k]);
    }
    head_ = p.leaf;
    std::vector<StoredBreakpoint>& leaf = leaves_[p.leaf];
    const std::size_t n = p.i + (including ? 1 : 0);
    leaf.erase(leaf.begin(), leaf.begin() + static_cast<std::ptrdiff_t>(n));
    size_ -= n;
    fix_leaves(p.leaf, p.leaf + 1);
}

// Restores the invariants on leaves [first, last) after a change: no empty leaf, none above
// kLeafMax, first_ up to date.
void BreakpointList::fix_leaves(std::size_t first, std::size_t last) {
    std::size_t j = first;
    while (j < last) {
        if (leaves_[j].empty()) {
            if (j == head_) {
                std::vector<StoredBreakpoint>().swap(leaves_[j]);
                ++head_;
                ++j;
            } else {
                leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(j));
                first_.erase(first_.begin() + static_cast<std::ptrdiff_t>(j));
                --last;
            }
            continue;
        }
        if (leaves_[j].size() > kLeafMax) {
            // A neighbour with room takes the overflow first (both end up about equally full), so
            // leaves are split only when their neighbours are nearly full too: a calendar with a
            // long booked future (a ring rank's compute stream holds 10^5 breakpoints ahead of
            // its window) keeps its leaves about 85% full instead of the 69% of splitting alone.
            if (share_with_neighbour(j)) continue;  // j again: its first time may have changed
            // Two halves, each with room to grow before the next split.
            std::vector<StoredBreakpoint>& leaf = leaves_[j];
            const auto half = static_cast<std::ptrdiff_t>(leaf.size() / 2);
            std::vector<StoredBreakpoint> lower;
            std::vector<StoredBreakpoint> upper;
            lower.reserve(kLeafMax);
            upper.reserve(kLeafMax);
            lower.assign(leaf.begin(), leaf.begin() + half);
            upper.assign(leaf.begin() + half, leaf.end());
            leaf.swap(lower);
            const SimTime upper_first = upper.front().t;
            leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(j) + 1, std::move(upper));
            first_.insert(first_.begin() + static_cast<std::ptrdiff_t>(j) + 1, upper_first);
            ++last;
            continue;  // j again: a very large insert may need more than one split
        }
        first_[j] = leaves_[j].front().t;
        ++j;
    }
    // Released leaves at the front are dropped in bulk.
    if (head_ >= 32 && 2 * head_ >= leaves_.size()) {
        leaves_.erase(leaves_.begin(), leaves_.begin() + static_cast<std::ptrdiff_t>(head_));
        first_.erase(first_.begin(), first_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
    }
}

bool BreakpointList::share_with_neighbour(std::size_t j) {
    // The pair must end with room to spare in both, or the next insert would share again.
    constexpr std::size_t kMaxPair = 2 * kLeafMax - 8;
    std::vector<StoredBreakpoint>& leaf = leaves_[j];
    const std::size_t n = leaf.size();
    if (j + 1 < leaves_.size() && n + leaves_[j + 1].size() <= kMaxPair) {
        // The tail of j moves to the front of j + 1.
        std::vector<StoredBreakpoint>& next = leaves_[j + 1];
        const std::size_t move = n - (n + next.size()) / 2;
        next.insert(next.begin(), leaf.end() - static_cast<std::ptrdiff_t>(move), leaf.end());
        leaf.resize(n - move);
        first_[j + 1] = next.front().t;
    } else if (j > head_ && n + leaves_[j - 1].size() <= kMaxPair) {
        // The head of j moves to the back of j - 1.
        std::vector<StoredBreakpoint>& prev = leaves_[j - 1];
        const std::size_t move = n - (n + prev.size()) / 2;
        prev.insert(prev.end(), leaf.begin(), leaf.begin() + static_cast<std::ptrdiff_t>(move));
        leaf.erase(leaf.begin(), leaf.begin() + static_cast<std::ptrdiff_t>(move));
    } else {
        return false;
    }
    // The insert that overflowed j grew its storage (to twice kLeafMax): give the excess back.
    if (leaf.capacity() > kLeafMax) {
        std::vector<StoredBreakpoint> fitted;
        fitted.reserve(kLeafMax);
        fitted.assign(leaf.begin(), leaf.end());
        leaf.swap(fitted);
    }
    return true;
}

std::uint32_t BreakpointList::rate_index(std::int64_t rate) {
    constexpr std::size_t kScanned = 16;
    if (rates_.size() <= kScanned) {
        for (std::size_t i = 0; i < rates_.size(); ++i)
            if (rates_[i] == rate) return static_cast<std::uint32_t>(i);
        if (rates_.size() < kScanned) {
            rates_.push_back(rate);
            return static_cast<std::uint32_t>(rates_.size() - 1);
        }
        if (index_.empty())
            for (std::size_t i = 0; i < rates_.size(); ++i) index_.emplace(rates_[i], static_cast<std::uint32_t>(i));
    }
    RecentRate& recent = recent_[static_cast<std::size_t>((static_cast<std::uint64_t>(rate) * 0x9E3779B97F4A7C15ULL) >> 58)];
    if (recent.rate == rate) return recent.index;
    const auto [it, added] = index_.try_emplace(rate, static_cast<std::uint32_t>(rates_.size()));
    if (added) {
        if (rates_.size() >= std::numeric_limits<std::uint32_t>::max())
            throw SimError("a bandwidth calendar has more than 2^32 distinct booked rates");
        rates_.push_back(rate);
    }
    recent = RecentRate{rate, it->second};
    return it->second;
}

void BreakpointList::encode_into(std::vector<StoredBreakpoint>& leaf, std::size_t at, std::span<const Breakpoint> entries) {
    for (std::size_t k = 0; k < entries.size(); ++k)
        leaf[at + k] = StoredBreakpoint{entries[k].t, rate_index(entries[k].rate)};
}

std::vector<std::pair<SimTime, std::int64_t>> BreakpointList::to_vector() const {
    std::vector<std::pair<SimTime, std::int64_t>> out;
    out.reserve(size_);
    for (std::size_t j = head_; j < leaves_.size(); ++j)
        for (const StoredBreakpoint& b : leaves_[j]) {
            const SimTime t = b.t;  // a copy: b.t is only 4-byte aligned (packed), a reference to it is UB
            out.emplace_back(t, rates_[b.rate_index]);
        }
    return out;
}

}  // namespace tandem
