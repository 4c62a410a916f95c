#include "sim/sanitize/sanitizer.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/mem/global_memory.hpp"

namespace tandem {

namespace {

// Shadow cells of 32 bytes (Ascend's GM access granule: what a transfer costs is counted in
// them). Whether two accesses of a cell conflict is judged by the bytes each touches: a store
// of fewer than 32 bytes (MTE3 with a byte length, DataCopyPad) writes only its own bytes, so
// two cores storing different words of one granule do not race (the published MegaMoE
// FrontReorder scatters 4-byte expandedRowIdx words from 48 AIVs at once and verifies).
constexpr std::int64_t kCellBytes = 32;
constexpr std::uint32_t kWholeCell = 0xffffffffu;  // one bit per byte of a cell

struct Cell {
    std::int32_t write = -1;  // last plain write (index into the sorted accesses)
    std::int32_t list = -1;   // reads and atomic adds since it, and older plain writes of bytes
                              // it did not cover (index into the pool)
};

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The bytes of cell `c` access `a` touches, one bit per byte.
std::uint32_t bytes_in_cell(const SanAccess& a, std::int64_t c) {
    const std::int64_t c0 = c * kCellBytes, c1 = c0 + kCellBytes;
    int first = 0, last = a.rows - 1;
    if (a.ld_bytes > 0) {
        // Row r spans [offset + r ld, offset + r ld + row_bytes): only the rows that reach the cell.
        first = static_cast<int>(std::max<std::int64_t>(0, floor_div(c0 - a.offset - a.row_bytes, a.ld_bytes) + 1));
        last = static_cast<int>(std::min<std::int64_t>(a.rows - 1, floor_div(c1 - 1 - a.offset, a.ld_bytes)));
    } else {
        last = std::min(last, 0);  // every row the same bytes
    }
    std::uint32_t mask = 0;
    for (int r = first; r <= last; ++r) {
        const std::int64_t lo = std::max(c0, a.offset + r * a.ld_bytes);
        const std::int64_t hi = std::min(c1, a.offset + r * a.ld_bytes + a.row_bytes);
        if (lo >= hi) continue;
        const std::int64_t n = hi - lo;
        mask |= (n == kCellBytes ? kWholeCell : ((1u << n) - 1u)) << (lo - c0);
    }
    return mask;
}
struct ListEntry {
    std::int32_t access;
    std::int32_t next;
};

const char* kind_name(SanAccess::Kind k) {
    switch (k) {
        case SanAccess::Kind::Read: return "read";
        case SanAccess::Kind::Write: return "write";
        case SanAccess::Kind::Atomic: return "atomic add";
    }
    return "?";
}

// Does x happen before y? (x's epoch is known to y's thread when y issued.)
bool happens_before(const SanAccess& x, const SanAccess& y) {
    const std::uint32_t e = x.kind == SanAccess::Kind::Read ? x.issue_clock : x.epoch;
    return y.vc && y.vc->get(x.thread) >= e;
}

class Replay {
public:
    Replay(std::vector<SanAccess>& acc, const std::vector<SanRelease>& rel) : acc_(acc) {
        for (const SanRelease& r : rel) releases_[r.thread].push_back(&r);
        for (auto& [t, v] : releases_)
            std::sort(v.begin(), v.end(), [](const SanRelease* a, const SanRelease* b) { return a->clock < b->clock; });
    }

    void run() {
        for (std::size_t i = 0; i < acc_.size(); ++i) {
            const SanAccess& a = acc_[i];
            std::vector<Cell>& cells = shadow_[a.alloc];
            if (cells.empty()) cells.resize(static_cast<std::size_t>((a.alloc->bytes + kCellBytes - 1) / kCellBytes));
            // visit() is a pure function of the cell's state and the access (lists are never
            // changed in place), and the cells of one tile almost always share one state (the
            // same write, the same readers since): each distinct state is visited once per
            // access, the other cells take the remembered outcome.
            // That holds for the cells the access covers whole; a cell it covers in part
            // (a row's ends, a store of a few bytes) is visited on its own.
            Cell seen_before{-2, -2};
            Cell became{};
            for (int r = 0; r < a.rows; ++r) {
                const std::int64_t lo = a.offset + r * a.ld_bytes;
                const std::int64_t hi = lo + a.row_bytes;
                for (std::int64_t c = lo / kCellBytes; c * kCellBytes < hi && c < static_cast<std::int64_t>(cells.size()); ++c) {
                    Cell& cell = cells[static_cast<std::size_t>(c)];
                    const bool whole = c * kCellBytes >= lo && (c + 1) * kCellBytes <= hi;
                    const std::uint32_t mask = whole ? kWholeCell : bytes_in_cell(a, c);
                    if (mask != kWholeCell) {
                        visit(cell, static_cast<std::int32_t>(i), c, mask);
                        continue;
                    }
                    if (cell.write == seen_before.write && cell.list == seen_before.list) {
                        cell = became;
                        continue;
                    }
                    seen_before = cell;
                    visit(cell, static_cast<std::int32_t>(i), c, mask);
                    became = cell;
                }
            }
        }
    }

