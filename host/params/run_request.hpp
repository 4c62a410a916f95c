#pragma once
// What a caller asks of one run: every Run parameter of the schema (host/params/
// param_schema.hpp), as given. A value left unset is resolved per run by the ops facade
// (host/ops/op_facade.hpp): the op's first variant, the variant's first schedule, output dtype
// and comm mode, the profile's core counts for the blocks. The initializers are the schema's
// defaults (tested). The command line, a sweep row, the C++ API and the Python module all fill
// one of these, each through the schema (set_param, host/params/param_values.hpp).
#include <map>
#include <optional>
#include <string>

#include "kernels/op_desc.hpp"
#include "sim/mem/dtype.hpp"

namespace tandem::host {

// The op a run without --op runs: the registry's first (the seed's AllGather+GEMM).
const std::string& default_op_name();

struct RunRequest {
    std::string op = default_op_name();  // a registered op (kernels/registry.hpp), or op_desc's name
    // The op itself when it is not in the registry (an API user's op, kernels/op_desc.hpp; its name
    // is `op`); null: `op` is looked up in the registry. Not owned: the caller keeps it alive.
    const kernels::OpDesc* op_desc = nullptr;
    std::string variant;   // empty: the op's first
    std::string schedule;  // empty: the variant's first
    DType dtype = DType::F16;
    std::optional<DType> out_dtype;  // unset: the variant's first
    kernels::BiasKind bias = kernels::BiasKind::None;
    std::string comm_mode;              // empty: the variant's first ("mesh")
    std::map<std::string, int> knobs;   // the variant's integer knobs given (chunk_tiles, ...)
    std::string fault;                  // tests only: a sabotage the variant lists (VariantDesc::faults)
    std::string soc = "Ascend910B1";    // a profile in the profile directory (resolved: the profile's name)
    std::string profile_file;           // a profile file instead of `soc`'s
    int ranks = 2;
    int m = 2048;
    int k = 2048;
    int n = 1024;
    int base_m = 128;
    int base_n = 256;
    std::optional<int> compute_blocks;  // unset: the profile's AIC count (or the variant's rule)
    std::optional<int> comm_blocks;     // unset: the profile's AIV count (or the variant's rule)
    bool timing_only = false;
    bool sanitize = false;
    int warmup_runs = 0;                // each view run this many times untimed before it is timed
};

}  // namespace tandem::host
