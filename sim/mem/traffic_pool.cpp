#include "sim/mem/traffic_pool.hpp"

namespace tandem {

std::shared_ptr<MemTraffic> TrafficPool::take() {
    std::unique_ptr<MemTraffic> traffic;
    {
        std::lock_guard lock(mu_);
        keeping_ = true;
        if (!free_.empty()) {
            traffic = std::move(free_.back());
            free_.pop_back();
        }
    }
    if (!traffic) traffic = std::make_unique<MemTraffic>();
    return std::shared_ptr<MemTraffic>(traffic.release(),
                                       [pool = shared_from_this()](MemTraffic* t) { pool->give_back(t); });
}

void TrafficPool::give_back(MemTraffic* traffic) {
    std::unique_ptr<MemTraffic> owned(traffic);
    owned->usage.clear();
    owned->touched_regions.clear();
    std::lock_guard lock(mu_);
    if (keeping_ && free_.size() < kMaxKept) free_.push_back(std::move(owned));
}

void TrafficPool::release_kept() {
    std::vector<std::unique_ptr<MemTraffic>> kept;
    {
        std::lock_guard lock(mu_);
        keeping_ = false;
        kept.swap(free_);
        free_.reserve(kMaxKept);  // give_back() must not allocate
    }
}

}  // namespace tandem