    std::vector<std::pair<std::int32_t, std::int32_t>> pairs;  // (earlier, later), in finding order

private:
    void conflict(std::int32_t earlier, std::int32_t later) {
        if (seen_.insert({earlier, later}).second) pairs.emplace_back(earlier, later);
    }
    bool ordered(std::int32_t x, std::int32_t y) const {
        const SanAccess& a = acc_[static_cast<std::size_t>(x)];
        const SanAccess& b = acc_[static_cast<std::size_t>(y)];
        return a.thread == b.thread || happens_before(a, b) || happens_before(b, a);
    }
    // Access i touches the bytes `mask` of cell c.
    void visit(Cell& cell, std::int32_t i, std::int64_t c, std::uint32_t mask) {
        const SanAccess& a = acc_[static_cast<std::size_t>(i)];
        const bool whole = mask == kWholeCell;
        // Whether the earlier access `other` touched any of these bytes (every access kept in a
        // cell touched some of it, so any does when this one covers the cell).
        auto shares_bytes = [&](std::int32_t other) {
            return whole || (bytes_in_cell(acc_[static_cast<std::size_t>(other)], c) & mask) != 0;
        };
        if (cell.write >= 0 && shares_bytes(cell.write) && !ordered(cell.write, i)) conflict(cell.write, i);
        if (a.kind == SanAccess::Kind::Read || a.kind == SanAccess::Kind::Atomic) {
            for (std::int32_t e = cell.list; e >= 0; e = pool_[static_cast<std::size_t>(e)].next) {
                const std::int32_t other = pool_[static_cast<std::size_t>(e)].access;
                const SanAccess::Kind ok = acc_[static_cast<std::size_t>(other)].kind;
                // Reads do not conflict with reads, nor atomic adds with atomic adds.
                if (ok != a.kind && shares_bytes(other) && !ordered(other, i)) conflict(other, i);
            }
            // The same thread's latest access stands for its earlier ones of the same kind and
            // bytes. (A new head, not a change of the old one: other cells may share the list.)
            std::int32_t next = cell.list;
            if (cell.list >= 0) {
                const ListEntry& head = pool_[static_cast<std::size_t>(cell.list)];
                const SanAccess& h = acc_[static_cast<std::size_t>(head.access)];
                if (h.thread == a.thread && h.kind == a.kind && (whole || (bytes_in_cell(h, c) & ~mask) == 0)) next = head.next;
            }
            pool_.push_back(ListEntry{i, next});
            cell.list = static_cast<std::int32_t>(pool_.size() - 1);
            return;
        }
        for (std::int32_t e = cell.list; e >= 0; e = pool_[static_cast<std::size_t>(e)].next) {
            const std::int32_t other = pool_[static_cast<std::size_t>(e)].access;
            if (shares_bytes(other) && !ordered(other, i)) conflict(other, i);
        }
        std::int32_t list = -1;
        if (!whole) {
            // A write of part of the cell: the earlier accesses of the bytes it left stay (the
            // older write among them), in their order, for what comes next to be checked against.
            std::vector<std::int32_t> kept;
            for (std::int32_t e = cell.list; e >= 0; e = pool_[static_cast<std::size_t>(e)].next)
                kept.push_back(pool_[static_cast<std::size_t>(e)].access);
            if (cell.write >= 0) kept.push_back(cell.write);
            for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
                if ((bytes_in_cell(acc_[static_cast<std::size_t>(*it)], c) & ~mask) == 0) continue;
                pool_.push_back(ListEntry{*it, list});
                list = static_cast<std::int32_t>(pool_.size() - 1);
            }
        }
        cell.write = i;
        cell.list = list;
    }

public:
    // The release of the writer's thread that a reader synchronised with while the write was
    // still in flight (issued before it, done after it), if any.
    const SanRelease* early_release(const SanAccess& w, const SanAccess& r) const {
        if (w.kind == SanAccess::Kind::Read || w.epoch <= w.issue_clock || !r.vc) return nullptr;
        const std::uint32_t known = r.vc->get(w.thread);
        if (known < w.issue_clock || known >= w.epoch) return nullptr;
        auto it = releases_.find(w.thread);
        if (it == releases_.end()) return nullptr;
        for (const SanRelease* rel : it->second)
            if (rel->clock >= w.issue_clock && rel->clock < w.epoch) return rel;
        return nullptr;
    }

private:
    std::vector<SanAccess>& acc_;
    std::unordered_map<const GmAllocation*, std::vector<Cell>> shadow_;
    std::vector<ListEntry> pool_;
    std::set<std::pair<std::int32_t, std::int32_t>> seen_;
    std::map<ThreadKey, std::vector<const SanRelease*>> releases_;
};

std::string describe_region(const SanAccess& a) {
    return fmt::format("rank {} '{}' bytes [{:#x}, {:#x}) ({} rows of {} bytes)", a.alloc->rank, a.alloc->name, a.offset,
                       a.offset + (a.rows - 1) * a.ld_bytes + a.row_bytes, a.rows, a.row_bytes);
}

std::string describe_access(const char* role, const SanAccess& a) {
    return fmt::format("  {}: {} {} of {}, effective at {:.3f} us", role, a.where, kind_name(a.kind), describe_region(a),
                       to_us(a.time));
}

}  // namespace

