// One protocol for sharing bandwidth between streams (sim/share/): a link (LinkHub, LinkView)
// and a chip's L2 (ChipMemory, MemoryView) are shared the same way, so the same scenario through
// either splits the resource the same way. And the layer's two pieces on their own: the work a
// barrier leaves to its first reader is done once, and handed-in spans add what adding each
// record would have.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "sim/mem/chip_memory.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/mem/memory_view.hpp"
#include "sim/net/bandwidth_calendar.hpp"
#include "sim/net/link_hub.hpp"
#include "sim/net/link_view.hpp"
#include "sim/share/first_reader_work.hpp"
#include "sim/share/handed_in_spans.hpp"
#include "sim/share/sharing_quanta.hpp"

namespace tandem {
namespace shared_bandwidth_test {

// The scenario: stream A moves its bytes from 0 at half the resource's capacity until 9 us and
// hands its usage in at the barrier of 1 us; stream B, in the next window, moves `b_bytes` from
// 1 us at up to all of it. 64 GiB/s is a whole number of both resources' rate steps, and 1 us
// and 9 us lie on the usage bins' edges (500 ns) and, counted from B's first booking, on the
// memory calendar's (64 ns): neither user's quanta blur the split.
constexpr std::int64_t kCapacity = std::int64_t{64} << 30;  // bytes per second
constexpr SimTime kBarrier = 1000 * kPsPerNs;
constexpr SimTime kAEnd = 9000 * kPsPerNs;
// A byte short of 9 us at half the capacity: A ends a few ps before 9 us, not a few after (a bin
// with any bytes reads as at least one rate step).
constexpr double kABytes = kCapacity / 2.0 * 9e-6 - 1;
// B: half of the capacity for A's last 8 us, then all of it for 2 us more: it ends at 11 us.
constexpr double kBBytes = kCapacity / 2.0 * 8e-6 + kCapacity * 2e-6;

static_assert(kCapacity % kLinkUsageRateStep == 0 && kCapacity % kMemUsageRateStep == 0);
static_assert(kBarrier % kSharedUsageBinPs == 0 && kAEnd % kSharedUsageBinPs == 0);
static_assert((kAEnd - kBarrier) % kMemCalendarBinPs == 0);

// B's end on a link. `with_a`: A sends over it too.
SimTime link_b_end(bool with_a) {
    LinkHub hub;
    LinkView a(hub, "link", kCapacity, /*source=*/1);
    LinkView b(hub, "link", kCapacity, /*source=*/2);
    std::vector<Breakpoint> rates;
    if (with_a) {
        BandwidthCalendar* path[] = {&a.calendar()};
        const UsageSum others = a.others();
        const UsageSum* background[] = {&others};
        const SimTime end = book_transfer(path, 0, kABytes, kCapacity / 2, background, &rates);
        EXPECT_NEAR(static_cast<double>(end), static_cast<double>(kAEnd), 100.0);
        a.note_booked(rates, end);
        auto traffic = std::make_shared<LinkTraffic>();
        a.take_usage(0, traffic);
        hub.deliver(traffic, traffic->links.front(), 1, kBarrier);
    }
    BandwidthCalendar* path[] = {&b.calendar()};
    const UsageSum others = b.others();
    const UsageSum* background[] = {&others};
    return book_transfer(path, kBarrier, kBBytes, kCapacity, background, &rates);
}

// B's end on a chip's L2 (both streams write, so HBM does not bound them).
SimTime l2_b_end(bool with_a) {
    constexpr std::int64_t kRegion = 1 << 20;
    GlobalMemory gm{0, std::int64_t{1} << 30, false};
    ChipMemory chip{64 * kRegion, kRegion};
    MemoryView a{chip, 0, /*source=*/1, kCapacity, kCapacity};
    MemoryView b{chip, 0, /*source=*/2, kCapacity, kCapacity};
    GmAllocation& buf = gm.allocate("buf", 4 * kRegion);
    if (with_a) {
        const SimTime end = a.book_local(GmTensor(buf, 0, 256, 1024, 1024, DType::F32), MemAccess::Write, 0, 0, kABytes, kCapacity / 2);
        EXPECT_NEAR(static_cast<double>(end), static_cast<double>(kAEnd), 100.0);
        std::vector<MemoryView::ChipTraffic> traffic;
        a.take_traffic(traffic);
        for (const MemoryView::ChipTraffic& t : traffic) chip.deliver(t.traffic, kBarrier, 1);
        chip.forget_before(kBarrier);
    }
    return b.book_local(GmTensor(buf, 2 * kRegion, 256, 1024, 1024, DType::F32), MemAccess::Write, kBarrier, kBarrier,
                        kBBytes, kCapacity);
}

TEST(SharedBandwidth, TwoStreamsAWindowApartSplitALinkAndAChipsL2Alike) {
    // Alone, B moves at the full capacity: 6 us from 1 us.
    EXPECT_NEAR(to_us(link_b_end(false)), 7.0, 1e-3);
    EXPECT_NEAR(to_us(l2_b_end(false)), 7.0, 1e-3);
    // Beside A, B gets what A leaves: half until 9 us, then all. The same on both resources.
    const SimTime link = link_b_end(true);
    const SimTime l2 = l2_b_end(true);
    EXPECT_NEAR(to_us(link), 11.0, 1e-3);
    EXPECT_NEAR(to_us(l2), 11.0, 1e-3);
    EXPECT_NEAR(static_cast<double>(link), static_cast<double>(l2), 1000.0) << "within 1 ns";
}

TEST(FirstReaderWork, TheBarriersWorkIsDoneOnceByWhicheverReaderComesFirst) {
    FirstReaderWork work;
    int done = 0;
    work.run_if_pending([&] { ++done; });
    EXPECT_EQ(done, 0) << "nothing pending yet";
    for (int barrier = 0; barrier < 50; ++barrier) {
        work.mark_pending();
        EXPECT_TRUE(work.pending());
        std::atomic<int> saw_pending{0};
        std::vector<std::thread> readers;
        for (int r = 0; r < 4; ++r) {
            readers.emplace_back([&] {
                work.run_if_pending([&] { ++done; });
                if (work.pending()) ++saw_pending;  // none may return before the work is done
            });
        }
        for (std::thread& t : readers) t.join();
        EXPECT_EQ(saw_pending.load(), 0);
        EXPECT_FALSE(work.pending());
    }
    EXPECT_EQ(done, 50);
}

struct Usage {
    SimTime start = 0;
    SimTime end = 0;
    double bytes = 0;
};
struct Traffic {
    std::vector<Usage> usage;
};

TEST(HandedInSpans, AddWhatAddingEachRecordWouldHaveAndDropWhatLiesBeforeTheHorizon) {
    constexpr SimTime bin = 500 * kPsPerNs;
    auto first = std::make_shared<Traffic>(Traffic{{{0, 700 * kPsPerNs, 1000.0}, {100, 200, 3.0}, {5, 5, 9.0}}});
    auto second = std::make_shared<Traffic>(Traffic{{{2000 * kPsPerNs, 2600 * kPsPerNs, 777.7}, {0, 100 * kPsPerNs, 1.5}}});
    HandedInSpans<Traffic> spans(bin);
    spans.push(first, 0, 3);
    spans.push(second, 0, 1);  // the second's first record only
    spans.push(second, 1, 2);
    EXPECT_EQ(spans.record_count(), 5U);
    BinnedUsage each(bin);
    for (const Usage& u : first->usage) each.add(u.start, u.end, u.bytes);
    for (const Usage& u : second->usage) each.add(u.start, u.end, u.bytes);
    BinnedUsage added(bin);
    spans.add_to(added);
    for (std::int64_t b = 0; b < 8; ++b) EXPECT_EQ(added.bytes_in(b), each.bytes_in(b)) << "bin " << b;
    // From 1 us on, only the span that reaches bin 5 (2.0..2.6 us) is read again.
    spans.drop_before(1000 * kPsPerNs);
    EXPECT_EQ(spans.record_count(), 1U);
    BinnedUsage kept(bin);
    spans.add_to(kept);
    EXPECT_EQ(kept.bytes_in(1), 0.0);
    EXPECT_EQ(kept.bytes_in(4), each.bytes_in(4));
    EXPECT_EQ(kept.bytes_in(5), each.bytes_in(5));
    spans.clear();
    EXPECT_TRUE(spans.empty());
    EXPECT_EQ(spans.record_count(), 0U);
}

}  // namespace shared_bandwidth_test
}  // namespace tandem
