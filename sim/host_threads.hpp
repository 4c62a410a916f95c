#pragma once
// How many host threads a simulation may keep busy. One budget, decided by whoever starts the
// work (a program, a sweep, the API, a benchmark) and handed down: ClusterOptions::host_threads
// sizes a run's coordinator pool and worker pool, and a sweep running J configurations at once
// gives each thread_share(budget, J). OpenBLAS runs single-threaded inside those threads (one
// GEMM per thread), so it takes nothing beyond them. Results never depend on the budget: only
// how fast they come.
namespace tandem {

// The host's cores as the operating system reports them, at least 1. The project's one reading
// of the core count: everything else receives a budget from its caller.
int host_core_count();

// `budget` threads shared by `users` at once: budget / users each, at least 1.
int thread_share(int budget, int users);

}  // namespace tandem
