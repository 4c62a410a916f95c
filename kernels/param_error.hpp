#pragma once
// A refused parameter value, named by the quantity it is (M, K, base-n, a knob), not by any
// caller's spelling of it. The ops (VariantDesc::validate) and the host's own run checks throw
// it; each caller says it in its own words from the parameter's name (host/params/
// param_words.hpp): the command line `--gk 1000: ...`, the Python module `k=1000: ...`.
// what() is the neutral form, for a caller that adds no words of its own:
//   K = 1000: K must be a multiple of base-n = 256 (A is sent in base-m x base-n tiles); nearest valid: 1024
#include <string>
#include <vector>

#include "sim/sim_error.hpp"

namespace tandem::kernels {

// A parameter as a message names it: its name in the host's parameter schema ("k", "base_n") or
// a knob's name ("chunk_tiles"), and the word a neutral message uses for it ("K", "base-n").
struct ParamRef {
    const char* name;
    const char* word;
};

// The common parameters the ops' checks name (host/params/param_schema.cpp holds the rest of
// what is known about each; a test holds the two together).
inline constexpr ParamRef kParamRanks{"ranks", "ranks"};
inline constexpr ParamRef kParamM{"m", "M"};
inline constexpr ParamRef kParamK{"k", "K"};
inline constexpr ParamRef kParamN{"n", "N"};
inline constexpr ParamRef kParamBaseM{"base_m", "base-m"};
inline constexpr ParamRef kParamBaseN{"base_n", "base-n"};
inline constexpr ParamRef kParamComputeBlocks{"compute_blocks", "compute blocks"};
inline constexpr ParamRef kParamCommBlocks{"comm_blocks", "comm blocks"};
inline constexpr ParamRef kParamVariant{"variant", "variant"};
inline constexpr ParamRef kParamSchedule{"schedule", "schedule"};
inline constexpr ParamRef kParamDtype{"dtype", "dtype"};
inline constexpr ParamRef kParamOutDtype{"out_dtype", "output dtype"};
inline constexpr ParamRef kParamBias{"bias", "bias"};
inline constexpr ParamRef kParamCommMode{"comm_mode", "comm mode"};
inline constexpr ParamRef kParamFault{"fault", "fault"};
inline constexpr ParamRef kParamTimingOnly{"timing_only", "timing-only"};
inline constexpr ParamRef kParamOp{"op", "op"};
inline constexpr ParamRef kParamSoc{"soc", "SoC"};
inline constexpr ParamRef kParamHostThreads{"host_threads", "host threads"};

// Every ParamRef above, in that order.
const std::vector<ParamRef>& common_param_refs();

// One parameter and the value a message gives it.
struct ParamValue {
    std::string name;  // ParamRef::name, or a knob's name
    std::string word;  // ParamRef::word, or the knob's name with '-' for '_' ("chunk-tiles")
    std::string value;

    ParamValue(const ParamRef& p, std::string v);
    ParamValue(const ParamRef& p, long long v);
    // A knob of the variant (KnobDesc::name).
    static ParamValue knob(const std::string& name, long long v);
};

class ParamError : public SimError {
public:
    // `subject`: the values refused (the message's first words); `detail`: why, in neutral words;
    // `nearest`: a nearby valid setting (empty: none to give).
    ParamError(std::vector<ParamValue> subject, std::string detail, std::vector<ParamValue> nearest = {});

    const std::vector<ParamValue>& subject() const { return subject_; }
    const std::string& detail() const { return detail_; }
    const std::vector<ParamValue>& nearest() const { return nearest_; }

private:
    std::vector<ParamValue> subject_;
    std::string detail_;
    std::vector<ParamValue> nearest_;
};

// A detail that tells the user to set another parameter mentions it so ("add " +
// mention(kParamTimingOnly)) and each dialect writes it its way: "add --timing-only".
std::string mention(const ParamRef& p);
std::string mention_knob(const std::string& name);

// How a dialect writes parameters: one parameter and its value ("--gk 1000", "k=1000"), the
// separator between several, and a mention in a detail ("--timing-only", "functional=False").
// ParamError::what() uses the neutral one ("K = 1000", ", ", "timing-only").
struct ParamSpelling {
    std::string (*one)(const ParamValue& p);
    const char* separator;
    std::string (*mentioned)(const std::string& name);
};

// "<subject>: <detail>; nearest valid: <nearest>". A suggestion for exactly the refused
// parameter gives its value alone ("nearest valid: 1024"); any other names its parameters.
std::string format_param_error(const ParamError& e, const ParamSpelling& spelling);

// The neutral spelling ("K = 1000").
const ParamSpelling& neutral_spelling();

}  // namespace tandem::kernels
