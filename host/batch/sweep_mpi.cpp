// The MPI transport of a sweep spread over processes: see sweep_mpi.hpp and sweep_peers.hpp.
// Only the sweep's main thread calls MPI (MPI_THREAD_FUNNELED). The messages are small (a row's
// result is a few KiB), so plain blocking sends are used: rank 0 polls for messages every few
// milliseconds while it runs, so a send to it is always received soon.
#include "host/batch/sweep_mpi.hpp"

#include <climits>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <mpi.h>

#include "host/batch/mpi_launch.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

void check(int code, const char* what) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw tandem::SimError(fmt::format("sweep over MPI: {} failed: {}", what, std::string(text, static_cast<std::size_t>(len))));
}

int checked_count(std::size_t bytes, const char* what) {
    if (bytes > static_cast<std::size_t>(INT_MAX)) {
        throw tandem::SimError(fmt::format("sweep over MPI: {}: {} bytes is more than one message carries", what, bytes));
    }
    return static_cast<int>(bytes);
}

class MpiPeers final : public SweepPeers {
public:
    MpiPeers() {
        int provided = 0;
        check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
        // Errors come back as codes (and become SimErrors) rather than aborting silently.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (provided < MPI_THREAD_FUNNELED) {
            std::fprintf(stderr, "[ERROR] sweep over MPI: the MPI library does not allow a threaded process\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
    }
    ~MpiPeers() override { MPI_Finalize(); }
    MpiPeers(const MpiPeers&) = delete;
    MpiPeers& operator=(const MpiPeers&) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }

    std::string broadcast(const std::string& bytes) override {
        unsigned long long length = rank_ == 0 ? bytes.size() : 0;
        check(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast (length)");
        std::string got = rank_ == 0 ? bytes : std::string(length, '\0');
        check(MPI_Bcast(got.data(), checked_count(length, "broadcast"), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
        // Every process is up before any row starts, so the rows spread from the first one.
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        return got;
    }

    void send(int to, int tag, const std::string& bytes) override {
        check(MPI_Send(bytes.data(), checked_count(bytes.size(), "send"), MPI_BYTE, to, tag, MPI_COMM_WORLD), "MPI_Send");
    }

    std::optional<PeerMessage> poll() override {
        int arrived = 0;
        MPI_Status status;
        check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status), "MPI_Iprobe");
        if (!arrived) return std::nullopt;
        int count = 0;
        check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
        PeerMessage m;
        m.from = status.MPI_SOURCE;
        m.tag = status.MPI_TAG;
        m.bytes.resize(static_cast<std::size_t>(count));
        check(MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.from, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        return m;
    }

    [[noreturn]] void abort(int code) override {
        std::fflush(nullptr);
        MPI_Abort(MPI_COMM_WORLD, code);
        std::_Exit(code);  // MPI_Abort does not return; if it did, end anyway
    }

private:
    int rank_ = 0;
    int size_ = 1;
};

}  // namespace

std::unique_ptr<SweepPeers> join_mpi_sweep() {
    if (mpi_launch_size_from_env() <= 1 && std::getenv("PMIX_RANK") == nullptr) return nullptr;
    return std::make_unique<MpiPeers>();
}

bool mpi_sweep_available() { return true; }

}  // namespace tandem::host
