#pragma once
// The registered ops' variants as gtest parameters: the conformance suite takes every one, the
// dtype suites (fp32, int8) those that declare the dtype. One case per variant, named
// "op__variant" in ctest.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "tests/support/op_conformance.hpp"

namespace tandem::test {

struct VariantCase {
    const kernels::OpDesc* op;
    const kernels::VariantDesc* variant;
};

// How gtest (and so ctest's test names) prints a case: "op / variant", not its bytes.
inline void PrintTo(const VariantCase& c, std::ostream* os) { *os << c.op->name << " / " << c.variant->name; }

inline std::string variant_case_name(const ::testing::TestParamInfo<VariantCase>& info) {
    return info.param.op->name + "__" + info.param.variant->name;
}

inline bool takes_dtype(const kernels::VariantDesc& v, DType d) {
    return std::find(v.dtypes.begin(), v.dtypes.end(), d) != v.dtypes.end();
}

// Every registered variant that `keep` accepts (all of them without one).
inline std::vector<VariantCase> registered_variants(const std::function<bool(const kernels::VariantDesc&)>& keep = {}) {
    std::vector<VariantCase> cases;
    for (const kernels::OpDesc* op : kernels::registered_ops())
        for (const kernels::VariantDesc& v : op->variants)
            if (!keep || keep(v)) cases.push_back(VariantCase{op, &v});
    return cases;
}

// A run of the case's small test shape on `ranks` ranks with `dtype` inputs and fp32 output.
inline host::RunRequest dtype_request(const VariantCase& c, int ranks, DType dtype) {
    host::RunRequest r = conformance_config(*c.op, *c.variant, c.op->test_shape_of(*c.variant)(ranks));
    r.dtype = dtype;
    r.out_dtype = DType::F32;
    return r;
}

// The case's first fault, on 2 ranks with `dtype` inputs (under the last schedule when it acts
// on the stream-K fix-up), is caught.
inline void expect_first_fault_caught(const VariantCase& c, DType dtype, const Profile& p) {
    ASSERT_FALSE(c.variant->faults.empty());
    host::RunRequest r = dtype_request(c, 2, dtype);
    r.fault = c.variant->faults.front();
    if (!c.variant->schedules.empty() && r.fault.find("fixup") != std::string::npos) r.schedule = c.variant->schedules.back();
    SCOPED_TRACE(describe(r));
    EXPECT_TRUE(fault_caught(r, p));
}

}  // namespace tandem::test
