#pragma once
// The messages of a sweep spread over processes (host/batch/sweep_peers.hpp), as bytes. A result is
// sent exactly (CBOR: doubles as their bits), so rank 0 writes the same files as a
// single-process sweep would.
//
//   worker -> 0   kTagRequest  "<free slots>"              rows this worker can start now
//   0 -> worker   kTagAssign   "<index> <index> ..."        plan.jobs indices to run; empty: no more
//   worker -> 0   kTagResult   encode_sweep_result(...)     one finished row
//
// Before any of these, rank 0 broadcasts encode_sweep_start(): the file's text and the lines of
// the rows it will run, so every process plans the same rows (checked: same_rows()).
#include <cstddef>
#include <string>
#include <vector>

#include "host/batch/sweep_entry.hpp"
#include "host/batch/sweep_plan.hpp"

namespace tandem::host {

inline constexpr int kTagRequest = 1;
inline constexpr int kTagAssign = 2;
inline constexpr int kTagResult = 3;

std::string encode_request(int free_slots);
int decode_request(const std::string& bytes);  // throws tandem::SimError if malformed

std::string encode_assign(const std::vector<std::size_t>& indices);
std::vector<std::size_t> decode_assign(const std::string& bytes);  // throws tandem::SimError if malformed

// A finished row: its index in plan.jobs and the entry's outcome (status, results, error; not
// the job, which every process has from its own plan).
std::string encode_sweep_result(std::size_t index, const SweepEntry& e);
struct DecodedResult {
    std::size_t index = 0;
    SweepEntry entry;  // entry.job is empty: the receiver keeps its own
};
DecodedResult decode_sweep_result(const std::string& bytes);  // throws tandem::SimError if malformed

// What rank 0 broadcasts before the rows are handed out: `ok` false when it could not plan the
// file (it reports why; the others just end).
struct SweepStart {
    bool ok = false;
    std::string text;          // the sweep file's bytes
    std::vector<int> lines;    // the lines of the rows rank 0 runs (plan.jobs), in order
};
std::string encode_sweep_start(const SweepStart& s);
SweepStart decode_sweep_start(const std::string& bytes);  // throws tandem::SimError if malformed

// The lines of a plan's jobs.
std::vector<int> job_lines(const SweepPlan& plan);

}  // namespace tandem::host
