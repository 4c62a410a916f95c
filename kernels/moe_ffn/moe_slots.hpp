#pragma once
// moe_ffn's signal words in each rank's window (README.md "Signals"): named arrays of 32-bit
// words, one table for every schedule. The published kernel gives each slot a 64-byte line; only
// the word's value is modelled, so a slot is one word here.
#include <string>
#include <vector>

namespace tandem::kernels::moe {

class SlotTable {
public:
    // Appends an array of `count` words named `name`; returns the index of its first word.
    int add(const std::string& name, int count);
    int words() const { return words_; }
    // "gmm1_ready[3]" for a word index, or empty past the table.
    std::string name_of(int index) const;

private:
    struct Array {
        std::string name;
        int first = 0;
        int count = 0;
    };
    std::vector<Array> arrays_;
    int words_ = 0;
};

// Every schedule's slots (W ranks, E local experts). `per_expert`/`bulk` use the four stage
// counters; `expert_major` (the published V1) its arrival/ready pairs per expert, the GMM2 join,
// the Unpermute gates and the peers' ExpertProgress; `baseline` its cross-rank sync (its other
// hand-overs are FFTS flags, not GM words).
struct MoeSlots {
    MoeSlots(int ranks, int experts);

    SlotTable table;
    // The simple schedules' stage counters (one count per block of the previous stage).
    int dispatched, gmm1_done, swiglu_done, gmm2_done;
    // Count-as-flag: count_landed[s] = 1 once source rank s's count row is in this window.
    int count_landed;
    // expert_major's per-expert chains: producers add an arrival, one coordinator sets ready.
    int dispatch_arrival, gmm1_ready, gmm1_arrival, swiglu_ready, swiglu_arrival, gmm2_ready, gmm2_arrival, combine_ready;
    int gmm1_finished;  // AIC0 of the GMM1 group has run its last tile (the published gmm1Done)
    int gmm2_join;      // the join decision: e + 1 per expert boundary, | kJoinBit when joining at e
    int unpermute_release, unpermute_phase1, unpermute_phase1_done, combine_finished, unpermute_phase2;
    int progress;       // [W]: experts producer rank p has pushed back to this rank (ExpertProgress)
    // baseline: CrossRankSync's word (peers add 1 each).
    int cross_rank_sync;

    static constexpr int kJoinBit = 0x40000000;
};

}  // namespace tandem::kernels::moe
