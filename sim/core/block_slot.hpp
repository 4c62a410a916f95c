#pragma once
// A launch's block parts as a stream numbers them (its slots): block b in slot b, or, in a MIX
// launch (one AIC and its two AIVs per block), the AIC in slot 3b and the AIVs in 3b + 1 and
// 3b + 2. Here, below both the logical process and the sanitizer, so that their reports name a
// slot the same way.
#include <string>

#include <fmt/format.h>

namespace tandem {

inline constexpr int kMixPartsPerBlock = 3;

// "block 3" or, in a MIX launch, "block 3 AIC" / "block 3 AIV sub-block 1".
inline std::string block_slot_label(int slot, bool mix) {
    if (!mix) return fmt::format("block {}", slot);
    const int part = slot % kMixPartsPerBlock;
    if (part == 0) return fmt::format("block {} AIC", slot / kMixPartsPerBlock);
    return fmt::format("block {} AIV sub-block {}", slot / kMixPartsPerBlock, part - 1);
}

}  // namespace tandem
