#pragma once
// OpenBLAS's own thread pool, for programs whose GEMMs run one per host thread (the simulated
// streams, the golden's bands, the deferred cube's workers): each call single-threaded, and no
// pool thread left spinning.
//
// Why the spin matters: OpenBLAS (pthread build) starts its pool when the library loads, and a
// pool thread with no work spins in sched_yield for 2^28 TSC ticks (about 0.1 s) before it
// sleeps, at load and again after every multithreaded call. Setting the thread count to 1 does
// not stop a spin under way, so a short program paid up to a core for its first 0.1 s. Shutting
// the pool down ends it; OpenBLAS starts the pool again by itself if a later call is
// multithreaded (as it does after fork()).
namespace tandem::host {

// openblas_set_num_threads(1), then the idle pool threads shut down (where the OpenBLAS build
// has a pool: the pthread one; elsewhere only the thread count is set).
void use_single_threaded_blas();

// Shuts the idle pool threads down (after a multithreaded call, so that their spin does not run
// on into whatever comes next); a later multithreaded call starts them again.
void stop_idle_blas_threads();

}  // namespace tandem::host
