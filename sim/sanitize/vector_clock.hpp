#pragma once
// A vector clock over the sanitizer's threads (a block part of one stream, or a rank's host),
// sparse: only the threads this one has synchronised with appear. Clocks start at 1, so an
// absent thread reads 0 (nothing of it is known).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/net/topology.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

// rank, stream and slot of a block part, or a rank's host (stream kHostStream), packed as
// rank << 40 | stream << 24 | slot. Ranks (Topology::kMaxRanks) and streams (below kHostStream,
// sim/exec/logical_process.cpp) fit by construction; a launch's slots are checked here.
using ThreadKey = std::uint64_t;
inline constexpr std::uint64_t kHostStream = 0xFFFF;
inline constexpr int kThreadSlotBits = 24;
inline constexpr int kMaxThreadSlots = 1 << kThreadSlotBits;
static_assert(Topology::kMaxRanks < (1 << 24), "a thread key holds the rank in 24 bits");
inline ThreadKey thread_key(int rank, std::uint64_t stream, int slot) {
    if (slot < 0 || slot >= kMaxThreadSlots) {
        throw SimError("sanitizer: block part " + std::to_string(slot) + " is beyond the " +
                       std::to_string(kMaxThreadSlots) + " block parts per kernel it can tell apart");
    }
    return (static_cast<std::uint64_t>(rank) << 40) | (stream << kThreadSlotBits) | static_cast<std::uint64_t>(slot);
}

class VectorClock {
public:
    std::uint32_t get(ThreadKey t) const {
        auto it = std::lower_bound(e_.begin(), e_.end(), t, [](const auto& e, ThreadKey k) { return e.first < k; });
        return it != e_.end() && it->first == t ? it->second : 0;
    }
    void set(ThreadKey t, std::uint32_t c) {
        auto it = std::lower_bound(e_.begin(), e_.end(), t, [](const auto& e, ThreadKey k) { return e.first < k; });
        if (it != e_.end() && it->first == t) it->second = std::max(it->second, c);
        else e_.insert(it, {t, c});
    }
    // this = max(this, o) per thread.
    void join(const VectorClock& o) {
        if (o.e_.empty()) return;
        // Most joins (a poll of a flag, an acquire of what is already known) name no thread this
        // clock lacks: update in place, without a new vector.
        bool has_new_thread = false;
        auto x = e_.begin();
        for (auto y = o.e_.cbegin(); y != o.e_.cend(); ++y) {
            while (x != e_.end() && x->first < y->first) ++x;
            if (x == e_.end() || x->first != y->first) {
                has_new_thread = true;
                break;
            }
            x->second = std::max(x->second, y->second);
        }
        if (!has_new_thread) return;
        std::vector<std::pair<ThreadKey, std::uint32_t>> out;
        out.reserve(e_.size() + o.e_.size());
        auto a = e_.cbegin();
        auto b = o.e_.cbegin();
        while (a != e_.cend() || b != o.e_.cend()) {
            if (b == o.e_.end() || (a != e_.end() && a->first < b->first)) out.push_back(*a++);
            else if (a == e_.end() || b->first < a->first) out.push_back(*b++);
            else {
                out.emplace_back(a->first, std::max(a->second, b->second));
                ++a;
                ++b;
            }
        }
        e_ = std::move(out);
    }
    bool empty() const { return e_.empty(); }

private:
    std::vector<std::pair<ThreadKey, std::uint32_t>> e_;  // sorted by thread
};

}  // namespace tandem
