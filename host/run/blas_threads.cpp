#include "host/run/blas_threads.hpp"

#include <cblas.h>

// Exported by OpenBLAS's pthread build (its fork handler calls it) but not declared in cblas.h;
// weak, so that a build without it (OpenMP OpenBLAS, another BLAS) links and skips the call.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace tandem::host {

void stop_idle_blas_threads() {
    if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

void use_single_threaded_blas() {
    openblas_set_num_threads(1);
    stop_idle_blas_threads();
}

}  // namespace tandem::host
