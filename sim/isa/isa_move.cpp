// TLOAD, TSTORE (GM <-> tile, local or across the interconnect) and TEXTRACT (L1 -> L0A/L0B).
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "sim/isa/deferred_cube.hpp"
#include "sim/isa/hazard.hpp"
#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/isa/tile_copy.hpp"
#include "sim/mem/chip_memory.hpp"
#include "sim/mem/cluster_port.hpp"
#include "sim/net/topology.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/sim_error.hpp"

namespace tandem {
namespace isa_detail {

namespace {

// The FIX pipe casts an fp32 accumulator to fp16 or bf16 on its way to GM, and converts an int32
// one (the int8 cube's) to fp32 (exact while |value| < 2^24, else rounded to nearest even): the
// Iris-family ops' int8 path stores its sums that way, plainly, as atomic adds or to a peer.
bool fix_casts(const Tile& t, const GmTensor& g) {
    if (t.kind != MemKind::L0C) return false;
    if (t.dtype == DType::I32) return g.dtype() == DType::F32;
    return t.dtype == DType::F32 && (g.dtype() == DType::F16 || g.dtype() == DType::BF16);
}

void check_same_shape(const char* instr, const Tile& t, const GmTensor& g, bool store) {
    const bool dtype_ok = t.dtype == g.dtype() || (store && fix_casts(t, g));
    if (t.rows != g.rows() || t.cols != g.cols() || !dtype_ok) {
        throw SimError(fmt::format("{}: tile '{}' is {}x{} {} but the GM tensor is {}", instr, t.name, t.rows, t.cols,
                                   dtype_name(t.dtype), g.describe()));
    }
}

// The peer's allocation must be part of its window (memory registered for remote access).
void check_remote_target(const char* instr, const BlockCtx& blk, const GmTensor& g) {
    if (!g.allocation().shared) {
        throw SimError(fmt::format("peer-window access violation: {} from rank {} touches rank {}'s '{}', which is not "
                                   "in its peer window",
                                   instr, blk.rank(), g.rank(), g.allocation().name));
    }
}

}  // namespace

void check_hazard(const char* instr, const Tile& t, SimTime start, bool writes) {
    if (t.write_end > start) {
        throw SimError(fmt::format("hazard: {} starts at {:.4f} us on tile '{}' before the {} writing it ends at "
                                   "{:.4f} us (missing set_flag/wait_flag?)",
                                   instr, to_us(start), t.name, t.last_writer, to_us(t.write_end)));
    }
    if (writes && t.read_end > start) {
        throw SimError(fmt::format("hazard: {} overwrites tile '{}' at {:.4f} us while an earlier read of it runs "
                                   "until {:.4f} us (missing set_flag/wait_flag?)",
                                   instr, t.name, to_us(start), to_us(t.read_end)));
    }
}

MemMove::MemMove(Dir dir, Tile& tile, const GmTensor& gm, AtomicType atomic, const Tile* scale)
    : dir_(dir), atomic_(atomic), tile_(tile), gm_(gm), blk_(*tile.owner), scale_(scale) {
    prepare();
}

void MemMove::prepare() {
    const char* instr = scale_ != nullptr ? "TSTORE_FP" : (dir_ == Dir::Load ? "TLOAD" : "TSTORE");
    blk_.current_instr = instr;
    if (!gm_.valid()) throw SimError(fmt::format("{}: the GM tensor is not set", instr));
    if (scale_ != nullptr) {
        if (tile_.kind != MemKind::L0C || tile_.dtype != DType::I32 || !is_float_dtype(gm_.dtype()) ||
            tile_.rows != gm_.rows() || tile_.cols != gm_.cols()) {
            throw SimError(fmt::format("TSTORE_FP: takes an int32 L0C tile into an fp32, fp16 or bf16 GM tensor of its "
                                       "shape; got tile '{}' {}x{} {} in {}, GM {}",
                                       tile_.name, tile_.rows, tile_.cols, dtype_name(tile_.dtype),
                                       mem_kind_name(tile_.kind), gm_.describe()));
        }
        if (scale_->kind != MemKind::L1 || scale_->dtype != DType::F32 || scale_->rows != 1 || scale_->cols != tile_.cols) {
            throw SimError(fmt::format("TSTORE_FP: scale '{}' must be an fp32 L1 tile of 1x{}, got {}x{} {} in {}",
                                       scale_->name, tile_.cols, scale_->rows, scale_->cols, dtype_name(scale_->dtype),
                                       mem_kind_name(scale_->kind)));
        }
        if (gm_.rank() != blk_.rank()) throw SimError("TSTORE_FP: the fixpipe stores into local GM only");
    } else {
        check_same_shape(instr, tile_, gm_, dir_ == Dir::Store);
    }
    if (atomic_ == AtomicType::AtomicAdd && !is_float_dtype(gm_.dtype())) {
        throw SimError(fmt::format("TSTORE with AtomicAdd into {}: atomic adds take fp32, fp16 or bf16", gm_.describe()));
    }
    if (dir_ == Dir::Load) {
        if (tile_.kind != MemKind::L1 && tile_.kind != MemKind::UB) {
            throw SimError(fmt::format("TLOAD into {} tile '{}': TLOAD writes L1 (AIC) or UB (AIV)",
                                       mem_kind_name(tile_.kind), tile_.name));
        }
        pipe_ = Pipe::MTE2;
    } else {
        if (tile_.kind != MemKind::L0C && tile_.kind != MemKind::UB) {
            throw SimError(fmt::format("TSTORE from {} tile '{}': TSTORE reads L0C (AIC, FIX pipe) or UB (AIV, MTE3 pipe)",
                                       mem_kind_name(tile_.kind), tile_.name));
        }
        pipe_ = tile_.kind == MemKind::L0C ? Pipe::FIX : Pipe::MTE3;
    }
    blk_.require_pipe(pipe_, instr);
    if (gm_.rank() != blk_.rank()) check_remote_target(instr, blk_, gm_);
    issue_ = blk_.now() + blk_.cost().issue_ps;
    start_ = blk_.pipe_start(pipe_, issue_);
}

// Ordered by issue time (the scalar's clock), not by the pipe start: a block's clock never goes
// below the time it was last resumed at, and bookings in the calendars are made in issue order.
bool MemMove::await_ready() { return blk_.lp().may_proceed(blk_, issue_); }

void MemMove::await_suspend(std::coroutine_handle<> h) { blk_.lp().park(blk_, issue_, h); }

namespace {

// An AIC's GM -> L1 rate where its cluster's port is shared with its AIVs' remote reads in
// flight (sim/MODEL.md "A cluster's port"): `cap` x P / (P + H), H the bytes the AIVs held on
// average over the sample before the load's issue. A load is issued ahead of its pipe, before
// the AIVs have booked what runs beside it, so their recent holding stands for it.
std::int64_t cluster_port_rate_bps(const LogicalProcess& lp, const BlockCtx& blk, SimTime issue, std::int64_t cap) {
    const CostModel& cost = lp.cost();
    const SimTime from = issue > cost.cluster_port_sample_ps ? issue - cost.cluster_port_sample_ps : 0;
    if (issue <= from) return cap;
    const double held = lp.port_held_bytes(blk.core().index, from, issue);
    if (held <= 0) return cap;
    const double port = static_cast<double>(cost.cluster_port_bytes);
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(cap) * port / (port + held)));
}

// When the last of `bytes` of payload crossing `route` from `begin` has moved, at most `cap` for the
// core: the links carry the payload and the protocol beside it, bytes / `payload_share` at a
// cap as much higher (sim/MODEL.md "One core's remote traffic"), so a share below 1 shows only
// where the links bind.
SimTime book_wire(LogicalProcess& lp, const Topology::Route& route, SimTime begin, std::int64_t bytes,
                  std::int64_t cap, double payload_share) {
    if (payload_share >= 1.0) return lp.book_route(route.links(), begin, static_cast<double>(bytes), cap);
    const double wire_cap = std::round(static_cast<double>(cap) / payload_share);
    return lp.book_route(route.links(), begin, static_cast<double>(bytes) / payload_share,
                         static_cast<std::int64_t>(std::min(wire_cap, 9.0e18)));
}

// When the last byte of a move of `gm` (to or from `tile`'s core, issued at `issue`, its pipe free
// at `start`) has moved: a local one booked on the chip's L2 and HBM beside the other streams, a
// remote one on the links of its route, the peer's memory noted as used while the bytes cross.
// A remote write also sets `landed` (when its last byte is in the peer's memory) and
// `write_acked` (when its response is back at the core); a posted one returns when its last byte
// has left, before it lands.
SimTime book_move(LogicalProcess& lp, const BlockCtx& blk, const Tile& tile, const GmTensor& gm, MemAccess access,
                  SimTime issue, SimTime start, SimTime& landed, SimTime& write_acked) {
    const CostModel& cost = lp.cost();
    const bool load = access == MemAccess::Read;
    const std::int64_t bytes = gm.bytes();  // what reaches GM (after a FIX cast, its narrower dtype)
    if (gm.rank() == blk.rank()) {
        std::int64_t cap;
        if (load) cap = tile.kind == MemKind::L1 ? cost.gm_to_l1_bps : cost.gm_to_ub_bps;
        else cap = tile.kind == MemKind::L0C ? cost.l0c_to_gm_bps : cost.ub_to_gm_bps;
        if (load && tile.kind == MemKind::L1 && cost.cluster_port_bytes > 0) cap = cluster_port_rate_bps(lp, blk, issue, cap);
        return lp.memory().book_local(gm, access, issue, start + cost.gm_latency_ps, static_cast<double>(bytes), cap,
                                      load ? cost.local_reads : ReadRequests{});
    }
    const int src = load ? gm.rank() : blk.rank();
    const int dst = load ? blk.rank() : gm.rank();
    const auto route = lp.topology().route(src, dst);
    const SimTime begin = start + cost.gm_latency_ps;
    if (load) {
        // A read's requests leave while the core has room in flight for them, and each brings its
        // data back a round trip later: a read within the window takes one round trip, a longer one
        // window / round trip per byte, and no less than its route's resources give it
        // (sim/MODEL.md "One core's remote traffic").
        const SimTime round_trip = cost.remote_read_round_trip_ps + route.scale_out_ps();
        const SimTime moved = book_wire(lp, route, begin, bytes, cost.remote_read_rate_bps(round_trip), cost.read_payload_share);
        const SimTime end = std::max(moved, begin + round_trip);
        if (cost.cluster_port_bytes > 0 && blk.core_type() == CoreType::AIV) {
            // Its requests hold the cluster's port until their data is back: at most a window's.
            lp.note_port_hold(PortHold{blk.core().index / 2, begin, end, std::min(bytes, cost.remote_read_window_bytes)});
        }
        ChipMemory& peer = *lp.chip(gm.rank()).memory;
        lp.memory().note_remote(peer, gm, access, issue, begin, moved, static_cast<double>(bytes));
        return end;
    }
    // A posted store's write requests leave while the core has room in flight for them, each held
    // for a request's round trip, so the store moves at most window / round trip (sim/MODEL.md
    // "One core's remote traffic"); its MTE3 is free once the last has left.
    const bool posted = cost.remote_write_window_bytes > 0;
    std::int64_t rate = cost.remote_store_rate_bps(bytes, gm.contiguous_runs());
    if (posted) rate = std::min(rate, cost.remote_write_rate_bps(cost.remote_read_round_trip_ps + route.scale_out_ps()));
    const SimTime moved = book_wire(lp, route, begin, bytes, rate, cost.write_payload_share);
    // A store's bytes land a route's latency after they leave.
    const SimTime hops = route.latency_ps();
    landed = moved + hops;
    write_acked = landed + hops;  // the write's response takes the route back
    // The peer's memory takes the write (an atomic add: read and written there) while the bytes
    // cross: a store lands a route's latency after it leaves.
    ChipMemory& peer = *lp.chip(gm.rank()).memory;
    lp.memory().note_remote(peer, gm, access, issue, begin + hops, landed, static_cast<double>(bytes));
    return posted ? moved : landed;
}

// The message that carries `tile`'s values into `gm` on another rank, or as an atomic add on any
// rank, delivered at a window barrier from `visible_at` on (in the coordinator's total order).
Message tile_message(Message::Kind kind, SimTime visible_at, const Tile& tile, const GmTensor& gm) {
    Message m;
    m.kind = kind;
    m.visible_at = visible_at;
    m.dst_rank = gm.rank();
    m.address = gm.address();
    m.dst_alloc = const_cast<GmAllocation*>(&gm.allocation());
    m.dst_offset = gm.offset_bytes();
    m.rows = tile.rows;
    m.row_bytes = std::int64_t{tile.cols} * dtype_bytes(gm.dtype());
    m.ld_bytes = gm.ld() * dtype_bytes(gm.dtype());
    m.dtype = gm.dtype();
    m.payload = pack_tile_as(tile, gm.dtype());
    return m;
}

// The fixpipe's dequant: int32 x scale[col] in fp32, rounded once to GM's dtype.
void store_dequantized(BlockCtx& blk, Tile& tile, const Tile& scale, const GmTensor& gm) {
    materialize(tile);
    const std::vector<float> sc = tile_values(scale);
    std::vector<float> v(static_cast<std::size_t>(tile.rows) * static_cast<std::size_t>(tile.cols));
    const auto* acc = tile.as<const std::int32_t>();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(acc[i]) * sc[i % static_cast<std::size_t>(tile.cols)];
    Tile wide;
    wide.owner = &blk;
    wide.name = tile.name;
    wide.kind = MemKind::L0C;
    wide.rows = tile.rows;
    wide.cols = tile.cols;
    wide.dtype = DType::F32;
    wide.data = reinterpret_cast<std::byte*>(v.data());
    copy_tile_to_gm(gm, wide, blk.lp().work_scratch());
}

// A functional move's data: `tile`'s values into `gm` (here, as a message to a peer, as an atomic
// add, or deferred until observed) or `gm`'s into `tile`. `scale`: TSTORE_FP's, or null.
void move_data(BlockCtx& blk, Tile& tile, const GmTensor& gm, const Tile* scale, bool load, bool atomic, bool remote,
               SimTime visible_at) {
    LogicalProcess& lp = blk.lp();
    if (atomic) {
        // Every atomic add is a message delivered at a window barrier in the coordinator's total
        // order (visible time, source, sequence), whichever stream or rank it comes from: the
        // order of the adds, and so the rounded sums, is fixed by simulated time.
        if (gm.layout() != Layout::ND) throw SimError("TSTORE with AtomicAdd supports the ND layout only");
        lp.send(tile_message(Message::Kind::AtomicAdd, visible_at, tile, gm));
    } else if (scale != nullptr) {
        store_dequantized(blk, tile, *scale, gm);
    } else if (load && tile.kind == MemKind::L1) {
        // Deferred: the tile refers to the region (sim/isa/deferred_cube.hpp).
        tile.pin = pin_gm_region(gm);
        tile.pin_row = tile.pin_col = 0;
        tile.chain.reset();
        tile.column_major = gm.layout() == Layout::DN;
    } else if (load) {
        copy_gm_to_tile(tile, gm, lp.work_scratch());
    } else if (!remote && tile.chain) {
        // Deferred: the accumulator's products are computed (and cast to the destination's dtype)
        // when observed or when the kernel ends.
        gm_before_write(gm.allocation(), GmSpan::of(gm), lp.work_scratch());
        auto store = std::make_shared<DeferredMatmulStore>(gm, tile.chain);
        register_pending_write(store);
        lp.defer(std::move(store));
    } else if (!remote) {
        copy_tile_to_gm(gm, tile, lp.work_scratch());
    } else {
        if (gm.layout() != Layout::ND) throw SimError("TSTORE into a peer's window supports the ND layout only");
        lp.send(tile_message(Message::Kind::Data, visible_at, tile, gm));
    }
}

}  // namespace

