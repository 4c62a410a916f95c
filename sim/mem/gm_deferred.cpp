#include "sim/mem/gm_deferred.hpp"

#include <algorithm>
#include <cstring>

#include "sim/mem/fp16_widen.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

GmDeferredState& state_of(const GmAllocation& alloc) {
    if (!alloc.deferred) throw SimError("internal: GM allocation '" + alloc.name + "' has no deferred-effect state");
    return *alloc.deferred;
}

// Pending writes overlapping `span`, with `st.mu` held (the caller completes them unlocked:
// completing one locks the allocations it reads and writes; each removes itself from the list).
std::vector<std::shared_ptr<PendingGmWrite>> overlapping_pending_locked(const GmDeferredState& st, const GmSpan& span) {
    std::vector<std::shared_ptr<PendingGmWrite>> hit;
    for (const auto& w : st.pending)
        if (GmSpan::of(w->destination()).overlaps(span)) hit.push_back(w);
    return hit;
}

void complete_all(const std::vector<std::shared_ptr<PendingGmWrite>>& writes, WorkScratch& scratch) {
    for (const auto& w : writes) w->complete(scratch);
}

// Widens `nr` x `nc` fp16, bf16 or fp32 elements whose run i starts at `run(i)` (runs are rows for
// ND, columns for DN) into `out`, `out_ld` floats between runs.
template <class RunStart>
void widen_runs(DType dtype, bool nd, int nr, int nc, float* out, std::int64_t out_ld, RunStart run) {
    const int runs = nd ? nr : nc;
    const std::size_t len = static_cast<std::size_t>(nd ? nc : nr);
    for (int i = 0; i < runs; ++i) widen_to_float(dtype, run(i), out + i * out_ld, len);
}

bool is_cube_operand_dtype(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32; }

}  // namespace

// ---- GmSpan -----------------------------------------------------------------------------------

GmSpan GmSpan::of(const GmTensor& t) {
    const std::int64_t esize = dtype_bytes(t.dtype());
    const bool nd = t.layout() == Layout::ND;
    return GmSpan{t.offset_bytes(), nd ? t.rows() : t.cols(), (nd ? t.cols() : t.rows()) * esize, t.ld() * esize};
}

bool GmSpan::overlaps(const GmSpan& o) const {
    if (outer <= 0 || o.outer <= 0 || inner_bytes <= 0 || o.inner_bytes <= 0) return false;
    // Same stride and neither wraps past a stride: compare as rectangles (runs x bytes), so the
    // column blocks of one matrix that share rows do not count as overlapping.
    if (ld_bytes == o.ld_bytes && ld_bytes > 0) {
        const std::int64_t r0 = offset / ld_bytes, c0 = offset % ld_bytes;
        const std::int64_t r1 = o.offset / ld_bytes, c1 = o.offset % ld_bytes;
        if (c0 + inner_bytes <= ld_bytes && c1 + o.inner_bytes <= ld_bytes) {
            return r0 < r1 + o.outer && r1 < r0 + outer && c0 < c1 + o.inner_bytes && c1 < c0 + inner_bytes;
        }
    }
    const std::int64_t end = offset + (outer - 1) * ld_bytes + inner_bytes;
    const std::int64_t o_end = o.offset + (o.outer - 1) * o.ld_bytes + o.inner_bytes;
    return offset < o_end && o.offset < end;
}

// ---- GmPin ------------------------------------------------------------------------------------

GmPin::GmPin(const GmTensor& region, std::shared_ptr<GmDeferredState> state) : region_(region), state_(std::move(state)) {}

GmPin::~GmPin() {
    if (!registered_) return;
    std::unique_lock lock(state_->mu);
    auto& pins = state_->pins;
    pins[index_] = pins.back();
    pins[index_]->index_ = index_;
    pins.pop_back();
}

void GmPin::take_snapshot_locked() {
    const std::int64_t esize = dtype_bytes(region_.dtype());
    const bool nd = region_.layout() == Layout::ND;
    const int outer = nd ? region_.rows() : region_.cols();
    const std::int64_t inner_bytes = (nd ? region_.cols() : region_.rows()) * esize;
    snapshot_.resize(static_cast<std::size_t>(outer * inner_bytes));
    for (int i = 0; i < outer; ++i) {
        const std::byte* src = nd ? region_.element_ptr(i, 0) : region_.element_ptr(0, i);
        std::memcpy(snapshot_.data() + i * inner_bytes, src, static_cast<std::size_t>(inner_bytes));
    }
    snapshotted_.store(true, std::memory_order_release);
}

const std::byte* GmPin::element_locked(int r, int c) const {
    if (!snapshotted()) return region_.element_ptr(r, c);
    const std::int64_t esize = dtype_bytes(region_.dtype());
    const std::int64_t idx = region_.layout() == Layout::ND ? std::int64_t{r} * region_.cols() + c
                                                            : std::int64_t{c} * region_.rows() + r;
    return snapshot_.data() + idx * esize;
}

