#pragma once
// What an MPI launcher (Open MPI's mpirun, or a PMI launcher such as srun) tells the processes
// it starts through their environment, read without MPI: so that a build without MPI, and the
// commands that do not spread over processes, can tell they were started P times.
namespace tandem::host {

// The number of processes started together (OMPI_COMM_WORLD_SIZE, else PMI_SIZE); 1 when this
// process was not started by an MPI launcher.
int mpi_launch_size_from_env();

}  // namespace tandem::host