void MemMove::await_resume() {
    const bool load = dir_ == Dir::Load;
    const char* instr = scale_ != nullptr ? "TSTORE_FP" : (load ? "TLOAD" : "TSTORE");
    blk_.current_instr = instr;
    check_hazard(instr, tile_, start_, load);
    if (scale_ != nullptr) check_hazard(instr, *scale_, start_, false);
    blk_.now_ref() = issue_;
    LogicalProcess& lp = blk_.lp();
    const CostModel& cost = lp.cost();
    const bool remote = gm_.rank() != blk_.rank();
    const bool atomic = atomic_ == AtomicType::AtomicAdd;
    const std::int64_t bytes = gm_.bytes();  // what reaches GM (after a FIX cast, its narrower dtype)
    const MemAccess access = load ? MemAccess::Read : (atomic ? MemAccess::AtomicAdd : MemAccess::Write);
    SimTime landed = 0;
    SimTime write_acked = 0;
    SimTime end = book_move(lp, blk_, tile_, gm_, access, issue_, start_, landed, write_acked);
    const SimTime arrives = std::max(end, landed);  // in GM (a posted remote store lands after its pipe is free)
    blk_.remote_writes_acked_at = std::max(blk_.remote_writes_acked_at, write_acked);
    // A FIX store's own work is reading the accumulator from L0C and converting its layout: that
    // is its busy time (what the profiler counts as FIXP); the write drains into GM at the path's
    // rate behind it, and the pipe is held until the store completes (sim/MODEL.md "Pipe
    // accounting as the profiler counts it").
    // (A store whose write is quicker than the read, an fp32 accumulator cast to fp16, ends with its read.)
    SimTime busy_end = end;
    if (pipe_ == Pipe::FIX) {
        const SimTime read = cost.transfer_ps(tile_.bytes(), cost.fix_l0c_read_bps);
        busy_end = start_ + cost.gm_latency_ps + read;
        end = std::max(end, busy_end);
    }
    blk_.occupy(pipe_, start_, busy_end, end);
    if (load) {
        tile_.write_end = end;
        tile_.last_writer = "TLOAD";
    } else {
        tile_.read_end = std::max(tile_.read_end, end);
        if (scale_ != nullptr) const_cast<Tile*>(scale_)->read_end = std::max(scale_->read_end, end);
    }
    if (remote) lp.count_remote_bytes(load, bytes);
    // An atomic add lands at the target no earlier than an atomic's latency after issue.
    const SimTime visible = atomic ? std::max(arrives, issue_ + (remote ? cost.remote_atomic_ps : cost.local_atomic_ps)) : 0;
    record(blk_, pipe_, load ? Opcode::TLOAD : (atomic ? Opcode::TSTORE_ATOMIC_ADD : (scale_ != nullptr ? Opcode::TSTORE_FP : Opcode::TSTORE)), start_, busy_end,
           RecordArgs{bytes, gm_.address(), remote ? gm_.rank() : -1, 0, visible});
    if (StreamSanitizer* san = lp.sanitizer()) {
        using A = StreamSanitizer::Access;
        san->access(blk_.san_part(), load ? A::Read : (atomic ? A::Atomic : A::Write), gm_, load ? start_ : (atomic ? visible : arrives),
                    pipe_, atomic ? "TSTORE(AtomicAdd)" : instr);
    }
    if (blk_.functional()) move_data(blk_, tile_, gm_, scale_, load, atomic, remote, atomic ? visible : arrives);
}

}  // namespace isa_detail

