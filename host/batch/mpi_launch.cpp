// See mpi_launch.hpp.
#include "host/batch/mpi_launch.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace tandem::host {

int mpi_launch_size_from_env() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
        const char* text = std::getenv(name);
        if (text == nullptr) continue;
        int size = 0;
        const auto [end, ec] = std::from_chars(text, text + std::strlen(text), size);
        if (ec == std::errc() && *end == '\0' && size >= 1) return size;
    }
    return 1;
}

}  // namespace tandem::host
