// The nearest known name. See nearest_word.hpp.
#include "host/params/nearest_word.hpp"

#include <algorithm>

namespace tandem::host {
namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& known) {
    std::string best;
    std::size_t best_distance = 0;
    for (const std::string& k : known) {
        const std::size_t d = edit_distance(word, k);
        if (d * 3 > std::max(word.size(), k.size())) continue;
        if (best.empty() || d < best_distance) {
            best = k;
            best_distance = d;
        }
    }
    return best;
}

}  // namespace tandem::host
