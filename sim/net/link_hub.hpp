#pragma once
// One directed link as every stream that sends over it shares it: the streams of one chip, and
// on a ring the ranks whose routes cross the same hop. Each stream books its own transfers on a
// calendar of its own (LinkView, sim/net/link_view.hpp) and reads beside it the other streams'
// usage. The streams hand in what they booked at each window's barrier, where the
// coordinator delivers it in its total order, so what one stream sees of the others is a
// function of the barriers, which are cut on simulated state only (sim/exec/coordinator.hpp):
// the same whatever the host threads do. The price is the chips' memory systems' price
// (sim/mem/chip_memory.hpp): bookings two streams make in one window (under a microsecond) do
// not see each other, and the others' rate is known per bin of kLinkUsageBinPs.
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/share/binned_usage.hpp"
#include "sim/share/first_reader_work.hpp"
#include "sim/share/handed_in_spans.hpp"
#include "sim/share/sharing_quanta.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

// Link usage is kept in bins of kLinkUsageBinPs and read in rate steps of kLinkUsageRateStep
// (sim/share/sharing_quanta.hpp, beside the chip memory's).

// `bytes` moved over a link evenly in [start, end): one step of a transfer's booked rate.
struct LinkUsage {
    SimTime start = 0;
    SimTime end = 0;
    double bytes = 0;
};

// What one stream booked on the links it sent over in one window: every link's records, each
// link's together, and per link where they lie, the links in the order it first used them.
// Carried by a Message of kind LinkTraffic, delivered at the window's barrier. Flat, so that a
// window hands in one allocation whatever the links; shared, so that a hub keeps its first
// stream's records by holding the message rather than a copy of them (a comm kernel's first
// window hands in nearly all of its bookings at once).
struct LinkTraffic {
    struct Records {
        int link = 0;
        std::uint32_t begin = 0;  // usage[begin, end) are the link's
        std::uint32_t end = 0;
    };
    std::vector<LinkUsage> usage;
    std::vector<Records> links;
};

class LinkHub {
public:
    // `barrier_horizon`: the cluster's latest barrier horizon (nothing books before it again), from
    // which the first read bins the first stream's records; null: the hub's own (tests).
    explicit LinkHub(const std::atomic<SimTime>* barrier_horizon = nullptr) : barrier_horizon_(barrier_horizon) {}
    LinkHub(const LinkHub&) = delete;
    LinkHub& operator=(const LinkHub&) = delete;

    // ---- at barriers (single-threaded) ----
    // A stream's usage of the link in one window: `records` of `traffic` (the link's own).
    // `horizon`: no booking starts before it again (its bins before it are forgotten).
    void deliver(const std::shared_ptr<const LinkTraffic>& traffic, const LinkTraffic::Records& records, int source,
                 SimTime horizon);
    // Forgets the bins before `horizon` (nothing reads them again; it changes no result).
    void forget_before(SimTime horizon);

    // ---- during windows (read-only, from any host thread) ----
    // The stream that first handed usage in (-1: none yet), its usage, and every other
    // stream's: kept apart so that the first, on a full mesh most often the only one, reads the
    // others' usage without subtracting its own (sim/net/link_view.hpp). The first is chosen
    // again when a stream other than it hands usage in while the link is idle (every usage
    // delivered so far ends before the horizon's bin): the next kernel, on another stream (an
    // op's views run their kernels on different streams), is then the first, not the rest.
    int first_source() const { return first_source_; }
    // The first stream's usage in bins. Only another stream reads it (on a full mesh, none
    // does): until one does, the hub keeps the first's usage as the records it was handed, and
    // the first read adds them to the bins, each as deliver() would have (after forgetting
    // what deliver() forgot), so that every bin still read holds the same sum.
    const BinnedUsage& first_usage() const {
        first_to_bin_.run_if_pending([this] { bin_first_usage(); });
        return first_;
    }
    const BinnedUsage& rest_usage() const { return rest_; }

private:
    // Under first_to_bin_'s lock.
    void bin_first_usage() const;
    // Drops the spans of records that add nothing at or after `horizon` (their bins are all
    // before it).
    void prune_first_records(SimTime horizon);

    // Written at barriers, or once by the first read of first_usage() in a window.
    mutable BinnedUsage first_{kLinkUsageBinPs};
    // The first's records, in the order delivered, as spans of the messages that carried them
    // (sim/share/handed_in_spans.hpp), while first_to_bin_ is pending: binned by the first read
    // (sim/share/first_reader_work.hpp), pending again when the hub restarts with another first.
    mutable HandedInSpans<LinkTraffic> first_records_{kLinkUsageBinPs};
    mutable FirstReaderWork first_to_bin_{true};
    // Whether nothing delivered reaches the bin of `horizon` (or later): no stream reads any of
    // it again.
    bool idle_at(SimTime horizon) const {
        return usage_end_ <= 0 || (usage_end_ - 1) / kLinkUsageBinPs < horizon / kLinkUsageBinPs;
    }
    // `source` is the first from now on; what was delivered is all forgotten history.
    void restart_with(int source);

    std::size_t records_after_prune_ = 0;
    SimTime horizon_ = 0;    // the latest horizon delivered or forgotten at
    // The cluster's latest barrier horizon (or null). The hub's own lags it: a barrier visits a
    // few hubs in turn (Cluster::fold_before), and a link whose first stream has finished gets no
    // deliveries, so its first records, a whole comm kernel's, would be binned from long before.
    const std::atomic<SimTime>* barrier_horizon_ = nullptr;
    SimTime usage_end_ = 0;  // the latest end of any usage delivered (0: none)
    BinnedUsage rest_{kLinkUsageBinPs};
    int first_source_ = -1;
};

}  // namespace tandem
