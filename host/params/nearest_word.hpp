#pragma once
// The known name nearest to a mistyped one ("varient" -> "variant"), for messages that name an
// unknown key and suggest what was probably meant.
#include <string>
#include <vector>

namespace tandem::host {

// The entry of `known` with the fewest single-character edits (insert, delete, substitute, swap
// two neighbours) from `word`, when that is at most a third of the longer's length (a guess
// further off would mislead); the first of equals. Empty when none is that near.
std::string nearest_word(const std::string& word, const std::vector<std::string>& known);

}  // namespace tandem::host
