// host/run/blas_threads.hpp: OpenBLAS single-threaded with its idle pool shut down, and a later
// multithreaded call starting the pool again and computing the same (exact) product.
#include <gtest/gtest.h>

#include <cblas.h>

#include <filesystem>
#include <iterator>
#include <vector>

#include "host/run/blas_threads.hpp"

namespace tandem::host {
namespace blas_threads_test {

// The programs run OpenBLAS single-threaded (host/cli/main.cpp calls use_single_threaded_blas()
// at start-up); the suite does as they do before its first test. Otherwise a golden's sgemm
// large enough for OpenBLAS to split runs on OpenBLAS's own threads, whose synchronisation
// ThreadSanitizer cannot see (the library is not instrumented), and every read of the golden
// is reported as a race. The test below starts a pool on purpose and ends single-threaded again.
class SingleThreadedBlas : public ::testing::Environment {
public:
    void SetUp() override { use_single_threaded_blas(); }
};
[[maybe_unused]] const ::testing::Environment* const kSingleThreadedBlas =
    ::testing::AddGlobalTestEnvironment(new SingleThreadedBlas);

long threads_of_this_process() {
    const std::filesystem::directory_iterator tasks("/proc/self/task");
    return static_cast<long>(std::distance(std::filesystem::begin(tasks), std::filesystem::end(tasks)));
}

// C = A x B^T with small integers: exact in fp32, so every thread split gives the same bits.
std::vector<float> product(int m, int n, int k) {
    std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k), c(static_cast<std::size_t>(m) * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n);
    return c;
}

TEST(BlasThreads, SingleThreadedThenAPoolStartedAgainGivesTheSameProduct) {
    use_single_threaded_blas();
    EXPECT_EQ(openblas_get_num_threads(), 1);
    const long idle = threads_of_this_process();
    const std::vector<float> single = product(256, 256, 256);

    openblas_set_num_threads(2);  // large enough for OpenBLAS to split: the pool starts again
    const std::vector<float> threaded = product(256, 256, 256);
    const long with_pool = threads_of_this_process();
    EXPECT_EQ(threaded, single);

    use_single_threaded_blas();
    EXPECT_EQ(openblas_get_num_threads(), 1);
    // Where this OpenBLAS has a pool (the pthread build on more than one core), it is gone again.
    if (with_pool > idle) {
        EXPECT_EQ(threads_of_this_process(), idle);
    }
    EXPECT_EQ(product(256, 256, 256), single);
}

}  // namespace blas_threads_test
}  // namespace tandem::host
