#include "sim/sanitize/stream_sanitizer.hpp"

#include <fmt/format.h>

#include "sim/core/block_slot.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem {

void StreamSanitizer::begin_kernel(const VectorClock& host_clock, std::uint64_t host_call, SanKernel kernel) {
    kernel_ = std::move(kernel);
    stream_clock_.join(host_clock);
    call_ = host_call;
    ++launch_;
    stale_reported_.clear();
    kernel_end_ = stream_clock_;
    blocks_.clear();
    for (VectorClock& f : cross_flags_) f = VectorClock();
}

void StreamSanitizer::start_block(const SanPart& blk) {
    BlockState& s = blocks_[blk.slot];
    s = BlockState();
    s.key = thread_key(stream_.rank, static_cast<std::uint64_t>(stream_.stream_id), blk.slot);
    s.vc = stream_clock_;
    // The slot's thread goes on from its previous kernel (which this one follows on the stream).
    s.clock = std::max(slot_clock_[blk.slot], stream_clock_.get(s.key)) + 1;
}

StreamSanitizer::BlockState& StreamSanitizer::state(const SanPart& blk) { return blocks_[blk.slot]; }

std::string StreamSanitizer::where(const SanPart& blk, const char* instr) const {
    return fmt::format("rank {}, stream '{}', kernel '{}', {}, {} issued at {:.3f} us", stream_.rank, stream_.name,
                       kernel_.name, block_slot_label(blk.slot, kernel_.mix), instr, to_us(blk.now));
}

void StreamSanitizer::access(const SanPart& blk, Access kind, const GmTensor& gm, SimTime effective, Pipe pipe,
                             const char* instr) {
    // A launch run for its timing only (a benchmark view) moves no data: nothing it "writes" can
    // be seen, so its accesses are not checked.
    if (kernel_.timing_only) return;
    BlockState& s = state(blk);
    if (!s.snapshot) s.snapshot = std::make_shared<const VectorClock>(s.vc);
    SanAccess a;
    a.time = effective;
    a.thread = s.key;
    a.seq = seq_++;
    a.kind = kind == Access::Read ? SanAccess::Kind::Read : kind == Access::Write ? SanAccess::Kind::Write : SanAccess::Kind::Atomic;
    a.alloc = &gm.allocation();
    a.offset = gm.offset_bytes();
    const std::int64_t es = dtype_bytes(gm.dtype());
    // The rows as stored: ND rows, or DN columns.
    const bool nd = gm.layout() == Layout::ND;
    a.rows = nd ? gm.rows() : gm.cols();
    a.row_bytes = std::int64_t{nd ? gm.cols() : gm.rows()} * es;
    a.ld_bytes = gm.ld() * es;
    a.issue_clock = s.clock;
    a.epoch = s.clock;
    a.vc = s.snapshot;
    a.where = where(blk, instr);
    if (kind != Access::Read) s.pending.emplace_back(pipe, accesses_.size());
    accesses_.push_back(std::move(a));
}

void StreamSanitizer::finish_pending(BlockState& s, Pipe pipe, bool block_done) {
    std::size_t keep = 0;
    for (auto& p : s.pending) {
        // pipe_barrier(PIPE_ALL) drains the core's pipes, not the SDMA engine: its copies (the
        // only writes riding on Pipe::S) complete at WAIT_ASYNC or with the block.
        const bool drained = p.first == pipe || (pipe == Pipe::ALL && (p.first != Pipe::S || block_done));
        if (drained) accesses_[p.second].epoch = s.clock;
        else s.pending[keep++] = p;
    }
    s.pending.resize(keep);
}

void StreamSanitizer::pipe_waited(const SanPart& blk, Pipe pipe) {
    BlockState& s = state(blk);
    if (!s.pending.empty()) finish_pending(s, pipe);
}

void StreamSanitizer::pipe_ordered(const SanPart& blk, Pipe src, Pipe dst) {
    for (auto& p : state(blk).pending)
        if (p.first == src) p.first = dst;
}

void StreamSanitizer::release_clock(BlockState& s, const SanPart& blk, const char* what) {
    s.vc.set(s.key, s.clock);
    releases_.push_back(SanRelease{s.key, s.clock, where(blk, what)});
}

std::shared_ptr<const VectorClock> StreamSanitizer::release(const SanPart& blk, const char* what) {
    BlockState& s = state(blk);
    release_clock(s, blk, what);
    auto published = std::make_shared<const VectorClock>(s.vc);
    // Writes still in flight get a later epoch than this release: it does not publish them.
    ++s.clock;
    s.snapshot.reset();
    return published;
}

std::shared_ptr<const SanSignalStamp> StreamSanitizer::signal_release(const SanPart& blk, const std::string& what,
                                                                      SimTime visible) {
    BlockState& s = state(blk);
    release_clock(s, blk, what.c_str());
    auto stamp = std::make_shared<SanSignalStamp>();
    stamp->clock = s.vc;
    stamp->thread = s.key;
    stamp->thread_clock = s.clock;
    stamp->call = call_;
    stamp->where = fmt::format("call {}, launch {} of rank {}'s stream '{}': {}, visible at {:.3f} us", call_, launch_,
                               stream_.rank, stream_.name, releases_.back().where, to_us(visible));
    ++s.clock;
    s.snapshot.reset();
    return stamp;
}

void StreamSanitizer::check_wait(const SanPart& blk, const SanSignalStamp* w, std::int64_t address,
                                 const std::function<std::string()>& wait, SimTime issued) {
    if (w == nullptr || w->by_host || w->call >= call_) return;
    // Known to the launching host: the write happened before this kernel's launch.
    if (stream_clock_.get(w->thread) < w->thread_clock) return;
    if (!stale_reported_.insert(address).second) return;  // one report per word and kernel
    SanViolation v;
    v.cls = kClassStaleFlag;
    v.text = fmt::format(
        "[{}] a wait was satisfied by a flag value written in an earlier host call (a reused workspace not "
        "reset, or a flag value not versioned per call)\n  flag: {}\n  write: {}\n  wait: call {}, launch {} of rank "
        "{}'s stream '{}': rank {}, stream '{}', kernel '{}', {}, {} issued at {:.3f} us, satisfied at {:.3f} us",
        v.cls, stream_.gm->describe(address), w->where, call_, launch_, stream_.rank, stream_.name, stream_.rank,
        stream_.name, kernel_.name, block_slot_label(blk.slot, kernel_.mix), wait(), to_us(issued), to_us(blk.now));
    san_.add_violation(std::move(v));
}

void StreamSanitizer::acquire(const SanPart& blk, const VectorClock& vc) {
    BlockState& s = state(blk);
    s.vc.join(vc);
    s.snapshot.reset();
}

void StreamSanitizer::end_block(const SanPart& blk) {
    BlockState& s = state(blk);
    finish_pending(s, Pipe::ALL, true);
    s.vc.set(s.key, s.clock);
    kernel_end_.join(s.vc);
    slot_clock_[blk.slot] = s.clock;
}

void StreamSanitizer::end_kernel() {
    stream_clock_.join(kernel_end_);
    // A failed kernel's blocks never ended: their writes count as done at their last clock.
    for (auto& [slot, s] : blocks_) finish_pending(s, Pipe::ALL, true);
    blocks_.clear();
    san_.add_accesses(std::move(accesses_), std::move(releases_));
    accesses_.clear();
    releases_.clear();
}

}  // namespace tandem
