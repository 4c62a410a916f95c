#include "kernels/launch_signature.hpp"

#include <fmt/format.h>

namespace tandem::kernels {

void sign_launches(ViewPlan& plan, const OpParams& params) {
    const std::string shape = fmt::format("M={} K={} N={} dtype={} out_dtype={} ranks={}", params.m, params.k, params.n,
                                          dtype_name(params.dtype), dtype_name(params.out_dtype), params.ranks);
    for (ViewPhase& phase : plan.phases)
        for (StreamLaunch& l : phase.launches) l.kernel.signature = fmt::format("{} blocks={}", shape, l.kernel.blocks);
}

}  // namespace tandem::kernels
