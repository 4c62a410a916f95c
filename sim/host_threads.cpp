#include "sim/host_threads.hpp"

#include <algorithm>
#include <thread>

namespace tandem {

int host_core_count() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int thread_share(int budget, int users) { return std::max(1, budget / std::max(1, users)); }

}  // namespace tandem