void Sanitizer::add_accesses(std::vector<SanAccess>&& a, std::vector<SanRelease>&& r) {
    std::lock_guard lock(mu_);
    if (!a.empty()) batches_.push_back(std::move(a));
    releases_.insert(releases_.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
}

void Sanitizer::add_access(SanAccess a) {
    std::lock_guard lock(mu_);
    batches_.push_back({});
    batches_.back().push_back(std::move(a));
}

void Sanitizer::add_violation(SanViolation v) {
    std::lock_guard lock(mu_);
    runtime_.push_back(std::move(v));
}

void Sanitizer::note_launch_signature(const std::string& stream, std::size_t index, int rank, const std::string& kernel,
                                      const std::string& signature) {
    std::lock_guard lock(mu_);
    auto [it, first] = signed_launches_.try_emplace({stream, index}, SignedLaunch{rank, kernel, signature});
    if (first || it->second.signature == signature) return;
    const SignedLaunch& a = it->second.rank < rank ? it->second : SignedLaunch{rank, kernel, signature};
    const SignedLaunch& b = it->second.rank < rank ? SignedLaunch{rank, kernel, signature} : it->second;
    SanViolation v;
    v.cls = kClassDisagreeingRanks;
    v.text = fmt::format("[{}] ranks launched a collective kernel with different signatures (shapes or dtypes) as launch "
                         "{} of stream '{}'\n  rank {}: kernel '{}', {}\n  rank {}: kernel '{}', {}",
                         v.cls, index + 1, stream, a.rank, a.kernel, a.signature, b.rank, b.kernel, b.signature);
    runtime_.push_back(std::move(v));
}

void Sanitizer::check_windows_locked() {
    // A shared allocation of one name (its n-th of that name, as an API session makes one per
    // call) is one workspace every rank addresses alike: its size must agree on every rank that
    // made it. (A window only some ranks have, as a test's inbox, is not compared.)
    std::map<std::pair<std::string, int>, std::vector<const GmAllocation*>> by_name;
    for (const GlobalMemory* gm : memories_) {
        std::map<std::string, int> seen;
        for (std::size_t i = 0; i < gm->allocation_count(); ++i) {
            const GmAllocation& a = gm->allocation_at(i);
            if (a.shared) by_name[{a.name, seen[a.name]++}].push_back(&a);
        }
    }
    for (const auto& [key, allocs] : by_name) {
        for (const GmAllocation* a : allocs) {
            if (a->bytes == allocs.front()->bytes) continue;
            if (!windows_reported_.emplace(key.first, key.second, a->rank).second) continue;  // by an earlier check
            SanViolation v;
            v.cls = kClassDisagreeingRanks;
            v.text = fmt::format("[{}] ranks allocated a shared (window) workspace of different sizes: '{}' is {} bytes on "
                                 "rank {} and {} bytes on rank {}",
                                 v.cls, key.first, allocs.front()->bytes, allocs.front()->rank, a->bytes, a->rank);
            runtime_.push_back(std::move(v));
        }
    }
}

std::vector<SanViolation> Sanitizer::check() {
    std::lock_guard lock(mu_);
    std::vector<SanViolation> found;
    check_windows_locked();
    std::vector<SanAccess> all;
    for (auto& b : batches_) std::move(b.begin(), b.end(), std::back_inserter(all));
    batches_.clear();
    std::sort(all.begin(), all.end(), [](const SanAccess& a, const SanAccess& b) {
        if (a.time != b.time) return a.time < b.time;
        if (a.thread != b.thread) return a.thread < b.thread;
        return a.seq < b.seq;
    });
    std::sort(runtime_.begin(), runtime_.end(), [](const SanViolation& a, const SanViolation& b) { return a.text < b.text; });
    runtime_.erase(std::unique(runtime_.begin(), runtime_.end(),
                               [](const SanViolation& a, const SanViolation& b) { return a.text == b.text; }),
                   runtime_.end());
    total_ = runtime_.size();
    for (auto& v : runtime_)
        if (found.size() < kMaxReports) found.push_back(std::move(v));
    runtime_.clear();
    Replay replay(all, releases_);
    replay.run();
    total_ += replay.pairs.size();
    for (const auto& [e, l] : replay.pairs) {
        if (found.size() >= kMaxReports) break;
        const SanAccess& earlier = all[static_cast<std::size_t>(e)];
        const SanAccess& later = all[static_cast<std::size_t>(l)];
        // Name the read (the side that may see the wrong bytes) and the write it races with.
        const bool later_reads = later.kind == SanAccess::Kind::Read;
        const SanAccess& first = earlier.kind == SanAccess::Kind::Read ? later : earlier;
        const SanAccess& second = &first == &earlier ? later : earlier;
        const SanRelease* rel = replay.early_release(first, second);
        SanViolation v;
        if (rel) {
            v.cls = kClassFlagBeforeData;
            v.text = fmt::format("[{}] a flag was raised before the data it guards was complete: the reader "
                                 "synchronised with the flag, not with the write\n  flag: {}\n{}\n{}",
                                 v.cls, rel->where, describe_access("write", first), describe_access("read", second));
        } else if (earlier.kind == SanAccess::Kind::Read || later_reads) {
            v.cls = kClassUnsyncRead;
            v.text = fmt::format("[{}] no synchronisation orders the write and the read{}\n{}\n{}", v.cls,
                                 later_reads ? "" : " (the write lands after the read)", describe_access("write", first),
                                 describe_access("read", second));
        } else {
            v.cls = kClassUnsyncRead;
            const bool atomic = earlier.kind == SanAccess::Kind::Atomic || later.kind == SanAccess::Kind::Atomic;
            v.text = fmt::format("[{}] {} of the same data are not ordered: what a later read sees depends on timing\n{}\n{}", v.cls,
                                 atomic ? "an atomic add and a plain write" : "two plain writes",
                                 describe_access("first", earlier), describe_access("second", later));
        }
        found.push_back(std::move(v));
    }
    // The releases named the flags of writes replayed now; a later check replays later kernels.
    releases_.clear();
    return found;
}

SanViolation classify_run_error(const std::string& message) {
    SanViolation v;
    auto has = [&](const char* s) { return message.find(s) != std::string::npos; };
    if (has("unschedulable spinners")) v.cls = kClassUnschedulable;
    else if (has("out of bounds") || has("overflow") || has("outside") || has("access violation")) v.cls = kClassBounds;
    else v.cls = "run error";
    v.text = fmt::format("[{}] {}", v.cls, message);
    return v;
}

std::string format_sanitizer_report(const std::vector<SanViolation>& v, std::size_t total) {
    std::string out = fmt::format("[SANITIZE] {} violation{} found", total, total == 1 ? "" : "s");
    if (total > v.size()) out += fmt::format(" (the first {} reported)", v.size());
    out += "\n";
    for (const SanViolation& x : v) out += x.text + "\n";
    return out;
}

}  // namespace tandem
