#pragma once
// The state behind include/tandem/tandem.hpp: one simulated cluster (a Runtime whose host clocks
// persist across calls), the tensors and workspaces in its GM, a pool of stream sets, and the
// async calls still pending. Every public entry point runs on the caller's thread; the per-rank
// work of a call runs on the runtime's host threads (Runtime::run_hosts with KeepClocks).
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/call_trace.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/op_inputs.hpp"
#include "host/run/op_session.hpp"
#include "kernels/op_desc.hpp"
#include "sim/profile.hpp"
#include "sim/runtime/runtime.hpp"
#include "tandem/tandem.hpp"

namespace tandem::api::detail {

DType to_sim(DataType t);

struct TensorState {
    std::shared_ptr<ContextState> ctx;
    int rows = 0;
    int cols = 0;
    DataType dtype = DataType::F16;
    std::vector<const GmAllocation*> per_rank;
    ~TensorState();
    GmTensor on(int rank) const;  // the rank's buffer as an ND tensor
};

// Streams a call runs on, one group per rank; reused once the call that held them completed.
struct StreamSet {
    std::vector<std::vector<Stream*>> per_rank;
    bool busy = false;
};

struct WorkspaceState {
    std::shared_ptr<ContextState> ctx;
    std::string op;
    std::string variant;
    std::string signature;  // shape and configuration it was made for (for messages and checks)
    // The op on the context's cluster: its instance, workspace and the padded tensors the kernels
    // read and write (the caller's tensors are copied in and out), run as every surface runs it.
    std::unique_ptr<host::OpSession> session;
    int calls = 0;
    OpResults results;
    // While an async call is pending:
    bool pending = false;
    int stream_set = -1;
    std::shared_ptr<TensorState> pending_out;
    std::vector<Event> end_events;     // per rank and stream (rank-major)
    std::vector<SimTime> start_ps;     // per rank
    std::vector<int> used_streams;     // stream indexes of the launches still running
    const kernels::OwnMath* own_math = nullptr;  // the op's own math, if it has one
    // Checks a completed functional call's output against the op's own golden (own_math only).
    void verify_own_math(int ranks);
    // A completed call's figures derived from its views (api/op_results.cpp).
    void add_figures();
    ~WorkspaceState();
};

// An async call's trace (OpConfig::trace), open from the call until barrier(), which writes it:
// the cluster logs every kernel launched meanwhile, the traced call's and those it overlapped.
struct OpenTrace {
    OpConfig config;                        // the file and its filters
    host::ResolvedRun run;                  // the traced call's identity
    std::shared_ptr<WorkspaceState> call;   // the traced call
    std::unique_ptr<CallLog> log;
    // Per stream set, rank and stream: how many kernels the stream had run when the traced call's
    // pipelined launch began (a set made later: none); what follows is the trace's busy time.
    std::vector<std::vector<std::vector<std::size_t>>> first_stat;
    // A set of streams the calls in it ran on: one lane of tracks (the traced call's first), and
    // its calls ("matmul_all_reduce[2]": the trace's second call). A set is reused only by calls
    // whose streams have the same names, so a lane's stream names hold for all its calls.
    struct Lane {
        int set = -1;
        std::vector<std::string> calls;
    };
    std::vector<Lane> lanes;
    // Every call in it, in call order: its workspace and lane, and a synchronous call's results
    // as it completed (its workspace may run again before the barrier).
    struct Call {
        std::shared_ptr<WorkspaceState> ws;
        int lane = 1;
        std::optional<OpResults> done;
    };
    std::vector<Call> calls;
    SimTime end = 0;                        // the latest end of a call in it
};

struct ContextState {
    ContextState(const ContextOptions& options);
    ~ContextState();

    Profile profile;
    ContextOptions options;
    std::unique_ptr<Runtime> runtime;
    std::vector<StreamSet> stream_sets;
    std::vector<std::shared_ptr<WorkspaceState>> pending;
    std::optional<OpenTrace> open_trace;
    std::optional<std::string> broken;  // the error that stopped the cluster
    // Ops added by the user (Ops::add), besides the registered ones; this context's alone.
    std::vector<std::shared_ptr<const kernels::OpDesc>> user_ops;

    // The op called `name`: a registered one or one of user_ops; SimError listing both if none.
    const kernels::OpDesc& find_op(const std::string& name) const;
    void add_op(std::shared_ptr<const kernels::OpDesc> op);

    void check_usable() const;
    // Before GM bookkeeping changes while async kernels may be running.
    void park_if_pending();
    std::shared_ptr<TensorState> allocate_tensor(const std::shared_ptr<ContextState>& self, int rows, int cols, DataType dtype);
    void release(const std::vector<const GmAllocation*>& per_rank);
    int acquire_streams(const std::vector<std::string>& names);

    Workspace run(const std::shared_ptr<ContextState>& self, const std::string& op, Tensor& out, const Tensor& a,
                  const Tensor& b, const Tensor* bias, bool async_op, const OpConfig& config, Workspace workspace);
    void barrier();
    // barrier()'s last step with an async call's trace open: writes it and closes it.
    void close_open_trace();
    double now_us() const;
    // OpConfig::sanitize: turns the cluster's sanitizer on or off for call `op` (refused while an
    // async call of the other kind is pending).
    void set_sanitizing(const std::string& op, bool on);
    // Under sanitize, once no call is pending: what the sanitizer found since its last check
    // fails `what` (an Error with the count and the first violation).
    void check_sanitized(const std::string& what);
    // Under sanitize, a call or barrier that failed with `error`: throws the sanitizer's report
    // with the error in it (class "out of bounds / overflow", "unschedulable spinners", ...).
    void fail_sanitized(const std::string& what, const std::string& error);
};

}  // namespace tandem::api::detail
