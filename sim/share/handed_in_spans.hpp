#pragma once
// Records a stream handed in at a barrier, kept as spans of the message that carried them
// rather than copied: a kernel's first window hands in nearly all of its bookings at once, and a
// copy held them twice until the kernel ended. Each span knows the last usage bin its records
// reach, so that spans whose bins are all before a horizon (never read again) are dropped, and
// the message is freed once nothing holds a span of it. Added to bins in the order handed in, as
// adding each record when it came would have: every bin still read holds the same sum.
//
// `Traffic` is a hand-in message with a vector `usage` of records {start, end, bytes}
// (LinkTraffic, sim/net/link_hub.hpp). A link's hub keeps its first stream's records this way
// until another stream reads them, and each other stream's view its own until it subtracts them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/burst_room.hpp"
#include "sim/share/binned_usage.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

template <typename Traffic>
class HandedInSpans {
public:
    // `bin_ps`: the usage bins' length (the resource's, sim/share/sharing_quanta.hpp).
    explicit HandedInSpans(SimTime bin_ps) : bin_ps_(bin_ps) {}

    // Records [begin, end) of `traffic`.
    void push(const std::shared_ptr<const Traffic>& traffic, std::uint32_t begin, std::uint32_t end) {
        std::int64_t last_bin = -1;
        const auto& usage = traffic->usage;
        for (std::uint32_t i = begin; i < end; ++i) {
            if (usage[i].end > usage[i].start) last_bin = std::max(last_bin, (usage[i].end - 1) / bin_ps_);
        }
        spans_.push_back(Span{traffic, begin, end, last_bin});
        records_ += end - begin;
    }
    // The records held.
    std::size_t record_count() const { return records_; }
    bool empty() const { return spans_.empty(); }
    // Drops the spans whose records' bins all end before the bin of `horizon`.
    void drop_before(SimTime horizon) {
        const std::int64_t horizon_bin = horizon / bin_ps_;
        std::erase_if(spans_, [&](const Span& s) {
            if (s.last_bin >= horizon_bin) return false;
            records_ -= s.end - s.begin;
            return true;
        });
    }
    // Adds every record to `into`, in the order handed in.
    void add_to(BinnedUsage& into) const {
        for (const Span& s : spans_) {
            const auto& usage = s.traffic->usage;
            for (std::uint32_t i = s.begin; i < s.end; ++i) into.add(usage[i].start, usage[i].end, usage[i].bytes);
        }
    }
    // Drops every span; frees their room if it was a burst's (sim/burst_room.hpp), or all of it.
    void clear() {
        spans_.clear();
        release_burst_room(spans_);
        records_ = 0;
    }
    void clear_and_free() {
        std::vector<Span>().swap(spans_);
        records_ = 0;
    }

private:
    struct Span {
        std::shared_ptr<const Traffic> traffic;
        std::uint32_t begin = 0;  // traffic->usage[begin, end)
        std::uint32_t end = 0;
        std::int64_t last_bin = -1;  // the last bin its records reach
    };
    SimTime bin_ps_;
    std::vector<Span> spans_;
    std::size_t records_ = 0;
};

}  // namespace tandem