isa_detail::MemMove TLOAD(Tile& dst, const GmTensor& src) {
    return isa_detail::MemMove(isa_detail::MemMove::Dir::Load, dst, src);
}

isa_detail::MemMove TSTORE(const GmTensor& dst, Tile& src, AtomicType atomic) {
    return isa_detail::MemMove(isa_detail::MemMove::Dir::Store, src, dst, atomic);
}

isa_detail::MemMove TSTORE_FP(const GmTensor& dst, Tile& acc, const Tile& scale) {
    return isa_detail::MemMove(isa_detail::MemMove::Dir::Store, acc, dst, AtomicType::None, &scale);
}

int textract_hardware_moves(const Tile& dst) {
    if (dst.kind != MemKind::L0B) return 1;  // set_fmatrix (a register) and one load3Dv2
    const std::int64_t k_bytes = std::int64_t{dst.rows} * dtype_bytes(dst.dtype);
    return static_cast<int>(std::max<std::int64_t>(1, (k_bytes + kFractalRowBytes - 1) / kFractalRowBytes));
}

void TEXTRACT(Tile& dst, const Tile& src, int row, int col) {
    BlockCtx& blk = *dst.owner;
    blk.current_instr = "TEXTRACT";
    blk.require_pipe(Pipe::MTE1, "TEXTRACT");
    if (src.kind != MemKind::L1 || (dst.kind != MemKind::L0A && dst.kind != MemKind::L0B)) {
        throw SimError(fmt::format("TEXTRACT moves L1 -> L0A/L0B, not {} '{}' -> {} '{}'", mem_kind_name(src.kind),
                                   src.name, mem_kind_name(dst.kind), dst.name));
    }
    if (src.dtype != dst.dtype || row < 0 || col < 0 || row + dst.rows > src.rows || col + dst.cols > src.cols) {
        throw SimError(fmt::format("TEXTRACT: {}x{} {} tile '{}' at ({}, {}) is outside the {}x{} {} tile '{}'", dst.rows,
                                   dst.cols, dtype_name(dst.dtype), dst.name, row, col, src.rows, src.cols,
                                   dtype_name(src.dtype), src.name));
    }
    const CostModel& cost = blk.cost();
    const int moves = textract_hardware_moves(dst);
    const SimTime issue = blk.now() + moves * cost.issue_ps;
    const SimTime start = blk.pipe_start(Pipe::MTE1, issue);
    isa_detail::check_hazard("TEXTRACT", src, start, false);
    isa_detail::check_hazard("TEXTRACT", dst, start, true);
    const std::int64_t bytes = dst.bytes();
    const SimTime end = start + moves * cost.mte1_latency_ps +
                        blk.cost_memo().transfer_ps(cost, bytes,
                                                    dst.kind == MemKind::L0A ? cost.l1_to_l0a_bps : cost.l1_to_l0b_bps);
    blk.now_ref() = issue;
    blk.occupy(Pipe::MTE1, start, end);
    dst.write_end = end;
    dst.last_writer = "TEXTRACT";
    const_cast<Tile&>(src).read_end = std::max(src.read_end, end);
    isa_detail::record(blk, Pipe::MTE1, Opcode::TEXTRACT, start, end, isa_detail::RecordArgs{bytes});
    if (!blk.functional()) return;
    if (src.pin) {  // deferred: a view of what the L1 tile refers to
        dst.pin = src.pin;
        dst.pin_row = src.pin_row + row;
        dst.pin_col = src.pin_col + col;
        dst.chain.reset();
        dst.column_major = src.column_major;
    } else {
        copy_tile_region(dst, src, row, col);
    }
}

}  // namespace tandem
