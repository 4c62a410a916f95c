// The parameter schema (host/params/param_schema.hpp) against every surface that names a
// parameter, both ways: the command line's flags, the sweep file's columns, the results JSON's
// keys and the MPI wire, the C++ API's fields, the Python keywords (their Python side:
// tests/python/module/test_parameters.py), the ops' own names for what they refuse; one meaning per
// name; a refusal said in each caller's words.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "api/config_fields.hpp"
#include "host/batch/sweep_plan.hpp"
#include "host/batch/sweep_rows.hpp"
#include "host/batch/sweep_wire.hpp"
#include "host/cli/options.hpp"
#include "host/ops/op_facade.hpp"
#include "host/params/nearest_word.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "host/params/param_words.hpp"
#include "host/run/results.hpp"
#include "kernels/param_error.hpp"
#include "kernels/registry.hpp"
#include "tandem/tandem.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace param_schema_test {

bool is_knob(const std::string& name) {
    const std::vector<kernels::KnobDesc> knobs = kernels::all_knobs();
    return std::any_of(knobs.begin(), knobs.end(), [&](const kernels::KnobDesc& k) { return k.name == name; });
}

bool is_knob_flag(const std::string& flag) {
    for (const kernels::KnobDesc& k : kernels::all_knobs()) {
        if (knob_flag(k.name) == flag) return true;
        if (std::find(k.aliases.begin(), k.aliases.end(), flag) != k.aliases.end()) return true;
    }
    return false;
}

