#pragma once
// Profiles by what a run names: a SoC (`Ascend910B3`, looked up in the profile directory) or a
// TOML file, each loaded once for the many rows of a sweep or configurations of a tune.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "host/params/run_request.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// Not thread-safe: used while planning, before the pool starts.
class ProfileCache {
public:
    // Throws tandem::SimError (unknown SoC, missing or malformed file).
    std::shared_ptr<const Profile> by_soc(const std::string& soc);
    std::shared_ptr<const Profile> by_file(const std::filesystem::path& file);
    // The profile a request names (its profile_file if set, else its soc).
    std::shared_ptr<const Profile> of(const RunRequest& r);

private:
    std::map<std::string, std::shared_ptr<const Profile>> by_soc_;
    std::map<std::string, std::shared_ptr<const Profile>> by_file_;
};

}  // namespace tandem::host
