#include "sim/exec/signal_store.hpp"

#include <algorithm>

namespace tandem {

std::int32_t SignalStore::value_at(std::int64_t address, SimTime t) const {
    auto it = words_.find(address);
    if (it == words_.end()) return 0;
    std::int32_t v = it->second.base;
    for (const Op& op : it->second.ops) {
        if (op.visible_at > t) break;
        v = apply(v, op);
    }
    return v;
}

const SignalWord* SignalStore::find(std::int64_t address) const {
    auto it = words_.find(address);
    return it == words_.end() ? nullptr : &it->second;
}

std::optional<SimTime> SignalStore::first_time_true(std::int64_t address, CmpOp cmp, std::int32_t expected,
                                                    SimTime since, SimTime before) const {
    return first_time_true(find(address), cmp, expected, since, before);
}

std::optional<SimTime> SignalStore::first_time_true(const SignalWord* word, CmpOp cmp, std::int32_t expected,
                                                    SimTime since, SimTime before) {
    SimTime next_op_at = kNever;
    return first_time_true(word, cmp, expected, since, before, next_op_at);
}

std::optional<SimTime> SignalStore::first_time_true(const SignalWord* word, CmpOp cmp, std::int32_t expected,
                                                    SimTime since, SimTime before, SimTime& next_op_at) {
    next_op_at = kNever;
    // True already at `since`, which lies at or after `before`: true from the first `before` past it.
    auto at_since = [&]() -> std::optional<SimTime> {
        if (since < before) return since;
        next_op_at = since;
        return std::nullopt;
    };
    std::int32_t v = word == nullptr ? 0 : word->base;
    if (word == nullptr) return compare(v, cmp, expected) ? at_since() : std::nullopt;
    const auto& ops = word->ops;
    std::size_t i = 0;
    for (; i < ops.size() && ops[i].visible_at <= since; ++i) v = apply(v, ops[i]);
    if (compare(v, cmp, expected)) return at_since();
    while (i < ops.size() && ops[i].visible_at < before) {
        const SimTime t = ops[i].visible_at;
        for (; i < ops.size() && ops[i].visible_at == t; ++i) v = apply(v, ops[i]);  // all ops of one instant
        if (compare(v, cmp, expected)) return t;
    }
    if (i < ops.size()) next_op_at = ops[i].visible_at;
    return std::nullopt;
}

void SignalStore::acquire_clocks(std::int64_t address, SimTime t, VectorClock& into) const {
    auto it = words_.find(address);
    if (it == words_.end()) return;
    if (it->second.folded) into.join(it->second.folded->clock);
    for (const Op& op : it->second.ops) {
        if (op.visible_at > t) break;
        if (op.stamp) into.join(op.stamp->clock);
    }
}

const SanSignalStamp* SignalStore::last_write(std::int64_t address, SimTime t) const {
    auto it = words_.find(address);
    if (it == words_.end()) return nullptr;
    const SanSignalStamp* last = it->second.folded ? it->second.folded->stamp.get() : nullptr;
    for (const Op& op : it->second.ops) {
        if (op.visible_at > t) break;
        last = op.stamp.get();
    }
    return last;
}

void SignalStore::insert(std::int64_t address, const Op& op) {
    SignalWord& w = words_[address];
    ++w.version;
    if (w.ops.empty()) dirty_.push_back(Dirty{op.visible_at, &w});
    auto pos = std::upper_bound(w.ops.begin(), w.ops.end(), op, [](const Op& a, const Op& b) {
        return a.visible_at != b.visible_at ? a.visible_at < b.visible_at : a.order < b.order;
    });
    w.ops.insert(pos, op);
}

void SignalStore::fold_before(SimTime horizon) {
    std::size_t keep = 0;
    for (Dirty& d : dirty_) {
        if (d.first_op_at >= horizon) {
            dirty_[keep++] = d;
            continue;
        }
        SignalWord& w = *d.word;
        std::size_t n = 0;
        while (n < w.ops.size() && w.ops[n].visible_at < horizon) {
            const Op& op = w.ops[n++];
            w.base = apply(w.base, op);
            if (op.stamp) {
                if (!w.folded) w.folded = std::make_unique<SignalWordClocks>();
                w.folded->clock.join(op.stamp->clock);
                w.folded->stamp = op.stamp;
            }
        }
        w.ops.erase(w.ops.begin(), w.ops.begin() + static_cast<std::ptrdiff_t>(n));
        if (!w.ops.empty()) dirty_[keep++] = Dirty{w.ops.front().visible_at, d.word};
    }
    dirty_.resize(keep);
}

}  // namespace tandem
