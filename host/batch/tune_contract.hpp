#pragma once
// What `--tune` may put side by side: only configurations that compute the caller's contract.
// A variant that takes other inputs (every rank the same B instead of its own), gives another
// output dtype (fp16 where the caller asked for fp32: half the bytes to move) or leaves each rank
// with something else is another problem, not a faster way to solve this one; ranking it beside
// the others would recommend a command that does not do what the caller runs.
#include <string>
#include <vector>

#include "host/ops/op_facade.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::host {

// The caller's contract, read from the default configuration as resolved.
struct TuneContract {
    DType dtype = DType::F16;
    DType out_dtype = DType::F32;
    kernels::BiasKind bias = kernels::BiasKind::None;
    kernels::Sharding sharding;  // the inputs each rank holds and what each rank ends with
};

TuneContract contract_of(const ResolvedRun& ref);

// Empty when variant `v` of `op` computes `c`; else why not, in a user's words
// ("fp16 output only (asked: fp32); B: the same on every rank (asked: split by rows)").
std::string contract_difference(const kernels::OpDesc& op, const kernels::VariantDesc& v, const TuneContract& c);

// A variant the search left out, and why.
struct LeftOutVariant {
    std::string variant;
    std::string reason;
};

}  // namespace tandem::host
