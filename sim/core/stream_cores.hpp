#pragma once
// The AI cores a stream's kernels run on. Each stream (logical process) of a rank has its own:
// kernels in flight at once on two streams of one rank never share a core's pipes or local
// memories. The model assumes they fit on the chip side by side (sim/MODEL.md, "Streams and
// cores"); block dispatch across streams competing for the same cores is not modelled.
#include <vector>

#include "sim/core/core_state.hpp"
#include "sim/profile.hpp"

namespace tandem {

// The most cores of one type a chip may have: event records hold a core's index in 16 bits
// (sim/exec/instr_record.hpp).
inline constexpr int kMaxCoresPerType = 32767;

class StreamCores {
public:
    // Throws SimError when the chip has more than kMaxCoresPerType cores of a type.
    explicit StreamCores(const ChipProfile& chip);

    int count(CoreType t) const { return t == CoreType::AIC ? aic_count_ : aiv_count_; }
    // The cores of type t, created on first use (a comm stream never touches its AIC cores).
    std::vector<CoreState>& cores(CoreType t);
    // Cores of type t created so far (empty if this stream never ran a kernel on them).
    const std::vector<CoreState>& created(CoreType t) const { return t == CoreType::AIC ? aic_ : aiv_; }

private:
    int aic_count_;
    int aiv_count_;
    std::vector<CoreState> aic_;
    std::vector<CoreState> aiv_;
};

}  // namespace tandem
