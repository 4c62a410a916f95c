#pragma once
// The device code of gemm_all_to_all: what each kernel reads and writes, and its launch.
#include <cstdint>
#include <string>
#include <vector>

#include <tandem/kernel.hpp>

namespace gemm_all_to_all {

using namespace tandem;
using namespace tandem::kernels;

// The cube kernel: C_r = A_r x B (+ bias), tile by tile, data-parallel over its blocks; each
// tile is stored to c_local, then its ready flag is set.
struct GemmFlagArgs {
    GmTensor a;        // A_r: M/n x K (padded K)
    GmTensor b;        // B: K x N, stored N x K "DN"
    GmTensor bias;     // 1 x len (invalid without bias)
    BiasKind bias_kind = BiasKind::None;
    int row0 = 0;      // A_r's first row in the global A (the M bias is indexed by it)
    GmTensor c_local;  // C_r: M/n x N, out dtype, this rank's workspace
    int base_m = 0;
    int base_n = 0;
    SignalAddr ready;  // this rank's ready flags: one int32 per tile of C_r, row-major tile order
    bool skip_last_k_panel = false;  // fault: a wrong product
    bool flag_before_store = false;  // fault: the flag is set without waiting for the tile's store
};

// The vector kernel: tile t of C_r, once flagged, goes to the rank owning its columns, at rows
// my_rank * M/n of that rank's output. Tiles move through UB in push_rows x base_n pieces.
struct PushArgs {
    int my_rank = 0;
    GmTensor c_local;
    std::vector<GmTensor> out;  // every rank's output (M x N/n), in its window; out[my_rank] is local
    int base_m = 0;
    int base_n = 0;
    int push_rows = 0;          // divides base_m
    SignalAddr ready;           // as GemmFlagArgs::ready
    std::vector<SignalAddr> arrivals;  // every rank's arrival counter
    int skip_rank = -1;         // fault: tiles owned by this rank are not sent
};

KernelLaunch make_gemm_flag_kernel(const GemmFlagArgs& args, int blocks);
KernelLaunch make_push_kernel(const PushArgs& args, int blocks);

}  // namespace gemm_all_to_all
