// The context, its tensors and workspaces (the calls themselves: api/op_call.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/context_state.hpp"
#include "host/run/op_inputs.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/param_words.hpp"
#include "kernels/param_error.hpp"
#include "kernels/registry.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/sim_error.hpp"

namespace tandem::api {

namespace {
// Every public entry point turns the simulator's errors into tandem::api::Error, same message.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(e.what());
    }
}
}  // namespace

const char* dtype_name(DataType t) {
    switch (t) {
        case DataType::F16: return "fp16";
        case DataType::BF16: return "bf16";
        case DataType::F32: return "fp32";
        case DataType::I8: return "int8";
    }
    return "?";
}

DataType parse_data_type(const std::string& name) {
    if (name == "fp16" || name == "float16") return DataType::F16;
    if (name == "bf16" || name == "bfloat16") return DataType::BF16;
    if (name == "fp32" || name == "float32") return DataType::F32;
    if (name == "int8") return DataType::I8;
    throw Error(fmt::format("dtype '{}': not one of fp16, bf16, fp32, int8", name));
}

namespace detail {

DType to_sim(DataType t) {
    switch (t) {
        case DataType::F16: return DType::F16;
        case DataType::BF16: return DType::BF16;
        case DataType::F32: return DType::F32;
        case DataType::I8: return DType::I8;
    }
    return DType::F16;
}

// ------------------------------------------------------------------------------ tensors --

TensorState::~TensorState() {
    try {
        ctx->release(per_rank);
    } catch (...) {
        // A failed cluster keeps its memory until the context goes; nothing to report here.
    }
}

GmTensor TensorState::on(int rank) const {
    return GmTensor(*per_rank.at(static_cast<std::size_t>(rank)), 0, rows, cols, cols, to_sim(dtype), Layout::ND);
}

// ------------------------------------------------------------------------------ context --

namespace {
Profile load_context_profile(const ContextOptions& o) {
    return o.profile_file.empty() ? load_profile_by_soc(o.soc, default_profile_dir()) : load_profile(o.profile_file);
}
}  // namespace

ContextState::ContextState(const ContextOptions& o) : profile(load_context_profile(o)), options(o) {
    const int max_ranks = o.functional ? host::kMaxFunctionalRanks : host::kMaxTimingOnlyRanks;
    if (o.ranks < host::kMinRanks || o.ranks > max_ranks) {
        const kernels::ParamError refused({{kernels::kParamRanks, o.ranks}},
                                          fmt::format("a {} context has {}..{} ranks",
                                                      o.functional ? "functional" : "timing-only", host::kMinRanks,
                                                      max_ranks),
                                          {{kernels::kParamRanks, std::clamp(o.ranks, host::kMinRanks, max_ranks)}});
        const host::Dialect words = o.words == ParamWords::Python ? host::Dialect::Python : host::Dialect::Cpp;
        throw SimError("Context: " + host::message_in(refused, words));
    }
    if (const int most = cluster_max_ranks(profile.interconnect); o.ranks > most) {
        const kernels::ParamError refused({{kernels::kParamRanks, o.ranks}},
                                          fmt::format("{} describes a cluster of at most {} ranks ({} nodes of {})",
                                                      profile.name, most, profile.interconnect.max_nodes,
                                                      profile.interconnect.ranks_per_node),
                                          {{kernels::kParamRanks, most}});
        const host::Dialect words = o.words == ParamWords::Python ? host::Dialect::Python : host::Dialect::Cpp;
        throw SimError("Context: " + host::message_in(refused, words));
    }
    if (o.host_threads < 0 || o.host_threads > host::kMaxHostThreads) {
        const kernels::ParamError refused({{kernels::kParamHostThreads, o.host_threads}},
                                          fmt::format("0 (one per host core) to {}", host::kMaxHostThreads),
                                          {{kernels::kParamHostThreads, std::clamp(o.host_threads, 0, host::kMaxHostThreads)}});
        const host::Dialect words = o.words == ParamWords::Python ? host::Dialect::Python : host::Dialect::Cpp;
        throw SimError("Context: " + host::message_in(refused, words));
    }
    ClusterOptions co;
    co.ranks = o.ranks;
    co.data_mode = o.functional ? DataMode::Functional : DataMode::TimingOnly;
    co.host_threads = o.host_threads;
    runtime = std::make_unique<Runtime>(profile, co);
}

ContextState::~ContextState() = default;

void ContextState::check_usable() const {
    if (broken) throw SimError("the context's cluster stopped on an earlier error (" + *broken + "); make a new Context");
}

void ContextState::park_if_pending() {
    if (!pending.empty() && !broken) runtime->wait_until_parked();
}

std::shared_ptr<TensorState> ContextState::allocate_tensor(const std::shared_ptr<ContextState>& self, int rows, int cols,
                                                           DataType dtype) {
    check_usable();
    if (rows < 1 || cols < 1) throw SimError(fmt::format("tensor of {} x {}: both sizes must be at least 1", rows, cols));
    park_if_pending();
    auto t = std::make_shared<TensorState>();
    t->ctx = self;
    t->rows = rows;
    t->cols = cols;
    t->dtype = dtype;
    const std::int64_t bytes = std::int64_t{rows} * cols * dtype_bytes(to_sim(dtype));
    for (int r = 0; r < options.ranks; ++r) {
        t->per_rank.push_back(&runtime->cluster().chip(r).gm.allocate(fmt::format("tensor {}x{} {}", rows, cols, dtype_name(dtype)), bytes));
    }
    return t;
}

const kernels::OpDesc& ContextState::find_op(const std::string& name) const {
    for (const auto& op : user_ops)
        if (op->name == name) return *op;
    std::vector<std::string> names;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        if (op->name == name) return *op;
        names.push_back(op->name);
    }
    for (const auto& op : user_ops) names.push_back(op->name + " (added)");
    throw SimError(fmt::format("op '{}': no such op (ops: {})", name, fmt::join(names, ", ")));
}