template <typename T>
bool contains(const std::vector<T>& v, const T& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

const Profile& b1() {
    static const Profile p = test::b1_profile();
    return p;
}

// A run of an op that is not the seed's, with a value other than the default for every
// parameter that has a choice: what the round trips carry.
RunRequest unusual_request() {
    RunRequest r;
    r.op = "matmul_all_reduce";
    r.variant = "one_shot";
    r.schedule = "stream_k";
    r.dtype = DType::BF16;
    r.out_dtype = DType::F16;
    r.bias = kernels::BiasKind::M;
    r.ranks = 4;
    r.m = 512;
    r.k = 256;
    r.n = 512;
    r.base_m = 64;
    r.base_n = 128;
    r.compute_blocks = 8;
    r.comm_blocks = 12;
    r.timing_only = true;
    return r;
}

TEST(ParamSchema, NamesAreUniqueAndOneNameHasOneMeaning) {
    std::set<std::string> names, flags, columns, keys, keywords;
    for (const ParamDesc& p : param_schema()) {
        EXPECT_TRUE(names.insert(p.name).second) << p.name;
        EXPECT_EQ(&param_desc(p.id), &p) << p.name;
        for (const std::string& f : cli_names(p)) EXPECT_TRUE(flags.insert(f).second) << f << " names two parameters";
        if (!p.sweep_column.empty()) { EXPECT_TRUE(columns.insert(p.sweep_column).second) << p.sweep_column; }
        if (!p.json_key.empty()) { EXPECT_TRUE(keys.insert(p.json_key).second) << p.json_key; }
        if (!p.python_keyword.empty()) { EXPECT_TRUE(keywords.insert(p.python_keyword).second) << p.python_keyword; }
        for (const std::string& a : p.python_aliases) EXPECT_TRUE(keywords.insert(a).second) << a << " names two parameters";
        EXPECT_FALSE(p.word.empty()) << p.name;
        EXPECT_FALSE(p.help.empty()) << p.name;
        if (p.type == ParamType::Int && p.range) { EXPECT_LE(p.range->lo, p.range->hi) << p.name; }
        if (p.type == ParamType::Choice) { EXPECT_FALSE(p.choices.empty()) << p.name; }
        // A Python keyword read off the tensors is only a word in messages: no alias means more.
        if (p.python_place == PythonPlace::Tensors) { EXPECT_TRUE(p.python_aliases.empty()) << p.name; }
    }
    // An op's knob is a name of its own on every surface: none is also a parameter's.
    for (const kernels::KnobDesc& k : kernels::all_knobs()) {
        EXPECT_FALSE(names.count(k.name)) << k.name;
        EXPECT_FALSE(columns.count(k.name)) << k.name;
        EXPECT_FALSE(keys.count(k.name)) << k.name;
        EXPECT_FALSE(keywords.count(k.name)) << k.name;
        EXPECT_FALSE(flags.count(knob_flag(k.name))) << k.name;
        for (const std::string& a : k.aliases) EXPECT_FALSE(flags.count(a)) << a << " is a knob's and a parameter's";
    }
}

// Iris's gemm_sms is the GEMM kernel's blocks everywhere: --compute-blocks, config's
// compute_blocks, OpConfig::compute_blocks (and comm_sms the comm kernel's).
TEST(ParamSchema, GemmSmsMeansTheComputeBlocksEverywhere) {
    const char* argv[] = {"tandem", "--gemm_sms", "20", "--comm_sms", "6"};
    const CommandLine cl = parse_command_line(5, argv);
    EXPECT_EQ(cl.run.compute_blocks, 20);
    EXPECT_EQ(cl.run.comm_blocks, 6);
    EXPECT_TRUE(cl.run.knobs.empty());
    api::OpConfig c;
    api::set_config(c, "gemm_sms", 20);
    api::set_config(c, "comm_sms", 6);
    EXPECT_EQ(c.compute_blocks, 20);
    EXPECT_EQ(c.comm_blocks, 6);
    EXPECT_TRUE(c.knobs.empty());
    EXPECT_EQ(param_of_cli_flag("--gemm_sms")->id, Param::ComputeBlocks);
    EXPECT_EQ(param_of_python_keyword("gemm_sms")->id, Param::ComputeBlocks);
}

// A config key that names no parameter and no op's knob is refused as such, with the nearest
// known key, whatever its value (not read as a knob's integer).
TEST(ParamSchema, AnUnknownConfigKeyNamesTheNearestKnownOne) {
    api::OpConfig c;
    try {
        api::set_config(c, "varient", std::string("two_shot"));
        ADD_FAILURE() << "config['varient'] accepted";
    } catch (const api::Error& e) {
        EXPECT_NE(std::string(e.what()).find("config['varient']: not a config key or a knob of any op; the nearest "
                                             "known key: 'variant'"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(api::set_config(c, "chunk_tile", 4), api::Error);  // chunk_tiles, a knob
    EXPECT_THROW(api::set_config(c, "zzzz", 4), api::Error);
    api::set_config(c, "chunk_tiles", 4);  // a knob of an op
    EXPECT_EQ(c.knobs.at("chunk_tiles"), 4);
    EXPECT_EQ(nearest_word("varient", {"variant", "schedule"}), "variant");
    EXPECT_EQ(nearest_word("zzzz", {"variant", "schedule"}), "");
    EXPECT_EQ(nearest_word("bsae_m", {"base_m", "base_n"}), "base_m");  // two letters swapped: one edit
}

TEST(ParamSchema, EveryCommandLineFlagIsAParameterOrAKnobAndBack) {
    const std::vector<std::string> flags = command_line_flags();
    for (const std::string& f : flags) {
        EXPECT_TRUE(param_of_cli_flag(f) != nullptr || is_knob_flag(f)) << f << " is not in the schema";
    }
    for (const ParamDesc& p : param_schema()) {
        for (const std::string& f : cli_names(p)) EXPECT_TRUE(contains(flags, f)) << f << " (" << p.name << ") not offered";
    }
    for (const kernels::KnobDesc& k : kernels::all_knobs()) EXPECT_TRUE(contains(flags, knob_flag(k.name))) << k.name;
    // --help shows each parameter's help and default (CLI11 writes "TYPE=default").
    const std::string help = usage_text();
    for (const ParamDesc& p : param_schema()) {
        if (p.cli_flag.empty()) continue;
        EXPECT_NE(help.find(p.cli_flag), std::string::npos) << p.cli_flag;
        EXPECT_NE(help.find(p.help.substr(0, 40)), std::string::npos) << p.cli_flag << ": its help is not shown";
        if (!p.default_text.empty() && p.type != ParamType::Flag) {
            EXPECT_NE(help.find(p.cli_type_name + "=" + p.default_text), std::string::npos) << p.cli_flag;
        }
    }
}

// --list-ops names flags only as the schema and the ops' knobs spell them, and every knob of
// every variant.
TEST(ParamSchema, ListOpsNamesOnlyTheSchemasFlagsAndEveryKnob) {
    const std::string text = list_ops_text();
    const std::regex flag(R"((^|[\s(])(--?[A-Za-z][A-Za-z0-9_-]*))");
    int named = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
        const std::string f = (*it)[2];
        EXPECT_TRUE(param_of_cli_flag(f) != nullptr || is_knob_flag(f)) << f << " in --list-ops is not in the schema";
        ++named;
    }
    EXPECT_GT(named, 0);
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        for (const kernels::VariantDesc& v : op->variants) {
            EXPECT_NE(text.find("--variant " + v.name), std::string::npos) << op->name << " " << v.name;
            for (const kernels::KnobDesc& k : v.knobs) EXPECT_NE(text.find(knob_flag(k.name)), std::string::npos) << k.name;
        }
    }
}

TEST(ParamSchema, RunRequestsDefaultsAreTheSchemas) {
    const RunRequest defaults;
    for (const ParamDesc& p : param_schema()) {
        if (p.scope != ParamScope::Run) continue;
        const std::optional<std::string> text = param_text(defaults, p.id);
        if (p.default_text.empty()) {
            // Resolved per run (the op's, the variant's or the profile's): unset until then.
            EXPECT_FALSE(text.has_value()) << p.name << " = " << text.value_or("");
        } else {
            EXPECT_EQ(text, p.default_text) << p.name;
        }
    }
    // The command line's own defaults.
    const char* argv[] = {"tandem"};
    const CommandLine cl = parse_command_line(1, argv);
    EXPECT_EQ(cl.outputs.out_dir, param_desc(Param::OutDir).default_text);
    // The API's: ContextOptions' initializers are the schema's (functional = not timing_only).
    const api::ContextOptions o;
    EXPECT_EQ(std::to_string(o.ranks), param_desc(Param::Ranks).default_text);
    EXPECT_EQ(o.soc, param_desc(Param::Soc).default_text);
    EXPECT_EQ(o.functional ? "false" : "true", param_desc(Param::TimingOnly).default_text);
}

// Text in, the same text out, for every run parameter: what the command line, a sweep cell and
// the wire rely on.
TEST(ParamSchema, EveryRunParameterReadsBackWhatItWrites) {
    const RunRequest r = with_defaults(unusual_request(), b1());
    for (const ParamDesc& p : param_schema()) {
        if (p.scope != ParamScope::Run) continue;
        const std::optional<std::string> text = param_text(r, p.id);
        if (!text) continue;
        RunRequest back;
        set_param(back, p.id, *text);
        EXPECT_EQ(param_text(back, p.id), text) << p.name;
    }
}

// A parameter is declared once: its schema row names its RunRequest member (and its OpParams
// member, when the op sees it), and set_param, param_text and op_params_of reach the member from
// the row (docs/PARAMETERS.md "Adding a parameter"). Each Run parameter's text set through its
// row lands in its member alone, and the op receives the resolved value.
TEST(ParamSchema, EachRunParameterIsReachedFromItsRow) {
    for (const ParamDesc& p : param_schema()) {
        const bool has_member = !std::holds_alternative<std::monostate>(p.run_member);
        EXPECT_EQ(has_member, p.scope == ParamScope::Run) << p.name;
        if (std::holds_alternative<std::monostate>(p.op_member)) continue;
        EXPECT_TRUE(has_member) << p.name << ": an OpParams member without a RunRequest one";
    }
    const ResolvedRun run = resolve_run(unusual_request(), b1());
    for (const ParamDesc& p : param_schema()) {
        if (p.scope != ParamScope::Run) continue;
        const std::optional<std::string> text = param_text(run.request, p.id);
        // Written into a default request, it changes that parameter and no other.
        if (text) {
            RunRequest r;
            set_param(r, p.id, *text);
            for (const ParamDesc& other : param_schema()) {
                if (other.scope != ParamScope::Run || other.id == p.id) continue;
                EXPECT_EQ(param_text(r, other.id), param_text(RunRequest{}, other.id)) << p.name << " set " << other.name;
            }
        }
        // What the op receives is the resolved request's value.
        const std::optional<std::string> received = std::visit(
            [&](auto m) -> std::optional<std::string> {
                if constexpr (std::is_same_v<decltype(m), std::monostate>) {
                    return text;
                } else {
                    const auto& v = run.params.*m;
                    using V = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<V, std::string>) return v;
                    else if constexpr (std::is_same_v<V, int>) return std::to_string(v);
                    else if constexpr (std::is_same_v<V, DType>) return std::string(dtype_name(v));
                    else return std::string(kernels::bias_name(v));
                }
            },
            p.op_member);
        EXPECT_EQ(received.value_or(""), text.value_or("")) << p.name;  // an empty name: unset
    }
}

TEST(ParamSchema, EverySweepColumnIsAParameterOrAKnobAndBack) {
    for (const std::string& c : sweep_columns()) {
        EXPECT_TRUE(param_of_sweep_column(c) != nullptr || is_knob(c)) << c << " is not in the schema";
    }
    for (const ParamDesc& p : param_schema()) {
        if (!p.sweep_column.empty()) { EXPECT_TRUE(contains(sweep_columns(), p.sweep_column)) << p.name; }
    }
    // A row giving every column: each lands in its parameter.
    const RunRequest want = with_defaults(unusual_request(), b1());
    std::string header, row;
    for (const ParamDesc& p : param_schema()) {
        if (p.sweep_column.empty()) continue;
        header += (header.empty() ? "" : ",") + p.sweep_column;
        row += (row.empty() ? "" : ",") + param_text(want, p.id).value_or("");
    }
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep_text(header + "\n" + row + "\n", "rows.csv", RunRequest{}, profiles);
    ASSERT_TRUE(plan.bad.empty()) << plan.bad.front().message;
    ASSERT_EQ(plan.jobs.size(), 1u);
    for (const ParamDesc& p : param_schema()) {
        if (!p.sweep_column.empty()) {
            EXPECT_EQ(param_text(plan.jobs[0].run.request, p.id), param_text(want, p.id)) << p.name;
        }
    }
}

// A row takes every parameter the command line gives that the row does not (sanitize included).
TEST(ParamSchema, SweepRowsInheritEveryCommandLineParameter) {
    const char* argv[] = {"tandem", "--sweep", "rows.csv", "--sanitize", "--base-n", "128", "--dtype", "fp16"};
    const CommandLine cl = parse_command_line(8, argv);
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep_text("ranks,m,k,n\n2,1024,512,512\n", "rows.csv", cl.run, profiles);
    ASSERT_EQ(plan.jobs.size(), 1u) << (plan.bad.empty() ? "" : plan.bad.front().message);
    EXPECT_TRUE(plan.jobs[0].run.request.sanitize);
    EXPECT_EQ(plan.jobs[0].run.request.base_n, 128);
}

TEST(ParamSchema, EveryResultsJsonKeyIsAParameterOrAFigureAndBack) {
    const ResolvedRun run = resolve_run(unusual_request(), b1());
    RunResults r{make_identity(run), ViewTimes{1, 2, 3, 4}, Verification::Skipped, nlohmann::json::object()};
    for (const auto& [name, value] : run.effective_knobs()) r.extras[name] = value;
    const nlohmann::json j = to_json(r);
    std::set<std::string> expected(result_figure_keys().begin(), result_figure_keys().end());
    for (const ParamDesc& p : param_schema()) {
        if (p.scope == ParamScope::Run && !p.json_key.empty()) expected.insert(p.json_key);
    }
    for (const auto& [name, value] : run.effective_knobs()) expected.insert(name);
    std::set<std::string> got;
    for (const auto& [key, value] : j.items()) got.insert(key);
    EXPECT_EQ(got, expected);
    for (const std::string& key : contract_keys()) EXPECT_TRUE(got.count(key)) << key;
    // The values are the parameters' (the schema's JSON form).
    for (const ParamDesc& p : param_schema()) {
        if (p.scope == ParamScope::Run && !p.json_key.empty()) {
            EXPECT_EQ(j.at(p.json_key), param_json(run.request, p.id)) << p.name;
        }
    }
}

TEST(ParamSchema, TheWireCarriesEveryParameter) {
    SweepEntry e;
    e.status = SweepStatus::Ok;
    e.has_results = true;
    e.results.id = make_identity(resolve_run(unusual_request(), b1()));
    const DecodedResult d = decode_sweep_result(encode_sweep_result(0, e));
    EXPECT_EQ(to_json(d.entry.results), to_json(e.results));
    EXPECT_EQ(format_summary(d.entry.results), format_summary(e.results));
    for (const ParamDesc& p : param_schema()) {
        if (p.scope == ParamScope::Run && !p.json_key.empty()) {
            EXPECT_EQ(param_text(d.entry.results.id.run, p.id), param_text(e.results.id.run, p.id)) << p.name;
        }
    }
}

TEST(ParamSchema, EveryApiFieldIsAParameterAndBack) {
    std::set<std::string> fields;
    for (const api::detail::ConfigField& f : api::detail::config_fields()) {
        const ParamDesc& p = param_desc(f.param);
        EXPECT_EQ(p.api_field, std::string("OpConfig::") + f.member) << p.name;
        EXPECT_TRUE(fields.insert(f.member).second) << f.member;
    }
    for (const ParamDesc& p : param_schema()) {
        if (p.api_field.rfind("OpConfig::", 0) == 0) {
            EXPECT_TRUE(fields.count(p.api_field.substr(10))) << p.api_field;
        }
    }
}

// OpConfig's and ContextOptions' fields are the schema's API fields and no others (beside
// OpConfig::knobs, the variant's knobs, and ContextOptions::words, how errors are spelled). The
// bindings name every field: one added to either struct stops this from compiling until it is
// named here, and the test fails until the schema has it.
TEST(ParamSchema, TheApiStructsHaveTheSchemasFieldsAndNoOthers) {
    api::OpConfig c;
    [[maybe_unused]] auto& [variant, schedule, base_m, base_n, compute_blocks, comm_blocks, comm_mode, knobs, all_views,
                            fault, sanitize, warmup_runs, trace, trace_ranks, trace_window_us] = c;
    api::ContextOptions o;
    [[maybe_unused]] auto& [soc, profile_file, ranks, functional, host_threads, words] = o;
    const std::set<std::string> fields = {
        "OpConfig::variant",        "OpConfig::schedule",    "OpConfig::base_m",    "OpConfig::base_n",
        "OpConfig::compute_blocks", "OpConfig::comm_blocks", "OpConfig::comm_mode", "OpConfig::all_views",
        "OpConfig::fault",          "OpConfig::sanitize",    "OpConfig::warmup_runs", "OpConfig::trace",
        "OpConfig::trace_ranks",
        "OpConfig::trace_window_us", "ContextOptions::soc", "ContextOptions::profile_file",
        "ContextOptions::ranks",    "ContextOptions::functional", "ContextOptions::host_threads"};
    std::set<std::string> in_schema;
    for (const ParamDesc& p : param_schema()) {
        if (p.api_field.rfind("OpConfig::", 0) == 0 || p.api_field.rfind("ContextOptions::", 0) == 0) {
            in_schema.insert(p.api_field);
        }
    }
    EXPECT_EQ(in_schema, fields);
}

// Every keyword the Python module takes in config (and each alias) sets its OpConfig field;
// parameters() lists what the module offers, by the schema.
TEST(ParamSchema, EveryPythonConfigKeywordSetsItsField) {
    int keywords = 0;
    for (const api::ParameterInfo& info : api::parameters()) {
        const ParamDesc* p = find_param(info.name);
        ASSERT_NE(p, nullptr) << info.name;
        EXPECT_EQ(info.python_keyword, p->python_keyword);
        if (info.python_place != "config") continue;
        std::vector<std::string> names = {info.python_keyword};
        names.insert(names.end(), info.python_aliases.begin(), info.python_aliases.end());
        for (const std::string& key : names) {
            api::OpConfig c;
            const std::string type = api::config_key_type(key);
            if (type == "int") api::set_config(c, key, 7);
            else if (type == "flag") api::set_config(c, key, true);
            else if (key == "trace_ranks") api::set_config(c, key, std::string("0,3"));  // texts of a form
            else if (key == "trace_window_us") api::set_config(c, key, std::string("0:250"));
            else api::set_config(c, key, std::string("x"));
            const api::detail::ConfigField* f = api::detail::config_field_of(p->id);
            ASSERT_NE(f, nullptr) << key;
            EXPECT_TRUE(f->given(c).has_value()) << key << " set nothing";
            EXPECT_TRUE(c.knobs.empty()) << key << " taken for a knob";
            ++keywords;
        }
    }
    EXPECT_GE(keywords, 18);  // 13 keywords, 5 aliases
    // A parameter given elsewhere is not a config key; any other name is a knob.
    EXPECT_THROW(api::config_key_type("k"), api::Error);
    EXPECT_THROW(api::config_key_type("num_ranks"), api::Error);
    EXPECT_EQ(api::config_key_type("chunk_tiles"), "int");
    EXPECT_THROW(api::set_config(*std::make_unique<api::OpConfig>(), "base_m", std::string("big")), api::Error);
}

TEST(ParamSchema, TheOpsNameTheirParametersAsTheSchemaDoes) {
    for (const kernels::ParamRef& r : kernels::common_param_refs()) {
        const ParamDesc* p = find_param(r.name);
        ASSERT_NE(p, nullptr) << r.name;
        EXPECT_EQ(p->word, r.word) << r.name;
    }
}

// One refusal, three callers' words.
TEST(ParamSchema, ARefusalInEachCallersWords) {
    const kernels::ParamError e({{kernels::kParamK, 1000}},
                                "K must be a multiple of base-n = 256; add " + kernels::mention(kernels::kParamTimingOnly),
                                {{kernels::kParamK, 1024}});
    EXPECT_STREQ(e.what(), "K = 1000: K must be a multiple of base-n = 256; add timing-only; nearest valid: 1024");
    EXPECT_EQ(message_in(e, Dialect::Cli), "--gk 1000: K must be a multiple of base-n = 256; add --timing-only; nearest valid: 1024");
    EXPECT_EQ(message_in(e, Dialect::Python), "k=1000: K must be a multiple of base-n = 256; add functional=False; nearest valid: 1024");
    EXPECT_EQ(message_in(e, Dialect::Cpp), "K = 1000: K must be a multiple of base-n = 256; add functional = false; nearest valid: 1024");
    const kernels::ParamError tile({{kernels::kParamBaseM, 256}, {kernels::kParamBaseN, 256}}, "the tile does not fit",
                                   {{kernels::kParamBaseM, 128}});
    EXPECT_EQ(message_in(tile, Dialect::Cli), "--base-m 256 --base-n 256: the tile does not fit; nearest valid: --base-m 128");
    EXPECT_EQ(message_in(tile, Dialect::Python), "base_m=256, base_n=256: the tile does not fit; nearest valid: base_m=128");
    EXPECT_EQ(message_in(tile, Dialect::Cpp), "base_m = 256, base_n = 256: the tile does not fit; nearest valid: base_m = 128");
    const kernels::ParamError ranks({{kernels::kParamRanks, 1}}, "not a collective");
    EXPECT_EQ(message_in(ranks, Dialect::Cli), "-n 1: not a collective");
    EXPECT_EQ(message_in(ranks, Dialect::Python), "num_ranks=1: not a collective");
    const kernels::ParamError knob({kernels::ParamValue::knob("chunk_tiles", 0)}, "a chunk holds 1..8 tiles here");
    EXPECT_EQ(message_in(knob, Dialect::Cli), "--chunk-tiles 0: a chunk holds 1..8 tiles here");
    EXPECT_EQ(message_in(knob, Dialect::Python), "chunk_tiles=0: a chunk holds 1..8 tiles here");
    EXPECT_STREQ(knob.what(), "chunk-tiles = 0: a chunk holds 1..8 tiles here");
}

// A real refusal from an op's validate, through the facade, in each caller's words.
TEST(ParamSchema, AnOpsRefusalReachesEachCallerInItsWords) {
    RunRequest r;
    r.k = 1000;
    try {
        (void)resolve_run(r, b1());
        FAIL() << "K = 1000 accepted";
    } catch (const kernels::ParamError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("K = 1000: K must be a multiple of base-n = 256", 0), 0u) << e.what();
        EXPECT_EQ(message_in(e, Dialect::Cli).rfind("--gk 1000: ", 0), 0u);
        EXPECT_EQ(message_in(e, Dialect::Python).rfind("k=1000: ", 0), 0u);
        EXPECT_EQ(message_in(e, Dialect::Cpp).rfind("K = 1000: ", 0), 0u);
    }
}

}  // namespace param_schema_test
}  // namespace tandem::host
