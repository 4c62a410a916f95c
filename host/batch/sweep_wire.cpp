// The messages of a sweep spread over processes. See sweep_wire.hpp.
#include "host/batch/sweep_wire.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

[[noreturn]] void malformed(const char* what, const std::string& why) {
    throw tandem::SimError(fmt::format("sweep over MPI: malformed {} message: {}", what, why));
}

std::size_t parse_index(const std::string& token, const char* what) {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size()) malformed(what, fmt::format("'{}' is not an index", token));
    return v;
}

// The identity as the wire carries it: every parameter of the run under its results JSON key
// (the same values the results JSON gives them), and the op's facts.
nlohmann::json identity_to_wire(const RunIdentity& id) {
    nlohmann::json run = nlohmann::json::object();
    for (const ParamDesc& p : param_schema()) {
        if (p.scope == ParamScope::Run && !p.json_key.empty()) run[p.json_key] = param_json(id.run, p.id);
    }
    nlohmann::json j = {{"run", run},
                        {"knobs", id.run.knobs},
                        {"title", id.title},
                        {"comm_kind", id.comm_kind},
                        {"comm_payload_bytes", id.comm_payload_bytes}};
    if (id.seed_format) {
        j["seed_format"] = {id.seed_format->run_label, id.seed_format->bandwidth_label, id.seed_format->input_files};
    }
    return j;
}

RunIdentity identity_from_wire(const nlohmann::json& j) {
    RunIdentity id;
    for (const ParamDesc& p : param_schema()) {
        if (p.scope == ParamScope::Run && !p.json_key.empty()) set_param_from_json(id.run, p.id, j.at("run").at(p.json_key));
    }
    j.at("knobs").get_to(id.run.knobs);
    j.at("title").get_to(id.title);
    j.at("comm_kind").get_to(id.comm_kind);
    j.at("comm_payload_bytes").get_to(id.comm_payload_bytes);
    if (j.contains("seed_format")) {
        const nlohmann::json& f = j.at("seed_format");
        id.seed_format = kernels::SeedFormat{f.at(0).get<std::string>(), f.at(1).get<std::string>(), f.at(2).get<bool>()};
    }
    return id;
}

const char* status_name(SweepStatus s) {
    switch (s) {
        case SweepStatus::Pending: return "pending";
        case SweepStatus::Ok: return "ok";
        case SweepStatus::Failed: return "failed";
    }
    return "pending";
}

SweepStatus status_from_name(const std::string& s) {
    if (s == "ok") return SweepStatus::Ok;
    if (s == "failed") return SweepStatus::Failed;
    if (s == "pending") return SweepStatus::Pending;
    malformed("result", fmt::format("unknown status '{}'", s));
}

Verification verification_from_name(const std::string& s) {
    for (const Verification v : {Verification::Passed, Verification::Failed, Verification::Skipped}) {
        if (s == verification_name(v)) return v;
    }
    malformed("result", fmt::format("unknown verification '{}'", s));
}

}  // namespace

std::string encode_request(int free_slots) { return std::to_string(free_slots); }

int decode_request(const std::string& bytes) {
    int v = 0;
    const auto [end, ec] = std::from_chars(bytes.data(), bytes.data() + bytes.size(), v);
    if (ec != std::errc() || end != bytes.data() + bytes.size() || v < 1) {
        malformed("request", fmt::format("'{}' is not a positive count", bytes));
    }
    return v;
}

std::string encode_assign(const std::vector<std::size_t>& indices) { return fmt::format("{}", fmt::join(indices, " ")); }

std::vector<std::size_t> decode_assign(const std::string& bytes) {
    std::vector<std::size_t> out;
    std::istringstream in(bytes);
    std::string token;
    while (in >> token) out.push_back(parse_index(token, "assignment"));
    return out;
}

std::string encode_sweep_result(std::size_t index, const SweepEntry& e) {
    nlohmann::json j = {{"index", index}, {"status", status_name(e.status)}, {"error", e.error},
                        {"has_results", e.has_results}};
    if (e.has_results) {
        j["id"] = identity_to_wire(e.results.id);
        j["times"] = {e.results.times.compute_only_us, e.results.times.seq_comm_us, e.results.times.seq_compute_us,
                      e.results.times.pipelined_us};
        j["verification"] = verification_name(e.results.verification);
        j["extras"] = e.results.extras;
    }
    const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(j);
    return std::string(bytes.begin(), bytes.end());
}

DecodedResult decode_sweep_result(const std::string& bytes) {
    DecodedResult d;
    try {
        const nlohmann::json j = nlohmann::json::from_cbor(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
        d.index = j.at("index").get<std::size_t>();
        d.entry.status = status_from_name(j.at("status").get<std::string>());
        d.entry.error = j.at("error").get<std::string>();
        d.entry.has_results = j.at("has_results").get<bool>();
        if (d.entry.has_results) {
            RunResults& r = d.entry.results;
            try {
                r.id = identity_from_wire(j.at("id"));
            } catch (const tandem::SimError& e) {  // a parameter's value that does not parse
                malformed("result", e.what());
            }
            const nlohmann::json& t = j.at("times");
            r.times = ViewTimes{t.at(0).get<double>(), t.at(1).get<double>(), t.at(2).get<double>(), t.at(3).get<double>()};
            r.verification = verification_from_name(j.at("verification").get<std::string>());
            r.extras = j.at("extras");
        }
    } catch (const nlohmann::json::exception& e) {
        malformed("result", e.what());
    }
    return d;
}

std::string encode_sweep_start(const SweepStart& s) {
    if (!s.ok) return "E";
    return fmt::format("T{}\n{}", fmt::join(s.lines, ","), s.text);
}

SweepStart decode_sweep_start(const std::string& bytes) {
    SweepStart s;
    if (bytes == "E") return s;
    if (bytes.empty() || bytes.front() != 'T') malformed("start", "it does not begin with T or E");
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string::npos) malformed("start", "no line list");
    s.ok = true;
    std::istringstream in(bytes.substr(1, newline - 1));
    std::string token;
    while (std::getline(in, token, ',')) {
        const std::size_t v = parse_index(token, "start");
        if (v > static_cast<std::size_t>(std::numeric_limits<int>::max())) malformed("start", "line out of range");
        s.lines.push_back(static_cast<int>(v));
    }
    s.text = bytes.substr(newline + 1);
    return s;
}

std::vector<int> job_lines(const SweepPlan& plan) {
    std::vector<int> lines;
    for (const SweepJob& j : plan.jobs) lines.push_back(j.line);
    return lines;
}

}  // namespace tandem::host
