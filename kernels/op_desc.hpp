#pragma once
// What an op is, as the shared host sees it: an immutable description (name, sharding of its
// inputs and output over the ranks, variants with their constraints, knobs and kernels), found
// through one registry (kernels/registry.hpp). The host builds inputs, the golden, the three
// views, verification, results, traces, sweeps and tuning from this description alone, so
// adding an op is a folder kernels/<op>/ with its device code and its description, plus one
// line in kernels/registry.cpp.
//
// The description holds no mutable state. A run of one variant is an OpInstance, made per run
// by VariantDesc::make: it allocates the op's workspace on every chip, is bound to the tensors
// the host placed in GM (A, B, bias, output of each rank), and says, per rank and view, which
// kernels run on which stream after which host-side resets.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/exec/logical_process.hpp"
#include "sim/mem/dtype.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/mem/gm_tensor.hpp"
#include "sim/profile.hpp"

namespace tandem {
class HostContext;
}

namespace tandem::kernels {

// How a rank's operand relates to the global one (docs/ops/README.md "How the operands are split").
enum class Split : std::uint8_t {
    Replicated,  // every rank holds all of it
    Rows,        // rank r holds row block r
    Cols,        // rank r holds column block r
};

struct OpParams;

// The op's math over the ranks. The global problem is C = A x B (+ bias) with A: M x K_total,
// B: K_total x N; the host generates the global operands, cuts each rank's share out of them,
// and computes the golden as one GEMM of the global operands.
struct Sharding {
    Split a = Split::Replicated;
    Split b = Split::Replicated;
    // --gk is each rank's K and the ranks' products are summed (K_total = ranks * k): A is then
    // split by columns and B by rows (or, with b = Replicated, every rank holds the same B and
    // the global B is that B repeated down K: Ascend's GEMM+AllReduce example).
    bool k_per_rank = false;
    Split out = Split::Replicated;  // Replicated: every rank gets all of C; Cols: column block r
    // The rank's output has A_r's shape (a_rows x K) instead of M x N: an op that maps each row
    // of its input to an output row (moe_ffn). Such an op gives its own golden
    // (OpDesc::own_math): its math is not A x B.
    bool out_like_a = false;
    // The rank's output rows and columns when they are neither (moe_dispatch: the rows its
    // experts receive, each K int8 and a 32-byte scale): set by an op with its own math.
    std::function<std::array<int, 2>(const OpParams&)> out_shape = {};
};

enum class BiasKind : std::uint8_t { None, M, N };  // a vector of M or of N, broadcast, added once
enum class ViewKind : std::uint8_t { ComputeOnly, Sequential, Pipelined };
const char* view_name(ViewKind v);
const char* bias_name(BiasKind b);  // "none" | "m" | "n"

// The profile's numbers a kernel's tiles must fit in (no hardware number is written in a kernel).
struct BufferLimits {
    std::string profile_name;   // for messages
    int aic_cores = 0;
    int aiv_cores = 0;
    int cube_fractal = 0;       // tiles are multiples of it
    std::int64_t l1_bytes = 0;
    std::int64_t l0a_bytes = 0;
    std::int64_t l0b_bytes = 0;
    std::int64_t l0c_bytes = 0;
    std::int64_t ub_bytes = 0;
    std::int64_t gm_bytes = 0;  // per chip
};

// One run's parameters, as every op receives them (validated by the host's common checks and
// then by the variant's own).
struct OpParams {
    int ranks = 2;
    int m = 0;
    int k = 0;  // see Sharding::k_per_rank
    int n = 0;
    int base_m = 128;
    int base_n = 256;
    int compute_blocks = 0;  // resolved (the profile's AIC count unless given)
    int comm_blocks = 0;     // resolved (the profile's AIV count unless given)
    std::string variant;
    std::string schedule = "data_parallel";
    DType dtype = DType::F16;      // A, B and bias
    DType out_dtype = DType::F32;  // the output
    BiasKind bias = BiasKind::None;
    std::string comm_mode = "mesh";
    std::map<std::string, int> knobs;  // the variant's integer knobs that were given
    std::string fault;                 // tests only: a sabotage the variant lists in `faults`
    // The profile's interconnect, set by the host when it runs the variant (what an HCCL-style
    // collective chooses its algorithm by: mesh on a full mesh, ring on rings).
    TopologyKind topology = TopologyKind::FullMesh;

