// The registry as data. See list_ops_json.hpp.
#include "host/cli/list_ops_json.hpp"

#include "host/params/param_schema.hpp"
#include "kernels/registry.hpp"

namespace tandem::host {
namespace {

const char* split_key(kernels::Split s) {
    switch (s) {
        case kernels::Split::Replicated: return "replicated";
        case kernels::Split::Rows: return "rows";
        case kernels::Split::Cols: return "cols";
    }
    return "?";
}

nlohmann::json sharding_json(const kernels::Sharding& s) {
    return {{"a", split_key(s.a)},
            {"b", split_key(s.b)},
            {"out", split_key(s.out)},
            {"k_per_rank", s.k_per_rank},
            {"out_like_a", s.out_like_a}};
}

nlohmann::json shape_json(const kernels::RunShape& s) {
    nlohmann::json j = {{"ranks", s.ranks}, {"m", s.m}, {"k", s.k}, {"n", s.n}, {"base_m", s.base_m}, {"base_n", s.base_n}};
    j["compute_blocks"] = s.compute_blocks ? nlohmann::json(*s.compute_blocks) : nlohmann::json(nullptr);
    j["comm_blocks"] = s.comm_blocks ? nlohmann::json(*s.comm_blocks) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json dtypes_json(const std::vector<DType>& ts) {
    nlohmann::json j = nlohmann::json::array();
    for (DType t : ts) j.push_back(dtype_name(t));
    return j;
}

nlohmann::json knob_json(const kernels::KnobDesc& k) {
    return {{"name", k.name},       {"flag", knob_flag(k.name)}, {"aliases", k.aliases},
            {"doc", k.doc},         {"tune_values", k.tune_values}, {"words", k.words}};
}

// The small shapes tests run the variant at (OpDesc::test_shape): by rank count, the ranks the
// op runs on among 1, 2, 4 and 8.
nlohmann::json test_shapes_json(const kernels::OpDesc& op, const kernels::VariantDesc& v) {
    nlohmann::json j = nlohmann::json::object();
    const kernels::TestShapeFn& shape = op.test_shape_of(v);
    if (!shape) return j;
    for (int ranks : {1, 2, 4, 8}) {
        if (ranks >= op.min_ranks) j[std::to_string(ranks)] = shape_json(shape(ranks));
    }
    return j;
}

nlohmann::json variant_json(const kernels::OpDesc& op, const kernels::VariantDesc& v) {
    nlohmann::json j = {{"name", v.name},
                        {"doc", v.doc},
                        {"constraints", v.constraints},
                        {"schedules", v.schedules},
                        {"dtypes", dtypes_json(v.dtypes)},
                        {"out_dtypes", dtypes_json(v.out_dtypes)},
                        {"takes_bias", v.takes_bias},
                        {"comm_modes", v.comm_modes},
                        {"sharding", sharding_json(op.sharding_of(v))},
                        {"test_shapes", test_shapes_json(op, v)}};
    j["default_shape"] = v.default_shape ? nlohmann::json(*v.default_shape) : nlohmann::json(nullptr);
    j["knobs"] = nlohmann::json::array();
    for (const kernels::KnobDesc& k : v.knobs) j["knobs"].push_back(knob_json(k));
    return j;
}

}  // namespace

nlohmann::json list_ops_json() {
    nlohmann::json ops = nlohmann::json::array();
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        nlohmann::json j = {{"name", op->name},
                            {"title", op->title},
                            {"doc", op->doc},
                            {"comm_kind", op->comm_kind},
                            {"min_ranks", op->min_ranks},
                            {"own_math", op->own_math.has_value()},
                            {"seed_format", op->seed_format.has_value()},
                            {"sharding", sharding_json(op->sharding)},
                            {"bench_shape", shape_json(op->bench_shape)},
                            {"scale_shape", shape_json(op->scale_shape)}};
        if (op->own_math && !op->own_math->output.empty()) j["own_output"] = op->own_math->output;
        j["variants"] = nlohmann::json::array();
        for (const kernels::VariantDesc& v : op->variants) j["variants"].push_back(variant_json(*op, v));
        ops.push_back(std::move(j));
    }
    return {{"ops", ops}};
}

}  // namespace tandem::host
