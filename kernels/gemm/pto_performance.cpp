// gemm --variant pto_performance: pto-isa's gemm_performance kernel (perf_kernel.hpp) for the
// shared host. The published kernel is compiled for one shape; a shape it cannot run (its grid
// and tiles do not divide it, K is not whole L1 panels) or a tiling it does not have is refused,
// naming the flag and the nearest value it can run.
#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/gemm/gemm_run.hpp"
#include "kernels/gemm/perf_kernel.hpp"
#include "kernels/gemm/variants.hpp"

namespace tandem::kernels::gemm {

namespace {

using T = PerfTiling;

// A tiling value the published kernel fixes at compile time.
void check_fixed(const ParamRef& p, int value, int published, const char* rule) {
    if (value == published) return;
    throw ParamError({{p, value}}, fmt::format("{} ({} tiled takes others)", rule, mention(kParamVariant)),
                     {{p, published}});
}

void validate_published(const OpParams& p, const BufferLimits& lim) {
    check_fixed(kParamBaseM, p.base_m, T::kBaseM, "the published kernel's base tile is 128 x 256 x 64 (compile-time constants)");
    check_fixed(kParamBaseN, p.base_n, T::kBaseN, "the published kernel's base tile is 128 x 256 x 64 (compile-time constants)");
    check_fixed(kParamComputeBlocks, p.compute_blocks, T::kBlocks,
                "the published kernel launches 24 blocks, one per C block of its 4 x 6 grid (blocks beyond the AIC "
                "cores run in waves)");
    check_positive(kParamM, p.m, T::kGridM * T::kBaseM, "4 x base-m");
    check_positive(kParamK, p.k, T::kPanelK, "stepK x baseK");
    check_positive(kParamN, p.n, T::kGridN * T::kBaseN, "6 x base-n");
    check_multiple(kParamM, p.m, T::kGridM * T::kBaseM, "4 x base-m",
                   "the published kernel splits M over 4 blocks of whole 128-row strips and has no tail handling");
    check_multiple(kParamN, p.n, T::kGridN * T::kBaseN, "6 x base-n",
                   "the published kernel splits N over 6 blocks of whole 256-column strips and has no tail handling");
    check_multiple(kParamK, p.k, T::kPanelK, "stepKa x baseK = 4 x 64",
                   "K is loaded in L1 panels of 4 K steps of 64; a partial panel would never release its L1 slot");
    const std::vector<BufferNeed> needs = {
        {"L1", "two 128 x 256 A panels and two 256 x 256 B panels (fp16)", 2.0 * (T::kBaseM + T::kBaseN) * T::kPanelK * 2,
         lim.l1_bytes},
        {"L0A", "two 128 x 64 fp16 slices", 2.0 * T::kBaseM * T::kBaseK * 2, lim.l0a_bytes},
        {"L0B", "two 64 x 256 fp16 slices", 2.0 * T::kBaseK * T::kBaseN * 2, lim.l0b_bytes},
        {"L0C", "one 128 x 256 fp32 accumulator", double(T::kBaseM) * T::kBaseN * 4, lim.l0c_bytes},
    };
    for (const BufferNeed& need : needs) {
        if (need.bytes > static_cast<double>(need.capacity)) {
            throw ParamError({{kParamSoc, lim.profile_name}},
                             fmt::format("the published kernel's {} holds {} = {:.0f} bytes, more than the profile's {} "
                                         "bytes; use {} tiled",
                                         need.buffer, need.holds, need.bytes, need.capacity, mention(kParamVariant)));
        }
    }
}

class PtoPerformanceRun final : public GemmRun {
public:
    using GemmRun::GemmRun;

protected:
    KernelLaunch kernel(int rank) const override {
        const RankTensors& t = tensors(rank);
        PerfArgs args{PerfTiling(params().m, params().k, params().n), t.a, t.b, t.out};
        if (params().fault == "skip_last_k_step") args.fault = PerfFault::SkipLastKStep;
        return make_gemm_performance_kernel(args);
    }
};

}  // namespace

VariantDesc pto_performance_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "pto_performance",
                                   "pto-isa's gemm_performance kernel as published: 24 AIC blocks on a 4 x 6 grid of C "
                                   "blocks, 128 x 256 x 64 tiles, 4 K steps per L1 panel, double-buffered L1 and L0, one "
                                   "L0C accumulator (the cube waits for every store)");
    v.constraints = "M % 512 == 0, N % 1536 == 0, K % 256 == 0 (no tail handling); base tile 128 x 256 and 24 "
                    "blocks only (blocks beyond the AIC cores run in waves); fp16 in, fp32 out; no bias";
    v.dtypes = {DType::F16};
    v.out_dtypes = {DType::F32};
    v.takes_bias = false;
    v.padding = nullptr;  // the published kernel runs whole grids only (validate_published)
    v.default_shape = std::array<int, 3>{6144, 6144, 6144};  // the published build
    v.default_compute_blocks = [](const BufferLimits&) { return PerfTiling::kBlocks; };
    v.faults = {"skip_last_k_step"};
    // The smallest grid it runs: 4 x 6 C blocks of one 128 x 256 tile, one L1 panel of K.
    v.test_shape = [](int ranks) { return RunShape{ranks, 512, 256, 1536, 128, 256, PerfTiling::kBlocks, std::nullopt}; };
    v.validate = validate_published;
    v.workspace_bytes = [](const OpParams&) { return 0.0; };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<PtoPerformanceRun>(p); };
    return v;
}

}  // namespace tandem::kernels::gemm