    std::optional<int> knob(const std::string& name) const;
};

// An integer parameter of a variant beyond the common ones (chunk size, k_per_flag, ...).
// Its flag is --<name with '-' for '_'>; its sweep column and JSON key are <name>.
struct KnobDesc {
    std::string name;
    std::vector<std::string> aliases;  // other flags meaning the same (Iris's names, e.g. --total_sms)
    std::string doc;                   // for --help and --list-ops
    std::vector<int> tune_values;      // what --tune tries besides the default (empty: not tuned)
    // Words the knob takes besides integers, on every surface (moe_ffn's `--routing zipf:1.2`):
    // the knob values a text stands for (it may set other knobs of the op too), nullopt when the
    // text is not one. `words` lists them for --help and errors ("round_robin, uniform, zipf[:S]").
    std::function<std::optional<std::map<std::string, int>>(const std::string& text)> parse_words = {};
    std::string words = {};
};

// Multiples the host pads each rank's tensors to (with zeros), as the Ascend examples pad M and
// N to whole tiles: rows of A and of the output to `m`, A's columns and B's K to `k`, N to `n`.
// The kernels then work on whole tiles; verification reads only the logical part.
struct Padding {
    int m = 1;
    int n = 1;
    int k = 1;
};

// Where a rank's operands and output are in its GM (placed and filled by the host; padded).
struct RankTensors {
    GmTensor a;     // A_r, ND
    GmTensor b;     // B_r stored transposed (N x K, "DN" as both Ascend examples keep B)
    GmTensor bias;  // 1 x len (not valid without bias)
    GmTensor out;   // the rank's output, ND, in out_dtype
};

using HostAction = std::function<void(HostContext&)>;

struct StreamLaunch {
    int stream = 0;  // index into OpInstance::streams()
    KernelLaunch kernel;
    // The host synchronizes this stream right after launching it, before the phase's next launch
    // and its closing synchronizes: a published launcher with a synchronize inside (the older
    // GEMM+AllReduce example's comm launcher). Each synchronize costs the host `sync_us`, so a
    // phase that also synchronizes the stream at its end pays for it twice, as that host does.
    // An asynchronous API call (`async_op`) does not wait here.
    bool sync_after_launch = false;
};

// Which figure of the sequential view a phase's time counts toward.
enum class PhaseRole : std::uint8_t { Comm, Compute, Both };

// Kernels launched together (in this order, then every stream used is synchronized in the
// same order) after host-side work inside the timed region (e.g. Iris's per-call flag reset).
struct ViewPhase {
    PhaseRole role = PhaseRole::Both;
    HostAction timed_setup;
    std::vector<StreamLaunch> launches;
};

// One view on one rank: untimed host resets (flags, queues; functional data a view needs),
// then the timed phases. The host times each view from a barrier, as the seeds' host programs.
struct ViewPlan {
    HostAction reset;
    std::vector<ViewPhase> phases;
};

// One run of one variant on one cluster.
class OpInstance {
public:
    virtual ~OpInstance() = default;
    // The streams each rank creates, in this order (stream ids follow it).
    virtual std::vector<std::string> streams() const = 0;
    // The op's own memory on `rank` (windows, flags, staging): the chip's first allocations.
    virtual void allocate_workspace(int rank, GlobalMemory& gm) = 0;
    // The tensors the host placed for `rank` (called once per rank, after every workspace).
    virtual void bind(int rank, const RankTensors& tensors) = 0;
    // The view's plan for `rank` (called on that rank's host thread).
    virtual ViewPlan view(ViewKind kind, int rank) const = 0;
    // A name for a signal word in traces ("summary[src=3]"); empty when it has none. Called
    // after the run, when the cluster (and its GM allocations) may be gone: use addresses saved
    // at allocation time.
    virtual std::string signal_name(int rank, std::int64_t address) const;
    // The names of the stages its kernels mark with BlockCtx::set_stage, by stage id ("dispatch",
    // "gmm1", ...): the results' per-stage times, the trace's stage tracks. Empty: none.
    virtual std::vector<std::string> stage_names() const { return {}; }
};

// The size of a run the tests and benches pick for an op: what -n, --gm, --gk, --gn, --base-m,
// --base-n, --compute-blocks and --comm-blocks would give (blocks: none for the variant's
// default).
struct RunShape {
    RunShape() = default;
    RunShape(int ranks_, int m_, int k_, int n_, int base_m_ = 128, int base_n_ = 256,
             std::optional<int> compute_blocks_ = std::nullopt, std::optional<int> comm_blocks_ = std::nullopt)
        : ranks(ranks_), m(m_), k(k_), n(n_), base_m(base_m_), base_n(base_n_), compute_blocks(compute_blocks_),
          comm_blocks(comm_blocks_) {}

