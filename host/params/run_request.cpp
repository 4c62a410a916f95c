#include "host/params/run_request.hpp"

#include "kernels/registry.hpp"

namespace tandem::host {

const std::string& default_op_name() {
    static const std::string name = kernels::registered_ops().front()->name;
    return name;
}

}  // namespace tandem::host
