#pragma once
// The processes of a sweep spread over MPI (`mpirun -n P tandem --sweep FILE`), as the sweep sees
// them: this process's rank, how many there are, and messages between them. This header knows
// nothing of MPI: the transport is host/batch/sweep_mpi.cpp (built when TANDEM_MPI is on and linked
// into the programs only, not into the library, the Python module or the tests).
//
// Roles: rank 0 reads and plans the file, hands rows out one request at a time (a dynamic work
// queue: rows differ a lot in cost), runs rows itself too, gathers the results in input order,
// writes PREFIX.csv/.json and prints progress, failures and the table. The other ranks plan the
// same text, run the rows they are given on their own pool (--jobs, default their host's cores)
// and send each result back as it finishes; they print nothing but their own fatal errors.
//
// Every call comes from one thread: the sweep's main thread (MPI_THREAD_FUNNELED).
#include <optional>
#include <string>

namespace tandem::host {

struct PeerMessage {
    int from = 0;
    int tag = 0;
    std::string bytes;
};

class SweepPeers {
public:
    virtual ~SweepPeers() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Collective: rank 0's `bytes` reach every process (the others' argument is ignored); returns
    // once every process has them.
    virtual std::string broadcast(const std::string& bytes) = 0;
    virtual void send(int to, int tag, const std::string& bytes) = 0;
    // A message that has arrived, if any; does not wait.
    virtual std::optional<PeerMessage> poll() = 0;
    // Ends every process of the job with exit code `code` (the caller has printed why).
    [[noreturn]] virtual void abort(int code) = 0;
};

}  // namespace tandem::host