void ContextState::add_op(std::shared_ptr<const kernels::OpDesc> op) {
    if (!op) throw SimError("ops().add: an empty op description was passed");
    if (op->name.empty()) throw SimError("ops().add: the op has no name (OpDesc::name)");
    for (const kernels::OpDesc* shipped : kernels::registered_ops()) {
        if (shipped->name == op->name)
            throw SimError(fmt::format("ops().add: '{}' is the name of a shipped op ({}); give your op another name",
                                       op->name, shipped->title));
    }
    for (const auto& added : user_ops) {
        if (added->name == op->name)
            throw SimError(fmt::format("ops().add: an op named '{}' was already added to this context", op->name));
    }
    // What the host needs of every op (it would otherwise fail deep in a call).
    if (op->variants.empty()) throw SimError(fmt::format("ops().add: op '{}' has no variant", op->name));
    if (!op->comm_payload_bytes) throw SimError(fmt::format("ops().add: op '{}' has no comm_payload_bytes", op->name));
    for (const kernels::VariantDesc& v : op->variants) {
        const char* missing = v.name.empty() ? "name" : !v.make ? "make" : !v.validate ? "validate"
                            : !v.workspace_bytes ? "workspace_bytes" : v.schedules.empty() ? "schedules"
                            : v.dtypes.empty() ? "dtypes" : v.out_dtypes.empty() ? "out_dtypes"
                            : v.comm_modes.empty() ? "comm_modes" : nullptr;
        if (missing != nullptr)
            throw SimError(fmt::format("ops().add: op '{}' variant '{}' has no {}", op->name, v.name, missing));
    }
    user_ops.push_back(std::move(op));
}

void ContextState::release(const std::vector<const GmAllocation*>& per_rank) {
    if (broken) return;
    park_if_pending();
    for (const GmAllocation* a : per_rank) runtime->cluster().chip(a->rank).gm.release(*a);
}

int ContextState::acquire_streams(const std::vector<std::string>& names) {
    for (std::size_t i = 0; i < stream_sets.size(); ++i) {
        StreamSet& s = stream_sets[i];
        if (!s.busy && s.per_rank.front().size() == names.size()) {
            bool same = true;
            for (std::size_t k = 0; k < names.size(); ++k) same = same && s.per_rank.front()[k]->name().starts_with(names[k] + "#");
            if (same) return static_cast<int>(i);
        }
    }
    // A stream's messages are told apart by rank * 16 + stream id (sim/exec/logical_process.cpp).
    constexpr std::size_t kMaxStreamsPerRank = 16;
    std::size_t existing = 0;
    for (const StreamSet& s : stream_sets) existing += s.per_rank.front().size();
    if (existing + names.size() > kMaxStreamsPerRank) {
        throw SimError(fmt::format("no free streams: {} streams per rank are in use by pending async calls and a rank "
                                   "has at most {}; call barrier() first",
                                   existing, kMaxStreamsPerRank));
    }
    StreamSet set;
    const int id = static_cast<int>(stream_sets.size());
    for (int r = 0; r < options.ranks; ++r) {
        std::vector<Stream*> streams;
        for (const std::string& n : names) streams.push_back(&runtime->host(r).create_stream(fmt::format("{}#{}", n, id)));
        set.per_rank.push_back(std::move(streams));
    }
    stream_sets.push_back(std::move(set));
    return id;
}

