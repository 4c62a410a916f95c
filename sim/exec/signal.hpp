#pragma once
// Signals: int32 words in some rank's GM that TNOTIFY writes and TWAIT/TTEST read.
#include <cstdint>

namespace tandem {

enum class NotifyOp : std::uint8_t { Set, AtomicAdd };
enum class CmpOp : std::uint8_t { EQ, NE, GT, GE, LT, LE };

inline bool compare(std::int32_t seen, CmpOp cmp, std::int32_t expected) {
    switch (cmp) {
        case CmpOp::EQ: return seen == expected;
        case CmpOp::NE: return seen != expected;
        case CmpOp::GT: return seen > expected;
        case CmpOp::GE: return seen >= expected;
        case CmpOp::LT: return seen < expected;
        case CmpOp::LE: return seen <= expected;
    }
    return false;
}

inline const char* cmp_symbol(CmpOp cmp) {
    switch (cmp) {
        case CmpOp::EQ: return "==";
        case CmpOp::NE: return "!=";
        case CmpOp::GT: return ">";
        case CmpOp::GE: return ">=";
        case CmpOp::LT: return "<";
        case CmpOp::LE: return "<=";
    }
    return "?";
}

// Where a signal lives: a rank and a device address (4-byte aligned, inside an allocation).
struct SignalAddr {
    int rank = 0;
    std::int64_t address = 0;
};

}  // namespace tandem
