#pragma once
// A cross-stream effect: a signal write, a data write or an atomic add into some rank's GM,
// stamped with the simulated time it becomes visible there. Messages are produced during a window and delivered
// at the next barrier in a total order (time, source, sequence), never in host arrival order.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/exec/signal.hpp"
#include "sim/mem/chip_memory.hpp"
#include "sim/mem/cluster_port.hpp"
#include "sim/mem/dtype.hpp"
#include "sim/net/link_hub.hpp"
#include "sim/sanitize/signal_stamp.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct GmAllocation;

// Producer ids (Message::source), unique per producer so that the delivery order is total: a
// logical process is rank * kMaxStreamsPerRank + its stream id, a rank's host
// kHostSourceBase + rank. A rank's streams are checked against kMaxStreamsPerRank where they are
// made (LogicalProcess), and the ranks (Topology::kMaxRanks) keep stream ids below the hosts'.
inline constexpr int kMaxStreamsPerRank = 16;
inline constexpr int kHostSourceBase = 1'000'000;
inline constexpr int host_source_id(int rank) { return kHostSourceBase + rank; }

struct Message {
    // AtomicAdd: like Data, but each element of the payload is added to the one in GM (in
    // `dtype`, the sum rounded to it). MemTraffic: what a producer did to a chip's memory system
    // in one window (sim/mem/chip_memory.hpp), usable by its other streams from `visible_at` on.
    // LinkTraffic: what a stream booked on links in one window (sim/net/link_hub.hpp), usable by
    // the other streams that send over them from `visible_at` on. PortTraffic: what a stream's
    // AIVs held of their clusters' ports in one window (sim/mem/cluster_port.hpp), usable by the
    // chip's other streams from `visible_at` on.
    enum class Kind : std::uint8_t { Signal, Data, AtomicAdd, MemTraffic, LinkTraffic, PortTraffic };
    // (The fields are ordered so that none pads another: a burst's window hands in hundreds of
    // thousands of messages, each held by its stream and again by the barrier.)
    SimTime visible_at = 0;
    int source = 0;            // producer id (logical process or host), for the total order
    int count = 1;             // Signal: the op applies to `count` consecutive words
    std::uint64_t seq = 0;     // producer-local sequence number
    Kind kind = Kind::Signal;
    NotifyOp op = NotifyOp::Set;
    DType dtype = DType::F32;  // Data / AtomicAdd: the elements' type in GM
    int dst_rank = 0;
    std::int64_t address = 0;  // signal address (Signal) or destination address (Data)
    std::int32_t value = 0;
    // Data: `rows` rows of `row_bytes` each, written `ld_bytes` apart from `dst_offset` on.
    int rows = 0;
    GmAllocation* dst_alloc = nullptr;
    std::int64_t dst_offset = 0;
    std::int64_t row_bytes = 0;
    std::int64_t ld_bytes = 0;
    std::vector<std::byte> payload;  // functional mode only
    // Signal, under --sanitize: the writer's vector clock (what a reader that observes it learns)
    // and who wrote it.
    std::shared_ptr<const SanSignalStamp> stamp;
    // MemTraffic, LinkTraffic, PortTraffic: what the stream hands in (set with set_usage(), read
    // with the accessor of the message's kind; null for any other kind).
    void set_usage(std::shared_ptr<const void> usage) { usage_ = std::move(usage); }
    std::shared_ptr<const MemTraffic> traffic() const { return usage_of<MemTraffic>(Kind::MemTraffic); }
    std::shared_ptr<const LinkTraffic> link_traffic() const { return usage_of<LinkTraffic>(Kind::LinkTraffic); }
    std::shared_ptr<const PortTraffic> port_traffic() const { return usage_of<PortTraffic>(Kind::PortTraffic); }

private:
    template <typename T>
    std::shared_ptr<const T> usage_of(Kind k) const {
        return kind == k ? std::static_pointer_cast<const T>(usage_) : nullptr;
    }
    std::shared_ptr<const void> usage_;  // one pointer for the three kinds of usage
};

inline bool message_order(const Message& a, const Message& b) {
    if (a.visible_at != b.visible_at) return a.visible_at < b.visible_at;
    if (a.source != b.source) return a.source < b.source;
    return a.seq < b.seq;
}

// Where delivered messages go (the cluster's memories and signal stores).
class MessageSink {
public:
    virtual ~MessageSink() = default;
    virtual void deliver(const Message& m, std::uint64_t order) = 0;
    // Called at each barrier: nothing will ever read signals before `horizon` again.
    virtual void fold_before(SimTime horizon) = 0;
};

}  // namespace tandem
