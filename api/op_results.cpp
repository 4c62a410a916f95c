// A call's results: the figures derived from its views, by the command line's code
// (host/run/results.hpp), and the one list of its fields every surface shows (result_fields).
#include "api/context_state.hpp"
#include "host/run/results.hpp"

namespace tandem::api {

namespace {

using Field = std::optional<ResultValue> (*)(const OpResults&);

template <auto Member>
std::optional<ResultValue> plain(const OpResults& r) {
    return ResultValue(r.*Member);
}

template <auto Member>
std::optional<ResultValue> if_set(const OpResults& r) {
    const auto& v = r.*Member;
    if (!v) return std::nullopt;
    return ResultValue(*v);
}

std::optional<ResultValue> report_if_any(const OpResults& r) {
    if (r.verification_report.empty()) return std::nullopt;
    return ResultValue(r.verification_report);
}

// OpResults' fields, in its order, each under its key: the results JSON's where the command line
// has the same figure.
const std::vector<std::pair<const char*, Field>>& fields() {
    static const std::vector<std::pair<const char*, Field>> table = {
        {"op", plain<&OpResults::op>},
        {"variant", plain<&OpResults::variant>},
        {"complete", plain<&OpResults::complete>},
        {"pipelined_us", plain<&OpResults::pipelined_us>},
        {"per_rank_us", plain<&OpResults::per_rank_us>},
        {"start_us", plain<&OpResults::start_us>},
        {"end_us", plain<&OpResults::end_us>},
        {"compute_only_us", if_set<&OpResults::compute_only_us>},
        {"seq_comm_us", if_set<&OpResults::seq_comm_us>},
        {"seq_compute_us", if_set<&OpResults::seq_compute_us>},
        {"sequential_us", if_set<&OpResults::sequential_us>},
        {"speedup", if_set<&OpResults::speedup>},
        {"time_saved_us", if_set<&OpResults::time_saved_us>},
        {"time_saved_pct", if_set<&OpResults::time_saved_pct>},
        {"overlap_eff_pct", if_set<&OpResults::overlap_eff_pct>},
        {"exposed_comm_us", if_set<&OpResults::exposed_comm_us>},
        {"ideal_bound_us", if_set<&OpResults::ideal_bound_us>},
        {"flops", plain<&OpResults::flops>},
        {"tflops_per_rank", plain<&OpResults::tflops_per_rank>},
        {"tflops_compute_only", if_set<&OpResults::tflops_compute_only>},
        {"tflops_sequential", if_set<&OpResults::tflops_sequential>},
        {"comm_payload_bytes", plain<&OpResults::comm_payload_bytes>},
        {"comm_payload_gib_s", plain<&OpResults::comm_payload_gib_s>},
        {"comm_payload_gb_s", plain<&OpResults::comm_payload_gb_s>},
        {"seq_comm_gib_s", if_set<&OpResults::seq_comm_gib_s>},
        {"knobs", plain<&OpResults::knobs>},
        {"base_m", plain<&OpResults::base_m>},
        {"base_n", plain<&OpResults::base_n>},
        {"verification", plain<&OpResults::verification>},
        {"verification_report", report_if_any},
    };
    return table;
}

}  // namespace

std::vector<std::pair<std::string, ResultValue>> result_fields(const OpResults& r) {
    std::vector<std::pair<std::string, ResultValue>> out;
    for (const auto& [key, get] : fields())
        if (std::optional<ResultValue> v = get(r)) out.emplace_back(key, std::move(*v));
    return out;
}

namespace detail {

void WorkspaceState::add_figures() {
    const host::RunIdentity id = host::make_identity(session->run());
    const host::ViewTimes times{results.compute_only_us.value_or(0), results.seq_comm_us.value_or(0),
                                results.seq_compute_us.value_or(0), results.pipelined_us};
    const host::RunMetrics m = host::compute_metrics(id, times);
    OpResults& r = results;
    r.flops = m.flops;
    r.tflops_per_rank = m.tflops_per_rank;
    r.comm_payload_bytes = m.comm_payload_bytes;
    r.comm_payload_gib_s = m.comm_payload_gib_s;
    r.comm_payload_gb_s = m.comm_payload_gb_s;
    if (!r.compute_only_us) return;  // the rest needs the compute-only and sequential views (all_views)
    r.sequential_us = m.sequential_us;
    r.speedup = m.speedup;
    r.time_saved_us = m.time_saved_us;
    r.time_saved_pct = m.time_saved_pct;
    r.overlap_eff_pct = m.overlap_eff_pct;
    r.exposed_comm_us = m.exposed_comm_us;
    r.ideal_bound_us = m.ideal_bound_us;
    r.tflops_compute_only = m.tflops_compute_only;
    r.tflops_sequential = m.tflops_sequential;
    r.seq_comm_gib_s = m.seq_comm_gib_s;
}

}  // namespace detail

}  // namespace tandem::api
