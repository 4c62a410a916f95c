#include "sim/net/link_hub.hpp"

namespace tandem {

void LinkHub::deliver(const LinkUsage& usage, int source, SimTime horizon) {
    if (first_source_ < 0) first_source_ = source;
    BinnedUsage& into = source == first_source_ ? first_ : rest_;
    into.forget_before(horizon);
    into.add(usage.start, usage.end, usage.bytes);
}

void LinkHub::forget_before(SimTime horizon) {
    first_.forget_before(horizon);
    rest_.forget_before(horizon);
}

}  // namespace tandem