double ContextState::now_us() const {
    SimTime latest = 0;
    for (int r = 0; r < options.ranks; ++r) latest = std::max(latest, runtime->host(r).now());
    return to_us(latest);
}

WorkspaceState::~WorkspaceState() {
    if (!session) return;
    for (int r = 0; r < session->params().ranks; ++r) {
        try {
            ctx->release(session->allocations(r));
        } catch (...) {
        }
    }
}

}  // namespace detail

// --------------------------------------------------------------------------- public API --

namespace {
void check_rank(const detail::TensorState& t, int rank) {
    if (rank < 0 || rank >= static_cast<int>(t.per_rank.size()))
        throw SimError(fmt::format("tensor rank {}: the context has ranks 0..{}", rank, t.per_rank.size() - 1));
}

void check_data(const detail::TensorState& t, const char* what) {
    t.ctx->check_usable();
    if (!t.ctx->options.functional) throw SimError(fmt::format("{}: a timing-only context holds no data", what));
    for (const auto& w : t.ctx->pending) {
        if (w->pending_out.get() == &t) {
            throw SimError(fmt::format("{}: an async {} call still writes this tensor; call barrier() first", what, w->op));
        }
    }
}
}  // namespace

int Tensor::ranks() const { return static_cast<int>(state_->per_rank.size()); }
int Tensor::rows() const { return state_->rows; }
int Tensor::cols() const { return state_->cols; }
DataType Tensor::dtype() const { return state_->dtype; }

void Tensor::from_host_bits(int rank, const void* data, std::size_t bytes) {
    guarded([&] {
        if (!state_) throw SimError("from_host: empty tensor handle");
        check_data(*state_, "from_host");
        check_rank(*state_, rank);
        const GmTensor t = state_->on(rank);
        if (bytes != static_cast<std::size_t>(t.bytes()))
            throw SimError(fmt::format("from_host: {} bytes given for a {} x {} {} tensor ({} bytes)", bytes, rows(), cols(),
                                       dtype_name(dtype()), t.bytes()));
        gm_before_write(t.allocation(), GmSpan::of(t));
        std::memcpy(t.element_ptr(0, 0), data, bytes);
    });
}

void Tensor::to_host_bits(int rank, void* data, std::size_t bytes) const {
    guarded([&] {
        if (!state_) throw SimError("to_host: empty tensor handle");
        check_data(*state_, "to_host");
        check_rank(*state_, rank);
        const GmTensor t = state_->on(rank);
        if (bytes != static_cast<std::size_t>(t.bytes()))
            throw SimError(fmt::format("to_host: room for {} bytes given for a {} x {} {} tensor ({} bytes)", bytes, rows(),
                                       cols(), dtype_name(dtype()), t.bytes()));
        gm_before_read(t.allocation(), GmSpan::of(t));
        std::memcpy(data, t.element_ptr(0, 0), bytes);
    });
}

void Tensor::from_host(int rank, std::span<const float> values) {
    guarded([&] {
        if (!state_) throw SimError("from_host: empty tensor handle");
        const std::size_t count = static_cast<std::size_t>(rows()) * static_cast<std::size_t>(cols());
        if (values.size() != count)
            throw SimError(fmt::format("from_host: {} values given for a {} x {} tensor ({})", values.size(), rows(), cols(), count));
        if (dtype() == DataType::F32) return from_host_bits(rank, values.data(), count * sizeof(float));
        if (dtype() == DataType::I8) {
            std::vector<std::int8_t> ints(count);
            for (std::size_t i = 0; i < count; ++i) {
                const float v = std::nearbyint(values[i]);
                if (!(v >= -128.0f && v <= 127.0f))
                    throw SimError(fmt::format("from_host: value {} (element {}) is outside int8's -128..127", values[i], i));
                ints[i] = static_cast<std::int8_t>(v);
            }
            return from_host_bits(rank, ints.data(), count);
        }
        std::vector<std::uint16_t> bits(count);
        for (std::size_t i = 0; i < count; ++i) bits[i] = host::float_to_bits(detail::to_sim(dtype()), values[i]);
        from_host_bits(rank, bits.data(), count * sizeof(std::uint16_t));
    });
}

