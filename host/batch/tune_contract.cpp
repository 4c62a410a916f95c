// The contract a tuned configuration must compute. See tune_contract.hpp.
#include "host/batch/tune_contract.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tandem::host {
namespace {

// How rank r holds an operand, in the words of docs/ops/README.md ("How the operands are split").
std::string split_words(kernels::Split s) {
    switch (s) {
        case kernels::Split::Replicated: return "the same on every rank";
        case kernels::Split::Rows: return "split by rows";
        case kernels::Split::Cols: return "split by columns";
    }
    return "?";
}

// What each rank ends with.
std::string ends_with_words(const kernels::Sharding& s) {
    if (s.out_like_a) return "rows like its A";
    switch (s.out) {
        case kernels::Split::Replicated: return "all of C";
        case kernels::Split::Rows: return "a row block of C";
        case kernels::Split::Cols: return "a column block of C";
    }
    return "?";
}

std::string dtypes_text(const std::vector<DType>& ts) {
    std::vector<std::string> names;
    for (DType t : ts) names.push_back(dtype_name(t));
    return fmt::format("{}", fmt::join(names, ", "));
}

bool has(const std::vector<DType>& ts, DType t) { return std::find(ts.begin(), ts.end(), t) != ts.end(); }

}  // namespace

TuneContract contract_of(const ResolvedRun& ref) {
    TuneContract c;
    c.dtype = ref.params.dtype;
    c.out_dtype = ref.params.out_dtype;
    c.bias = ref.params.bias;
    c.sharding = ref.sharding();
    return c;
}

std::string contract_difference(const kernels::OpDesc& op, const kernels::VariantDesc& v, const TuneContract& c) {
    std::vector<std::string> why;
    if (!has(v.dtypes, c.dtype)) why.push_back(fmt::format("{} input only (asked: {})", dtypes_text(v.dtypes), dtype_name(c.dtype)));
    if (!has(v.out_dtypes, c.out_dtype)) {
        why.push_back(fmt::format("{} output only (asked: {})", dtypes_text(v.out_dtypes), dtype_name(c.out_dtype)));
    }
    if (c.bias != kernels::BiasKind::None && !v.takes_bias) why.push_back("no bias (asked: a bias)");
    const kernels::Sharding& s = op.sharding_of(v);
    if (s.a != c.sharding.a) why.push_back(fmt::format("A {} (asked: {})", split_words(s.a), split_words(c.sharding.a)));
    if (s.b != c.sharding.b) why.push_back(fmt::format("B {} (asked: {})", split_words(s.b), split_words(c.sharding.b)));
    if (s.k_per_rank != c.sharding.k_per_rank) {
        why.push_back(s.k_per_rank ? "sums the ranks' products (asked: one product)"
                                   : "one product (asked: the ranks' products summed)");
    }
    if (ends_with_words(s) != ends_with_words(c.sharding)) {
        why.push_back(fmt::format("each rank ends with {} (asked: {})", ends_with_words(s), ends_with_words(c.sharding)));
    }
    return fmt::format("{}", fmt::join(why, "; "));
}

}  // namespace tandem::host
