#pragma once
// The time quanta and rate steps of sharing bandwidth between streams and ranks, in one place for
// every shared resource: a directed link (sim/net/link_hub.hpp, sim/net/link_view.hpp) and a
// chip's L2 and HBM (sim/mem/chip_memory.hpp, sim/mem/memory_view.hpp). Both share the same way:
// each stream books its own transfers on calendars of its own, hands in what it booked at each
// window's barrier, and reads the other streams' usage beside its calendars as bytes per bin
// (sim/share/binned_usage.hpp), rounded to whole rate steps (UsageSum); what a barrier leaves is
// done by the first reader of the next window (sim/share/first_reader_work.hpp). sim/MODEL.md
// "Sharing a resource between streams" says how. Changing one of these changes the simulated
// figures (run `./run.sh fidelity`), not only the host's speed.
#include <cstdint>

#include "sim/sim_time.hpp"

namespace tandem {

// Usage another stream booked is read in bins of this length: of the order of the
// coordinator's lookahead, the lag the other streams learn of it with. Links and memory alike.
inline constexpr SimTime kSharedUsageBinPs = 500 * kPsPerNs;
inline constexpr SimTime kLinkUsageBinPs = kSharedUsageBinPs;
inline constexpr SimTime kMemUsageBinPs = kSharedUsageBinPs;

// A stream's own bookings of its chip's L2 and HBM are kept in bins of this length
// (sim/net/binned_calendar.hpp): a few per panel load, so that a transfer's end is placed to within
// a few nanoseconds of where an exact calendar would put it, while a booking costs the bins it
// spans and not the other cores' transfers in flight. (A link's own calendar is exact:
// sim/net/bandwidth_calendar.hpp; a stream books few transfers per link.)
inline constexpr SimTime kMemCalendarBinPs = 64 * kPsPerNs;

// Rates read beside a calendar are rounded to whole steps of these (UsageSum), so that the
// calendars booked beside them see few distinct rates. A link's: 1/16 GiB/s, under 0.4% of an
// HCCS link. A chip memory's: 1 GiB/s.
inline constexpr std::int64_t kLinkUsageRateStep = std::int64_t{1} << 26;
inline constexpr std::int64_t kMemUsageRateStep = std::int64_t{1} << 30;

}  // namespace tandem
