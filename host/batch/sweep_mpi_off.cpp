// A build without MPI (TANDEM_MPI=OFF, or no MPI found): see sweep_mpi.hpp.
#include "host/batch/sweep_mpi.hpp"

#include <fmt/format.h>

#include "host/batch/mpi_launch.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {

std::unique_ptr<SweepPeers> join_mpi_sweep() {
    const int size = mpi_launch_size_from_env();
    if (size > 1) {
        throw tandem::SimError(fmt::format(
            "--sweep/--tune: started by an MPI launcher with {} processes, but this build has no MPI (configure "
            "with libopenmpi-dev installed and -DTANDEM_MPI=ON); run it without mpirun",
            size));
    }
    return nullptr;
}

bool mpi_sweep_available() { return false; }

}  // namespace tandem::host
