#pragma once
// Core types, pipes and local memories, named as Ascend's tools name them.
#include <cstdint>

namespace tandem {

enum class CoreType : std::uint8_t { AIC, AIV };

// PIPE_S: scalar; PIPE_V: vector; PIPE_M: cube; PIPE_MTE1: L1->L0A/L0B; PIPE_MTE2: GM->L1/UB;
// PIPE_MTE3: UB->GM; PIPE_FIX: L0C->GM; PIPE_ALL: every pipe (barriers only).
enum class Pipe : std::uint8_t { S, V, M, MTE1, MTE2, MTE3, FIX, ALL };
inline constexpr int kPipeCount = 7;  // without ALL
inline constexpr int kEventIds = 8;

enum class MemKind : std::uint8_t { L1, L0A, L0B, L0C, UB };
inline constexpr int kMemKindCount = 5;

inline constexpr int pipe_index(Pipe p) { return static_cast<int>(p); }

inline const char* pipe_name(Pipe p) {
    switch (p) {
        case Pipe::S: return "SCALAR";
        case Pipe::V: return "VECTOR";
        case Pipe::M: return "CUBE";
        case Pipe::MTE1: return "MTE1";
        case Pipe::MTE2: return "MTE2";
        case Pipe::MTE3: return "MTE3";
        case Pipe::FIX: return "FIXP";
        case Pipe::ALL: return "ALL";
    }
    return "?";
}

inline const char* core_type_name(CoreType t) { return t == CoreType::AIC ? "AIC" : "AIV"; }

inline const char* mem_kind_name(MemKind k) {
    switch (k) {
        case MemKind::L1: return "L1";
        case MemKind::L0A: return "L0A";
        case MemKind::L0B: return "L0B";
        case MemKind::L0C: return "L0C";
        case MemKind::UB: return "UB";
    }
    return "?";
}

// Which pipes a core type has (an instruction on a missing pipe is an error).
inline bool core_has_pipe(CoreType t, Pipe p) {
    switch (p) {
        case Pipe::S:
        case Pipe::MTE2:
        case Pipe::ALL: return true;
        case Pipe::M:
        case Pipe::MTE1:
        case Pipe::FIX: return t == CoreType::AIC;
        case Pipe::V:
        case Pipe::MTE3: return t == CoreType::AIV;
    }
    return false;
}

inline bool core_has_memory(CoreType t, MemKind k) {
    return t == CoreType::AIC ? k != MemKind::UB : k == MemKind::UB;
}

}  // namespace tandem