    int ranks = 2;
    int m = 0;
    int k = 0;
    int n = 0;
    int base_m = 128;
    int base_n = 256;
    std::optional<int> compute_blocks;
    std::optional<int> comm_blocks;
};
using TestShapeFn = std::function<RunShape(int ranks)>;

struct VariantDesc {
    std::string name;
    std::string doc;          // one line
    std::string constraints;  // one line for --list-ops (shape rules, what it does not support)
    std::vector<std::string> schedules = {"data_parallel"};  // the first is the default
    std::optional<Sharding> sharding;                         // when it differs from the op's
    std::vector<KnobDesc> knobs;
    std::vector<DType> dtypes = {DType::F16};
    std::vector<DType> out_dtypes = {DType::F32};  // the first is the default
    // M, K, N when the command line gives no --gm, --gk, --gn (the shape a published kernel is
    // built for); none: the seed's 2048 x 2048 x 1024.
    std::optional<std::array<int, 3>> default_shape;
    bool takes_bias = false;
    // The output lives in the rank's peer window (as HCCL's output buffers do), so that other
    // ranks may store or atomically add into it; otherwise it is local memory.
    bool output_in_window = false;
    std::vector<std::string> comm_modes = {"mesh"};  // the first is the default
    // Default block counts when the command line gives none (null: one block per AIC core for
    // the compute kernel, one per AIV core for the comm kernel, as the seed). Ascend's
    // GEMM+AllReduce example uses one AIV per AIC, for instance.
    std::function<int(const BufferLimits&)> default_compute_blocks;
    std::function<int(const BufferLimits&)> default_comm_blocks;
    // Deliberate bugs a test can ask for (OpParams::fault) to prove that verification catches a
    // wrong kernel ("skip_last_k_tile", "skip_partial", ...). Not offered on the command line.
    std::vector<std::string> faults;
    // Throws SimError with a one-line message naming the flag, the value, the rule and a
    // nearby valid value. Called after the host's common checks.
    std::function<void(const OpParams&, const BufferLimits&)> validate;
    // Padding of the rank tensors (none when not set).
    std::function<Padding(const OpParams&)> padding;
    // Bytes of GM the op's workspace takes on each chip.
    std::function<double(const OpParams&)> workspace_bytes;
    // The knobs' values as used (a default computed by a rule included), for results.
    std::function<std::map<std::string, int>(const OpParams&)> effective_knobs;
    std::function<std::unique_ptr<OpInstance>(const OpParams&)> make;
    // The variant's small test shapes when they differ from its op's (OpDesc::test_shape).
    TestShapeFn test_shape;
};

// An op's variants share most of what a VariantDesc says (dtypes, bias, padding, validation,
// workspace, ...). The op writes that once, as a VariantDesc without a name: its defaults. Each
// variant is a copy of them under its own name and doc that then states only what differs:
//     VariantDesc v = derive_variant(defaults, "ring", "a ring reduce-scatter then ...");
//     v.faults = {"skip_own_partial"};
//     v.make = ...;
VariantDesc derive_variant(const VariantDesc& defaults, std::string name, std::string doc);

// OpDesc::comm_kind of an op that does not communicate (gemm): its sequential and pipelined
// views are its kernel alone, and the host reports no overlap for it.
inline constexpr const char* kNoComm = "none";

// The pto-isa seed's host program printed its runs in a format scripts read (docs/RESULTS.md)
// and read and wrote its data files; an op ported from it keeps both by setting
// OpDesc::seed_format. The host prints every other op in its own format.
struct SeedFormat {
    std::string run_label;        // the info line's name of a run ("AllGather+GEMM")
    std::string bandwidth_label;  // the summary's line of the collective's rate ("AllGather bandwidth")
    // Reads and writes the seed's data files (--input-dir, --write-inputs): A as row slices, B
    // replicated, fp16 (host/io/data_files.hpp).
    bool input_files = false;
};

// A rank's A as the caller placed it, for an op's own golden: rows x cols 16-bit elements (fp16
// or bf16 bits, as `dtype`), row r at data + r * ld.
struct OwnMathInput {
    const std::uint16_t* data = nullptr;
    std::int64_t ld = 0;
    int rows = 0;
    int cols = 0;
    DType dtype = DType::F16;
    float at(int r, int c) const;  // element (r, c) as fp32 (exact)
};

// An op whose math is not the sharding's GEMM (moe_ffn: routed tokens through per-expert FFNs):
// it reads A (its tokens) as every op does, generates the rest of the data its math needs
// (weights, routes) in its own workspace, and gives the host each rank's expected output and the
// tolerance to check it with.
struct OwnMath {
    // Rank `rank`'s expected output (its out_rows x out_cols, row-major, fp32), from the ranks' A
    // (`a[r]` is rank r's: an op that moves tokens between ranks reads its peers') and the op's
    // deterministic data (the same the op's workspace holds in a functional run).
    std::function<std::vector<float>(const OpParams&, int rank, const std::vector<OwnMathInput>& a)> golden;
    // An element errs when |actual - expected| > abs + rel * |expected|; a rank passes when at
    // most max_failure_share of its elements err (and no NaN where the golden has none).
    double abs = 0;
    double rel = 0;
    double max_failure_share = 0;
    std::string source;  // where the rule comes from (the published host's tolerance, ...)
    // Figures of the run for the results' extras (name -> values), e.g. rows per expert.
    std::function<std::map<std::string, std::vector<double>>(const OpParams&)> extras;
    // What each rank gets, one line for the docs' op tables (--list-ops --json's own_output).
    std::string output = {};
};

struct OpDesc {
    std::string name;
    std::string title;         // for printed summaries ("AllGather GEMM")
    std::string doc;           // one line
    Sharding sharding;
    std::string comm_kind;     // what its collective is ("allgather", "allreduce", ...), or kNoComm
    // The collective's payload: bytes each rank receives, whatever the algorithm (the numerator
    // of its bandwidth figure, as nccl-tests' algbw; docs/RESULTS.md "Metrics": allgather_bytes).
    std::function<double(const OpParams&)> comm_payload_bytes;
    std::vector<VariantDesc> variants;  // the first is the default
    // The fewest ranks it runs on (-n): 2 for a collective; 1 for an op without communication,
    // and for Iris's fused ops, which Iris runs on one GPU too (their collective moves nothing).
    int min_ranks = 2;
    // Where tests and benches run it, so that a registered op is covered with nothing else to
    // write (tests/kernels/op_conformance_test.cpp, bench/op_functional_bench.cpp, bench/scale_bench.cpp):
    //   test_shape(ranks): a small shape every variant accepts on that many ranks (2, 4 and 8,
    //     and 1 when min_ranks is 1), a functional run of well under a second, whose tile count
    //     does not divide over its compute blocks (so that stream-K schedules split tiles);
    //   bench_shape: a medium shape every variant accepts, a functional run of seconds;
    //   scale_shape: a large shape at 64 ranks every variant accepts, timing-only.
    // (The benches take ranks, M, K and N of theirs, with the default tiles and blocks.)
    TestShapeFn test_shape;
    RunShape bench_shape;
    RunShape scale_shape;
    // Set by an op that keeps the seed's printed format and data files (see SeedFormat).
    std::optional<SeedFormat> seed_format;
    // Set by an op whose math is not the sharding's GEMM (see OwnMath).
    std::optional<OwnMath> own_math;

    bool communicates() const { return comm_kind != kNoComm; }
    const VariantDesc* find_variant(const std::string& name) const;
    const Sharding& sharding_of(const VariantDesc& v) const { return v.sharding ? *v.sharding : sharding; }
    const TestShapeFn& test_shape_of(const VariantDesc& v) const { return v.test_shape ? v.test_shape : test_shape; }
};

}  // namespace tandem::kernels