void GmPin::copy_raw(int r0, int c0, int nr, int nc, std::byte* out) const {
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(region_.dtype()));
    std::shared_lock lock(state_->mu);
    if (region_.layout() == Layout::ND) {
        for (int r = 0; r < nr; ++r) std::memcpy(out + static_cast<std::size_t>(r) * nc * esize, element_locked(r0 + r, c0), nc * esize);
    } else {
        for (int c = 0; c < nc; ++c) std::memcpy(out + static_cast<std::size_t>(c) * nr * esize, element_locked(r0, c0 + c), nr * esize);
    }
}

void GmPin::widen(int r0, int c0, int nr, int nc, float* out, std::int64_t out_ld) const {
    std::shared_lock lock(state_->mu);
    widen_locked(r0, c0, nr, nc, out, out_ld);
}

void GmPin::widen_locked(int r0, int c0, int nr, int nc, float* out, std::int64_t out_ld) const {
    if (!is_cube_operand_dtype(region_.dtype())) throw SimError("internal: widening a pinned region that is not fp16, bf16 or fp32");
    const bool nd = region_.layout() == Layout::ND;
    widen_runs(region_.dtype(), nd, nr, nc, out, out_ld, [&](int i) { return nd ? element_locked(r0 + i, c0) : element_locked(r0, c0 + i); });
}

// ---- PendingGmWrite ---------------------------------------------------------------------------

PendingGmWrite::PendingGmWrite(const GmTensor& dst) : dst_(dst) {}

void PendingGmWrite::complete(WorkScratch& scratch) {
    std::unique_lock lock(state_mu_);
    for (;;) {
        if (state_ == State::Done) return;
        if (state_ == State::Idle) {
            state_ = State::Running;
            lock.unlock();
            run(scratch);
            mark_done();
            return;
        }
        done_cv_.wait(lock);
    }
}

bool PendingGmWrite::claim() {
    std::lock_guard lock(state_mu_);
    if (state_ != State::Idle) return false;
    state_ = State::Claimed;
    return true;
}

void PendingGmWrite::finish_claimed() {
    retire();
    mark_done();
}

void PendingGmWrite::run_claimed(WorkScratch& scratch) {
    run(scratch);
    mark_done();
}

void PendingGmWrite::mark_done() {
    {
        std::lock_guard lock(state_mu_);
        state_ = State::Done;
    }
    done_cv_.notify_all();
}

void PendingGmWrite::retire() {
    GmDeferredState& st = state_of(dst_.allocation());
    std::unique_lock lock(st.mu);
    std::erase_if(st.pending, [this](const std::shared_ptr<PendingGmWrite>& w) { return w.get() == this; });
}

std::unique_lock<std::shared_mutex> PendingGmWrite::begin_write_locked() {
    GmDeferredState& st = state_of(dst_.allocation());
    const GmSpan span = GmSpan::of(dst_);
    // Older pending writes to the region were completed when this one was registered, and a
    // newer one completes this one first; so only pins need attention here.
    std::unique_lock lock(st.mu);
    std::erase_if(st.pending, [this](const std::shared_ptr<PendingGmWrite>& w) { return w.get() == this; });
    snapshot_overlapping_pins_locked(st, span);
    return lock;
}

// ---- hooks ------------------------------------------------------------------------------------

void gm_before_read(const GmAllocation& alloc, const GmSpan& span, WorkScratch& scratch) {
    GmDeferredState& st = state_of(alloc);
    std::vector<std::shared_ptr<PendingGmWrite>> earlier;
    {
        std::shared_lock lock(st.mu);
        if (st.pending.empty()) return;
        earlier = overlapping_pending_locked(st, span);
    }
    complete_all(earlier, scratch);
}

void gm_before_read(const GmAllocation& alloc, const GmSpan& span) {
    WorkScratch scratch;
    gm_before_read(alloc, span, scratch);
}

void gm_before_write(const GmAllocation& alloc, const GmSpan& span, WorkScratch& scratch) {
    GmDeferredState& st = state_of(alloc);
    std::vector<std::shared_ptr<PendingGmWrite>> earlier;
    {
        std::unique_lock lock(st.mu);
        snapshot_overlapping_pins_locked(st, span);
        earlier = overlapping_pending_locked(st, span);
    }
    complete_all(earlier, scratch);
}

void gm_before_write(const GmAllocation& alloc, const GmSpan& span) {
    WorkScratch scratch;
    gm_before_write(alloc, span, scratch);
}

void snapshot_overlapping_pins_locked(GmDeferredState& st, const GmSpan& span) {
    for (GmPin* p : st.pins)
        if (!p->snapshotted() && GmSpan::of(p->region()).overlaps(span)) p->take_snapshot_locked();
}

void snapshot_pins_over(const GmAllocation& alloc, const GmSpan& span) {
    GmDeferredState& st = state_of(alloc);
    std::unique_lock lock(st.mu);
    snapshot_overlapping_pins_locked(st, span);
}

std::shared_ptr<GmPin> pin_gm_region(const GmTensor& region) {
    const GmAllocation& alloc = region.allocation();
    gm_before_read(alloc, GmSpan::of(region));
    auto pin = std::make_shared<GmPin>(region, alloc.deferred);
    std::unique_lock lock(alloc.deferred->mu);
    pin->index_ = alloc.deferred->pins.size();
    pin->registered_ = true;
    alloc.deferred->pins.push_back(pin.get());
    return pin;
}

