#pragma once
// The MPI transport of a sweep spread over processes (sweep_peers.hpp). Two implementations, one
// linked into the programs (tandem, allgather_gemm) by CMake's TANDEM_MPI option:
//   sweep_mpi.cpp      Open MPI (MPI_Init_thread FUNNELED; point-to-point messages, a broadcast);
//   sweep_mpi_off.cpp  a build without MPI: no peers, and a clear error under mpirun.
#include <memory>

#include "host/batch/sweep_peers.hpp"

namespace tandem::host {

// Joins the MPI job this process was started in (mpi_launch.hpp says whether it was). Returns
// nullptr when it was not: then a sweep runs in this process alone, as without MPI. MPI is
// finalized when the returned object is destroyed. Throws tandem::SimError when started with
// more than one process by a build without MPI (every process would run every row).
std::unique_ptr<SweepPeers> join_mpi_sweep();

// Whether this build can spread a sweep over MPI processes (for --help and messages).
bool mpi_sweep_available();

}  // namespace tandem::host
