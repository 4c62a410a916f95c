#pragma once
// A tile: a rows x cols matrix in one of a core's local memories (row-major). It also carries
// the times the hazard checker needs: when its last write ends and when its last read ends. An
// instruction that starts before a write it depends on has finished (a missing set_flag /
// wait_flag) is reported as an error instead of silently giving hardware-impossible results.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/core/pipe.hpp"
#include "sim/mem/dtype.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class BlockCtx;
class GmPin;          // sim/mem/gm_deferred.hpp
struct MatmulChain;  // sim/isa/deferred_cube.hpp

struct Tile {
    BlockCtx* owner = nullptr;
    std::string name;
    MemKind kind = MemKind::L1;
    std::int64_t offset_bytes = 0;
    int rows = 0;
    int cols = 0;
    DType dtype = DType::F16;
    std::byte* data = nullptr;  // null in timing-only mode
    // Functional storage order: row-major, or column-major when the data came from a DN (stored
    // transposed) tensor, so that loading it needs no transpose. Invisible to timing and hazards.
    bool column_major = false;
    // Deferred content (functional mode; sim/isa/deferred_cube.hpp): a loaded L1 tile, or an
    // L0A/L0B tile extracted from one, refers to the GM region it holds (at pin_row/pin_col of
    // `pin`) instead of a copy; an L0C accumulator holds the chain of products that make its
    // value. `data` is up to date only when both are empty (materialize() makes it so).
    mutable std::shared_ptr<GmPin> pin;
    mutable int pin_row = 0;
    mutable int pin_col = 0;
    mutable std::shared_ptr<MatmulChain> chain;
    SimTime write_end = 0;      // hazard tracking
    SimTime read_end = 0;
    const char* last_writer = "";

    std::int64_t bytes() const { return std::int64_t{rows} * cols * dtype_bytes(dtype); }
    template <class T>
    T* as() const { return reinterpret_cast<T*>(data); }
};

}  // namespace tandem
