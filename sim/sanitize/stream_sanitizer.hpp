#pragma once
// The sanitizer's state for one stream (one logical process): its blocks' vector clocks, the
// accesses they make and the releases they do, and the stream's clock across kernel
// boundaries. Used only under --sanitize (the logical process holds none otherwise); every call
// comes from the logical process's own window, so nothing here is shared.
//
// It knows the stream and its blocks only by the plain facts below (SanStream, SanKernel,
// SanPart), not by the logical process or its BlockCtx: sim/exec calls these hooks, so this
// layer sits below it (sim/README.md).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/core/pipe.hpp"
#include "sim/sanitize/san_part.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "sim/sanitize/signal_stamp.hpp"
#include "sim/sanitize/vector_clock.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class GlobalMemory;
class GmTensor;

// The stream a StreamSanitizer belongs to.
struct SanStream {
    int rank = 0;
    int stream_id = 0;
    std::string name;
    const GlobalMemory* gm = nullptr;  // its rank's GM (to name the signal words in reports)
};

// The kernel the stream runs, as reports name it.
struct SanKernel {
    std::string name;
    bool mix = false;          // MIX launch: three slots per block (sim/core/block_slot.hpp)
    bool timing_only = false;  // moves no data: its accesses are not checked
};

class StreamSanitizer {
public:
    // The cross-core flag ids a kernel may use (FFTS flags 0..15; sim/exec/cross_core_flags.hpp
    // checks that both agree).
    static constexpr int kCrossFlags = 16;

    StreamSanitizer(Sanitizer& san, SanStream stream) : san_(san), stream_(std::move(stream)) {}

    // ---- kernel boundaries ----
    // A kernel starts: it knows what its stream's previous kernels did and what the launching
    // host knew at the launch, in its call `host_call`.
    void begin_kernel(const VectorClock& host_clock, std::uint64_t host_call, SanKernel kernel);
    void start_block(const SanPart& blk);
    // The block is done: everything it issued is complete; it releases into the kernel's end.
    void end_block(const SanPart& blk);
    // The kernel is done (or failed): hands its records to the sanitizer.
    void end_kernel();
    // What a host that synchronised with this stream learns.
    const VectorClock& stream_clock() const { return stream_clock_; }

    // ---- hooks of the instructions ----
    enum class Access : std::uint8_t { Read, Write, Atomic };
    // `pipe` carries it; a write counts as done once the scalar has waited for that pipe.
    void access(const SanPart& blk, Access kind, const GmTensor& gm, SimTime effective, Pipe pipe, const char* instr);
    // The scalar waited until `pipe` (Pipe::ALL: every pipe) drained.
    void pipe_waited(const SanPart& blk, Pipe pipe);
    // wait_flag(src, dst) with dst a pipe: what src had in flight completes before dst goes on.
    void pipe_ordered(const SanPart& blk, Pipe src, Pipe dst);
    // A release (TNOTIFY, CrossCoreSetFlag): returns the clock it publishes.
    std::shared_ptr<const VectorClock> release(const SanPart& blk, const char* what);
    // A TNOTIFY's release: the stamp its signal write carries (visible at `visible`).
    std::shared_ptr<const SanSignalStamp> signal_release(const SanPart& blk, const std::string& what, SimTime visible);
    // A TWAIT or TTEST (`wait`: its name and condition, issued at `issued`) found its condition
    // true on this rank's signal word at `address`, last written by `w`. Stale (class 3) when the write was made in
    // an earlier host call than this kernel's launch and was known to the launching host (it
    // happened before the launch): the value is left over from an earlier call, a workspace
    // reused without a reset or a per-call flag value. A write of a kernel launched in the same
    // call (another stream's producer, say) is what the wait is for, and a host write (a reset)
    // is what the host meant.
    void check_wait(const SanPart& blk, const SanSignalStamp* w, std::int64_t address,
                    const std::function<std::string()>& wait, SimTime issued);
    // An acquire of what a signal or flag carried.
    void acquire(const SanPart& blk, const VectorClock& vc);
    // Cross-core flags of the running kernel: what the sets of `flag` published so far.
    VectorClock& cross_flag(int flag) { return cross_flags_[static_cast<std::size_t>(flag)]; }

private:
    struct BlockState {
        ThreadKey key = 0;
        VectorClock vc;
        std::shared_ptr<const VectorClock> snapshot;
        std::uint32_t clock = 1;
        std::vector<std::pair<Pipe, std::size_t>> pending;  // writes in flight: pipe, access index
    };
    BlockState& state(const SanPart& blk);
    // The release itself: the block's clock goes to its vector clock, the release is recorded.
    void release_clock(BlockState& s, const SanPart& blk, const char* what);
    std::string where(const SanPart& blk, const char* instr) const;
    // The writes in flight on `pipe` are done (Pipe::ALL: every pipe's; the SDMA copies, on
    // Pipe::S, only when `block_done`).
    void finish_pending(BlockState& s, Pipe pipe, bool block_done = false);

    Sanitizer& san_;
    SanStream stream_;
    SanKernel kernel_;  // the running one
    VectorClock stream_clock_;
    VectorClock kernel_end_;
    std::unordered_map<int, std::uint32_t> slot_clock_;  // a slot's last clock (kept across kernels)
    std::unordered_map<int, BlockState> blocks_;
    std::array<VectorClock, kCrossFlags> cross_flags_;
    std::uint64_t seq_ = 0;  // never reset: a slot's thread spans kernels
    std::uint64_t call_ = 0;  // the running kernel's host call
    int launch_ = 0;          // this stream's kernels so far (the running one's number, from 1)
    std::unordered_set<std::int64_t> stale_reported_;  // flag words reported for the running kernel
    std::vector<SanAccess> accesses_;
    std::vector<SanRelease> releases_;
};

}  // namespace tandem