std::vector<float> Tensor::to_host(int rank) const {
    return guarded([&] {
        if (!state_) throw SimError("to_host: empty tensor handle");
        const std::size_t count = static_cast<std::size_t>(rows()) * static_cast<std::size_t>(cols());
        std::vector<float> out(count);
        if (dtype() == DataType::F32) {
            to_host_bits(rank, out.data(), count * sizeof(float));
        } else if (dtype() == DataType::I8) {
            std::vector<std::int8_t> ints(count);
            to_host_bits(rank, ints.data(), count);
            for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<float>(ints[i]);
        } else {
            std::vector<std::uint16_t> bits(count);
            to_host_bits(rank, bits.data(), count * sizeof(std::uint16_t));
            host::widen_bits(detail::to_sim(dtype()), bits.data(), out.data(), count);
        }
        return out;
    });
}

const std::string& Workspace::op() const { return state_->op; }
std::string Workspace::describe() const { return state_ ? state_->signature : "(no workspace)"; }
const OpResults& Workspace::results() const { return state_->results; }
int Workspace::calls() const { return state_->calls; }

std::vector<std::string> Ops::names() const {
    std::vector<std::string> out;
    for (const kernels::OpDesc* op : kernels::registered_ops()) out.push_back(op->name);
    for (const auto& op : state_->user_ops) out.push_back(op->name);
    return out;
}

void Ops::add(std::shared_ptr<const kernels::OpDesc> op) {
    guarded([&] { state_->add_op(std::move(op)); });
}

OpInfo Ops::info(const std::string& name, const std::string& variant) const {
    return guarded([&] {
        const kernels::OpDesc& op = state_->find_op(name);
        const kernels::VariantDesc* found = variant.empty() ? &op.variants.front() : op.find_variant(variant);
        if (found == nullptr) {
            std::vector<std::string> names;
            for (const kernels::VariantDesc& x : op.variants) names.push_back(x.name);
            throw SimError(fmt::format("{}: no variant '{}' (variants: {})", op.name, variant, fmt::join(names, ", ")));
        }
        const kernels::VariantDesc& v = *found;
        auto split = [](kernels::Split s) {
            return s == kernels::Split::Rows ? "rows" : (s == kernels::Split::Cols ? "cols" : "replicated");
        };
        const kernels::Sharding& sh = op.sharding_of(v);
        OpInfo info;
        info.name = op.name;
        info.title = op.title;
        info.doc = op.doc;
        info.a_split = split(sh.a);
        info.b_split = split(sh.b);
        info.out_split = split(sh.out);
        info.k_per_rank = sh.k_per_rank;
        for (const kernels::VariantDesc& x : op.variants) info.variants.push_back(x.name);
        info.variant = v.name;
        info.takes_bias = v.takes_bias;
        info.own_math = op.own_math.has_value();
        for (DType t : v.dtypes) info.dtypes.push_back(tandem::dtype_name(t));
        for (DType t : v.out_dtypes) info.out_dtypes.push_back(tandem::dtype_name(t));
        return info;
    });
}

Context::Context(const ContextOptions& options)
    : state_(guarded([&] { return std::make_shared<detail::ContextState>(options); })), ops_(state_.get()) {}

Context::~Context() {
    try {
        if (!state_->pending.empty() && !state_->broken) state_->barrier();
    } catch (...) {
        // The error was the last call's to report; the cluster goes away regardless.
    }
}

int Context::ranks() const { return state_->options.ranks; }
bool Context::functional() const { return state_->options.functional; }
std::string Context::profile_name() const { return state_->profile.name; }

Tensor Context::zeros(int rows, int cols, DataType dtype) {
    Tensor t;
    t.state_ = guarded([&] { return state_->allocate_tensor(state_, rows, cols, dtype); });
    return t;
}

Tensor Context::empty(int rows, int cols, DataType dtype) { return zeros(rows, cols, dtype); }

Tensor Context::from_host(int rows, int cols, DataType dtype, const std::vector<std::vector<float>>& per_rank) {
    if (static_cast<int>(per_rank.size()) != ranks())
        throw Error(fmt::format("from_host: {} per-rank arrays given for {} ranks", per_rank.size(), ranks()));
    Tensor t = zeros(rows, cols, dtype);
    for (int r = 0; r < ranks(); ++r) t.from_host(r, per_rank[static_cast<std::size_t>(r)]);
    return t;
}

void Context::barrier() {
    guarded([&] { state_->barrier(); });
}

double Context::now_us() const { return state_->now_us(); }

Workspace Ops::run(const std::string& op, Tensor& output, const Tensor& a, const Tensor& b, const Tensor* bias,
                   bool async_op, const OpConfig& config, Workspace workspace) {
    return guarded([&] {
        // The context owns this Ops; its shared state is reached through any tensor of it.
        if (!a.state_) throw SimError(fmt::format("{}: A is an empty tensor handle", op));
        return state_->run(a.state_->ctx, op, output, a, b, bias, async_op, config, std::move(workspace));
    });
}

}  // namespace tandem::api
