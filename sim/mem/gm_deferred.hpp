#pragma once
// Deferred data effects on global memory, so that the cube's arithmetic can run after the
// simulated kernel instead of inside its lockstep windows (see sim/isa/deferred_cube.hpp).
//
// Two kinds of deferred effect hang on a GM allocation:
//   * a pin: "a tile holds what this GM region held when it was loaded" (TLOAD into L1), kept as
//     a reference instead of a copy. A write to the region while the pin lives first copies the
//     old bytes into the pin (a snapshot), so the tile still sees what it loaded.
//   * a pending write: "this GM region will hold the result of a computation" (TSTORE of a
//     matmul accumulator). A read of the region first completes it; so does a newer write to
//     it (writes land in program order). The logical process completes its own pending writes
//     when the kernel ends, before anyone else can look.
// Every functional GM access goes through gm_before_read / gm_before_write, so deferring never
// changes what any instruction or the host sees. The hooks cost a check of the allocation's
// (usually short or empty) lists; the snapshot path only runs when a kernel overwrites GM it
// has loaded and not yet used, which correct kernels rarely do.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "sim/mem/gm_tensor.hpp"
#include "sim/mem/zeroed_buffer.hpp"

namespace tandem {

// A region of an allocation in storage order: `outer` runs of `inner_bytes`, `ld_bytes` apart.
struct GmSpan {
    std::int64_t offset = 0;
    std::int64_t outer = 0;
    std::int64_t inner_bytes = 0;
    std::int64_t ld_bytes = 0;

    static GmSpan of(const GmTensor& t);
    bool overlaps(const GmSpan& o) const;
};

class GmPin;
class PendingGmWrite;

struct GmDeferredState;

// A widened (fp32) copy of a pinned GM region, kept by a WorkScratch for the next product that
// reads the same region (the cube's tiles of one output row share an A row block, those of one
// column a B column block: without it each is widened again for every tile). Valid while the
// pins it keeps are not snapshotted: a pin is snapshotted before any write to its region, so the
// region's bytes are those that were widened.
struct WidenedRegion {
    // The allocation's state, kept alive so that its address, part of the key, is not reused
    // by another allocation while the entry exists.
    std::shared_ptr<GmDeferredState> state;
    GmTensor region;
    std::vector<std::shared_ptr<GmPin>> pins;  // together they cover the region
    ZeroedBuffer values;  // rows x cols floats in the region's storage order, packed (huge pages when large)
    float* floats() { return reinterpret_cast<float*>(values.data()); }
    std::uint64_t last_use = 0;
};

// Reusable buffers for completing deferred writes (one set per thread doing it).
struct WorkScratch {
    std::vector<float> a;
    std::vector<float> b;
    std::vector<float> c;
    // Recently widened GM operand regions (widen_gm_cached), least recently used evicted first.
    std::vector<WidenedRegion> widened;
    std::uint64_t widen_clock = 0;
};

// The deferred effects on one allocation; shared by the allocation and everything that refers
// to it, so that a pin or a pending write can outlive a failed run's memory safely.
struct GmDeferredState {
    std::shared_mutex mu;  // shared: reading through pins; exclusive: changing the lists or GM
    std::vector<GmPin*> pins;
    std::vector<std::shared_ptr<PendingGmWrite>> pending;
};

// A tile's deferred copy of a GM region (see above). Made by pin_gm_region(); shared by the
// tiles and matmul terms that refer to it; unregisters itself when the last reference goes.
class GmPin {
public:
    GmPin(const GmTensor& region, std::shared_ptr<GmDeferredState> state);
    ~GmPin();
    GmPin(const GmPin&) = delete;
    GmPin& operator=(const GmPin&) = delete;

    const GmTensor& region() const { return region_; }
    // Has the region been overwritten since (so reads come from the snapshot)? Stable once true.
    bool snapshotted() const { return snapshotted_.load(std::memory_order_acquire); }
    // Copies the sub-matrix rows [r0, r0+nr) x cols [c0, c0+nc) of the pinned region in the
    // region's storage order (row-major for ND, column-major for DN): raw, packed (`out` holds
    // nr*nc elements), or widened from fp16 or bf16 to fp32 with `out_ld` floats between the runs (rows
    // for ND, columns for DN). Take the allocation's lock.
    void copy_raw(int r0, int c0, int nr, int nc, std::byte* out) const;
    void widen(int r0, int c0, int nr, int nc, float* out, std::int64_t out_ld) const;

private:
    friend std::shared_ptr<GmPin> pin_gm_region(const GmTensor& region);
    friend void snapshot_overlapping_pins_locked(GmDeferredState& st, const GmSpan& span);
    // Copy the region's current bytes aside; called with the state's lock held exclusively.
    void take_snapshot_locked();
    void widen_locked(int r0, int c0, int nr, int nc, float* out, std::int64_t out_ld) const;
    const std::byte* element_locked(int r, int c) const;