void register_pending_write(const std::shared_ptr<PendingGmWrite>& w) {
    GmDeferredState& st = state_of(w->destination().allocation());
    std::unique_lock lock(st.mu);
    st.pending.push_back(w);
}

}  // namespace tandem

namespace tandem {

bool widen_gm_if_unchanged(const GmTensor& t, const std::vector<const GmPin*>& pins, float* out, std::int64_t out_ld) {
    if (!is_cube_operand_dtype(t.dtype())) throw SimError("internal: widening a GM region that is not fp16, bf16 or fp32");
    std::shared_lock lock(state_of(t.allocation()).mu);
    for (const GmPin* p : pins)
        if (p->snapshotted()) return false;
    const bool nd = t.layout() == Layout::ND;
    widen_runs(t.dtype(), nd, t.rows(), t.cols(), out, out_ld, [&](int i) { return nd ? t.element_ptr(i, 0) : t.element_ptr(0, i); });
    return true;
}

}  // namespace tandem

namespace tandem {

namespace {

bool same_key(const WidenedRegion& e, const GmDeferredState* state, const GmTensor& t) {
    return e.state.get() == state && e.region.same_region(t);
}

bool any_snapshotted(const std::vector<std::shared_ptr<GmPin>>& pins) {
    return std::any_of(pins.begin(), pins.end(), [](const std::shared_ptr<GmPin>& p) { return p->snapshotted(); });
}

std::size_t cached_bytes(const std::vector<WidenedRegion>& cache) {
    std::size_t bytes = 0;
    for (const WidenedRegion& e : cache) bytes += e.values.size();
    return bytes;
}

}  // namespace

const float* widen_gm_cached(const GmTensor& t, const std::vector<std::shared_ptr<GmPin>>& pins, WorkScratch& scratch) {
    if (!is_cube_operand_dtype(t.dtype())) throw SimError("internal: widening a GM region that is not fp16, bf16 or fp32");
    const std::shared_ptr<GmDeferredState>& state = t.allocation().deferred;
    if (!state) throw SimError("internal: GM allocation '" + t.allocation().name + "' has no deferred-effect state");
    // What a reused entry let go of: released after the lock (a pin's destructor locks its
    // allocation's state exclusively, maybe this one).
    std::vector<std::shared_ptr<GmPin>> released_pins;
    std::shared_ptr<GmDeferredState> released_state;
    std::shared_lock lock(state->mu);
    if (any_snapshotted(pins)) return nullptr;
    auto& cache = scratch.widened;
    const std::uint64_t now = ++scratch.widen_clock;
    for (WidenedRegion& e : cache) {
        if (!same_key(e, state.get(), t)) continue;
        if (!any_snapshotted(e.pins)) {  // unchanged since it was widened
            e.last_use = now;
            return e.floats();
        }
        e.last_use = 0;  // stale: the first to be reused below
        break;
    }
    const std::size_t need = static_cast<std::size_t>(t.rows()) * static_cast<std::size_t>(t.cols());
    // The entry to fill: a stale one for this key, else a new one while the budget allows, else
    // the least recently used (its buffer reused: no fresh pages to fault in).
    WidenedRegion* slot = nullptr;
    for (WidenedRegion& e : cache)
        if (same_key(e, state.get(), t)) slot = &e;
    if (slot == nullptr && (cache.empty() || (cache.size() < kWidenCacheEntries &&
                                              cached_bytes(cache) + need * sizeof(float) <= kWidenCacheBytes))) {
        slot = &cache.emplace_back();
    }
    if (slot == nullptr) {
        // The least recently used whose buffer is large enough (no fresh pages to clear), else
        // the least recently used.
        const std::size_t need_bytes = need * sizeof(float);
        slot = &*std::min_element(cache.begin(), cache.end(), [&](const WidenedRegion& x, const WidenedRegion& y) {
            const bool x_fits = x.values.size() >= need_bytes, y_fits = y.values.size() >= need_bytes;
            if (x_fits != y_fits) return x_fits;
            return x.last_use < y.last_use;
        });
        // Never the previous call's region: its values may still be in use (a product's A when
        // this is its B).
        if (slot->last_use + 1 == now) slot = &cache.emplace_back();
    }
    released_pins = std::move(slot->pins);
    released_state = std::move(slot->state);
    slot->state = state;
    slot->region = t;
    slot->pins = pins;
    // Every element is written before it is read: a buffer is only replaced when too small.
    if (slot->values.size() < need * sizeof(float)) slot->values = ZeroedBuffer(need * sizeof(float));
    slot->last_use = now;
    const bool nd = t.layout() == Layout::ND;
    widen_runs(t.dtype(), nd, t.rows(), t.cols(), slot->floats(), nd ? t.cols() : t.rows(),
               [&](int i) { return nd ? t.element_ptr(i, 0) : t.element_ptr(0, i); });
    const float* values = slot->floats();
    lock.unlock();
    return values;
}

}  // namespace tandem
