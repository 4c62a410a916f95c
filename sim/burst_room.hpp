#pragma once
// The room a burst leaves in a vector, given back. A kernel's first window books most of its
// transfers (a block's scalar runs far ahead of its pipes, sim/MODEL.md "What it leaves out")
// and writes thousands of flags into peers; later windows hand in a few records. A vector that
// kept its largest window's room would hold it for the rest of the run, in every stream, link
// view and region that saw a burst. One rule for all of them: room beyond twice what the vector
// holds plus kKeptSpareElements is a burst's, and is freed; less is kept, so that a vector
// refilled every window rarely allocates.
#include <cstddef>
#include <iterator>
#include <vector>

namespace tandem {

// A window's usual few records. (A count, not bytes: a stream has a link view per peer, and a
// page of spare room in each held more than the one-shot all-reduce's bursts at 64 ranks.)
inline constexpr std::size_t kKeptSpareElements = 64;

template <typename T>
bool holds_burst_room(const std::vector<T>& v) {
    return v.capacity() > 2 * v.size() + kKeptSpareElements;
}

// Frees `v`'s room beyond what it holds if that is a burst's (holds_burst_room).
template <typename T>
void release_burst_room(std::vector<T>& v) {
    if (!holds_burst_room(v)) return;
    std::vector<T>(std::make_move_iterator(v.begin()), std::make_move_iterator(v.end())).swap(v);
}

}  // namespace tandem