    GmTensor region_;
    std::shared_ptr<GmDeferredState> state_;
    std::vector<std::byte> snapshot_;  // the region packed in storage order, once snapshotted
    std::atomic<bool> snapshotted_{false};
    std::size_t index_ = 0;  // position in state_->pins while registered
    bool registered_ = false;
};

// A deferred write of a computed result into a GM region. Subclasses compute the result; the
// base class handles ordering against other accesses. The write runs once, by whoever needs it
// first (the owner at kernel end, or a reader or writer of an overlapping region); the others
// wait for it.
class PendingGmWrite {
public:
    explicit PendingGmWrite(const GmTensor& dst);
    virtual ~PendingGmWrite() = default;

    const GmTensor& destination() const { return dst_; }
    // Run the write now unless it has run or is running (then wait for it to be done).
    void complete(WorkScratch& scratch);

    // For a batch evaluator that computes several writes together: claim() takes this write
    // over (false if it already ran or is running); until finish_claimed(), whoever needs it
    // done waits. The evaluator writes the destination itself (after snapshot_pins_over() on
    // it), or gives the write back with run_claimed().
    bool claim();
    void finish_claimed();
    void run_claimed(WorkScratch& scratch);

protected:
    // Compute the result and write it with write_destination(). Runs once.
    virtual void run(WorkScratch& scratch) = 0;
    // Writes into the destination: `emit()` does the actual copy, under the allocation's lock,
    // after pins on the region are snapshotted and this write is retired from the list.
    template <class Emit>
    void write_destination(Emit&& emit) {
        std::unique_lock lock(begin_write_locked());
        emit();
    }

private:
    std::unique_lock<std::shared_mutex> begin_write_locked();

    void retire();
    void mark_done();

    enum class State : std::uint8_t { Idle, Running, Claimed, Done };
    GmTensor dst_;
    std::mutex state_mu_;
    std::condition_variable done_cv_;
    State state_ = State::Idle;
};

// Before reading [span] of `alloc` (eagerly): completes pending writes overlapping it.
// `scratch`: the caller's reusable buffers for computing them (a stream's, from its instruction);
// without it, fresh ones, which costs their first touch at every call (host-side callers).
void gm_before_read(const GmAllocation& alloc, const GmSpan& span, WorkScratch& scratch);
void gm_before_read(const GmAllocation& alloc, const GmSpan& span);
// Before writing [span] of `alloc` (eagerly or by registering a pending write): snapshots the
// pins overlapping it and completes the older pending writes overlapping it.
void gm_before_write(const GmAllocation& alloc, const GmSpan& span, WorkScratch& scratch);
void gm_before_write(const GmAllocation& alloc, const GmSpan& span);
// Snapshot the pins overlapping [span] of `alloc` (before writing it outside the hooks).
void snapshot_pins_over(const GmAllocation& alloc, const GmSpan& span);
// The same, with `st.mu` already held exclusively.
void snapshot_overlapping_pins_locked(GmDeferredState& st, const GmSpan& span);
// Pin `region` for a deferred load (after completing pending writes that overlap it).
std::shared_ptr<GmPin> pin_gm_region(const GmTensor& region);
// Register `w` on its destination (after gm_before_write on it).
void register_pending_write(const std::shared_ptr<PendingGmWrite>& w);

// Widens the fp16 or bf16 GM region `t` straight from memory into `out` in its storage order, `out_ld`
// floats between runs, if none of `pins` (all on t's allocation) has been snapshotted; returns
// false (and does nothing) otherwise. Takes the allocation's lock.
bool widen_gm_if_unchanged(const GmTensor& t, const std::vector<const GmPin*>& pins, float* out, std::int64_t out_ld);

// The fp16 or bf16 GM region `t` widened to fp32 in its storage order, packed (rows x cols; runs
// are rows for ND, columns for DN), if none of `pins` (on t's allocation, together covering it)
// has been snapshotted; nullptr otherwise. Served from `scratch.widened` when the same region
// was widened before and the pins kept with it are still unsnapshotted (its bytes unchanged
// since), else widened now and kept (at most the bounds below per scratch, least recently used
// evicted; their buffers reused). The pointer is valid until the next call on `scratch`.
// The values are exactly those widen_gm_if_unchanged would produce.
// At most kWidenCacheEntries regions (a row block of A and the column blocks of B for a few N
// tiles: the order in which a kernel's tiles are evaluated) and kWidenCacheBytes per scratch.
inline constexpr std::size_t kWidenCacheEntries = 6;
inline constexpr std::size_t kWidenCacheBytes = std::size_t{32} << 20;
const float* widen_gm_cached(const GmTensor& t, const std::vector<std::shared_ptr<GmPin>>& pins, WorkScratch& scratch);

}  // namespace tandem
