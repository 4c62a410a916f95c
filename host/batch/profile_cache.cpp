#include "host/batch/profile_cache.hpp"

namespace tandem::host {

namespace fs = std::filesystem;

std::shared_ptr<const Profile> ProfileCache::by_soc(const std::string& soc) {
    auto it = by_soc_.find(soc);
    if (it == by_soc_.end()) {
        it = by_soc_.emplace(soc, std::make_shared<const Profile>(load_profile_by_soc(soc, default_profile_dir()))).first;
    }
    return it->second;
}

std::shared_ptr<const Profile> ProfileCache::by_file(const fs::path& file) {
    std::error_code ec;
    const fs::path key_path = fs::weakly_canonical(file, ec);
    const std::string key = ec ? file.string() : key_path.string();
    auto it = by_file_.find(key);
    if (it == by_file_.end()) it = by_file_.emplace(key, std::make_shared<const Profile>(load_profile(file))).first;
    return it->second;
}

std::shared_ptr<const Profile> ProfileCache::of(const RunRequest& r) {
    return r.profile_file.empty() ? by_soc(r.soc) : by_file(r.profile_file);
}

}  // namespace tandem::host
