#pragma once
// The sanitizer's state for one stream (one logical process): its blocks' vector clocks, the
// accesses they make and the releases they do, and the stream's clock across kernel
// boundaries. Used only under --sanitize (the logical process holds none otherwise); every call
// comes from the logical process's own window, so nothing here is shared.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/core/pipe.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "sim/sanitize/signal_stamp.hpp"
#include "sim/sanitize/vector_clock.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class BlockCtx;
class GmTensor;
class LogicalProcess;

class StreamSanitizer {
public:
    StreamSanitizer(Sanitizer& san, LogicalProcess& lp) : san_(san), lp_(lp) {}

    // ---- kernel boundaries ----
    // A kernel starts: it knows what its stream's previous kernels did and what the launching
    // host knew at the launch, in its call `host_call`.
    void begin_kernel(const VectorClock& host_clock, std::uint64_t host_call);
    void start_block(const BlockCtx& blk);
    // The block is done: everything it issued is complete; it releases into the kernel's end.
    void end_block(const BlockCtx& blk);
    // The kernel is done (or failed): hands its records to the sanitizer.
    void end_kernel();
    // What a host that synchronised with this stream learns.
    const VectorClock& stream_clock() const { return stream_clock_; }

    // ---- hooks of the instructions ----
    enum class Access : std::uint8_t { Read, Write, Atomic };
    // `pipe` carries it; a write counts as done once the scalar has waited for that pipe.
    void access(const BlockCtx& blk, Access kind, const GmTensor& gm, SimTime effective, Pipe pipe, const char* instr);
    // The scalar waited until `pipe` (Pipe::ALL: every pipe) drained.
    void pipe_waited(const BlockCtx& blk, Pipe pipe);
    // wait_flag(src, dst) with dst a pipe: what src had in flight completes before dst goes on.
    void pipe_ordered(const BlockCtx& blk, Pipe src, Pipe dst);
    // A release (TNOTIFY, CrossCoreSetFlag): returns the clock it publishes.
    std::shared_ptr<const VectorClock> release(const BlockCtx& blk, const char* what);
    // A TNOTIFY's release: the stamp its signal write carries (visible at `visible`).
    std::shared_ptr<const SanSignalStamp> signal_release(const BlockCtx& blk, const std::string& what, SimTime visible);
    // A TWAIT or TTEST (`wait`: its name and condition, issued at `issued`) found its condition
    // true on this rank's signal word at `address`, last written by `w`. Stale (class 3) when the write was made in
    // an earlier host call than this kernel's launch and was known to the launching host (it
    // happened before the launch): the value is left over from an earlier call, a workspace
    // reused without a reset or a per-call flag value. A write of a kernel launched in the same
    // call (another stream's producer, say) is what the wait is for, and a host write (a reset)
    // is what the host meant.
    void check_wait(const BlockCtx& blk, const SanSignalStamp* w, std::int64_t address,
                    const std::function<std::string()>& wait, SimTime issued);
    // An acquire of what a signal or flag carried.
    void acquire(const BlockCtx& blk, const VectorClock& vc);
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
    BlockState& state(const BlockCtx& blk);
    // The release itself: the block's clock goes to its vector clock, the release is recorded.
    void release_clock(BlockState& s, const BlockCtx& blk, const char* what);
    std::string where(const BlockCtx& blk, const char* instr) const;
    void finish_pending(BlockState& s, Pipe pipe);

    Sanitizer& san_;
    LogicalProcess& lp_;
    VectorClock stream_clock_;
    VectorClock kernel_end_;
    std::unordered_map<int, std::uint32_t> slot_clock_;  // a slot's last clock (kept across kernels)
    std::unordered_map<int, BlockState> blocks_;
    std::array<VectorClock, 16> cross_flags_;
    std::uint64_t seq_ = 0;  // never reset: a slot's thread spans kernels
    std::uint64_t call_ = 0;  // the running kernel's host call
    int launch_ = 0;          // this stream's kernels so far (the running one's number, from 1)
    std::unordered_set<std::int64_t> stale_reported_;  // flag words reported for the running kernel
    std::vector<SanAccess> accesses_;
    std::vector<SanRelease> releases_;
};

}  // namespace tandem
