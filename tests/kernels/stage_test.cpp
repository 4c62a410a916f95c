// Stages (BlockCtx::set_stage): a label on a block's instructions that the kernel statistics,
// the event log, the results and the trace group by (docs/RESULTS.md "Stages"), and that changes
// no time; moe_ffn names its seven and reports the stage that bounds the layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "host/run/program.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace stage_test {

const Profile& stage_test_profile() {
    static const Profile p = test::b1_profile();
    return p;
}

// Two AIV blocks: three vector adds, then two exps, in stages 0 and 2 when `labelled`.
KernelFn adds_then_exps(bool labelled) {
    return [labelled](BlockCtx& b) -> Task {
        Tile& t = b.alloc_tile(MemKind::UB, 64, 128, DType::F32, "t");
        if (labelled) b.set_stage(0);
        for (int i = 0; i < 3; ++i) TADDS(t, t, 1.0F);
        if (labelled) b.set_stage(2);
        for (int i = 0; i < 2; ++i) TEXP(t, t);
        co_return;
    };
}

TEST(Stages, GroupEachStagesDataPipeWorkAndChangeNoTime) {
    Runtime plain_rt(stage_test_profile(), ClusterOptions{1, DataMode::TimingOnly, true});
    const test::SingleRun plain = test::run_one_kernel(plain_rt, KernelType::AIV, 2, adds_then_exps(false));
    Runtime rt(stage_test_profile(), ClusterOptions{1, DataMode::TimingOnly, true});
    const test::SingleRun staged = test::run_one_kernel(rt, KernelType::AIV, 2, adds_then_exps(true));

    EXPECT_TRUE(plain.stats.stages.empty());
    EXPECT_EQ(staged.stats.start, plain.stats.start);
    EXPECT_EQ(staged.stats.end, plain.stats.end);
    ASSERT_EQ(staged.stats.stages.size(), 3U);
    const StageBusy& adds = staged.stats.stages[0];
    const StageBusy& unused = staged.stats.stages[1];
    const StageBusy& exps = staged.stats.stages[2];
    EXPECT_EQ(adds.blocks, 2);
    EXPECT_EQ(unused.blocks, 0);
    EXPECT_EQ(exps.blocks, 2);
    const auto v = static_cast<std::size_t>(pipe_index(Pipe::V));
    EXPECT_EQ(adds.busy_ps[v] + exps.busy_ps[v], staged.stats.busy_ps[v]);
    EXPECT_GT(adds.busy_ps[v], 0);
    EXPECT_LT(adds.start, adds.end);
    EXPECT_LE(adds.end, exps.end);

    // Every vector record carries its stage; the event log line names it.
    int adds_seen = 0, exps_seen = 0;
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op == Opcode::TADDS) {
            EXPECT_EQ(r.stage, 0);
            ++adds_seen;
            EXPECT_NE(format_record(r).find(" stage=0"), std::string::npos);
        }
        if (r.op == Opcode::TEXP) {
            EXPECT_EQ(r.stage, 2);
            ++exps_seen;
        }
    }
    EXPECT_EQ(adds_seen, 6);
    EXPECT_EQ(exps_seen, 4);
}

// An item names the piece of a stage's work (moe_ffn: the expert): the records and the event log
// carry it, for a profile per stage and item (prof_analysis/stage_profile.py).
TEST(Stages, RecordsCarryTheItemOfTheirStage) {
    Runtime rt(stage_test_profile(), ClusterOptions{1, DataMode::TimingOnly, true});
    test::run_one_kernel(rt, KernelType::AIV, 1, [](BlockCtx& b) -> Task {
        Tile& t = b.alloc_tile(MemKind::UB, 64, 128, DType::F32, "t");
        b.set_stage(1, 7);
        TADDS(t, t, 1.0F);
        b.set_stage(1);
        TEXP(t, t);
        co_return;
    });
    int seen = 0;
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op == Opcode::TADDS) {
            EXPECT_EQ(r.stage_item, 7);
            EXPECT_NE(format_record(r).find(" stage=1 item=7"), std::string::npos) << format_record(r);
            ++seen;
        }
        if (r.op == Opcode::TEXP) {
            EXPECT_EQ(r.stage_item, -1);
            EXPECT_EQ(format_record(r).find(" item="), std::string::npos) << format_record(r);
            ++seen;
        }
    }
    EXPECT_EQ(seen, 2);
}

TEST(Stages, EachItemsWindowIsItsWorkOverEveryBlock) {
    // Two blocks: item 3's add on block 0 runs at the start, on block 1 after an exp; item 5 is
    // the exp of block 0. Item 3's window spans both blocks' adds; item 4 is never entered.
    Runtime rt(stage_test_profile(), ClusterOptions{1, DataMode::TimingOnly, true});
    const test::SingleRun run = test::run_one_kernel(rt, KernelType::AIV, 2, [](BlockCtx& b) -> Task {
        Tile& t = b.alloc_tile(MemKind::UB, 64, 128, DType::F32, "t");
        if (b.block_idx() == 1) {
            b.set_stage(0);
            TEXP(t, t);
        }
        b.set_stage(0, 3);
        TADDS(t, t, 1.0F);
        if (b.block_idx() == 0) {
            b.set_stage(0, 5);
            TEXP(t, t);
        }
        co_return;
    });
    SimTime add0_start = kNever, add_end = 0, exp5_start = kNever, exp5_end = 0;
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op == Opcode::TADDS) {
            add0_start = std::min(add0_start, r.start);
            add_end = std::max(add_end, r.end);
        }
        if (r.op == Opcode::TEXP && r.stage_item == 5) {
            exp5_start = r.start;
            exp5_end = r.end;
        }
    }
    ASSERT_EQ(run.stats.stages.size(), 1U);
    const auto& items = run.stats.stages[0].items;
    ASSERT_EQ(items.size(), 6U);
    EXPECT_EQ(items[3].first, add0_start);
    EXPECT_EQ(items[3].second, add_end);
    EXPECT_GT(items[3].second, exp5_start) << "block 1's add, after its exp, is in item 3's window";
    EXPECT_EQ(items[4].first, kNever) << "an item no block entered has no window";
    EXPECT_EQ(items[5].first, exp5_start);
    EXPECT_EQ(items[5].second, exp5_end);
    for (int i : {0, 1, 2}) EXPECT_EQ(items[static_cast<std::size_t>(i)].first, kNever);
}

TEST(Stages, AStageOutsideTheRangeIsRefusedNamingTheBlock) {
    Runtime rt(stage_test_profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    try {
        test::run_one_kernel(rt, KernelType::AIV, 1, [](BlockCtx& b) -> Task {
            b.set_stage(BlockCtx::kMaxStages);
            co_return;
        });
        ADD_FAILURE() << "expected set_stage(64) to be refused";
    } catch (const SimError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("set_stage(64): a stage is -1 (none) or 0 to 63"), std::string::npos) << msg;
        EXPECT_NE(msg.find("block 0"), std::string::npos) << msg;
    }
    Runtime rt2(stage_test_profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    try {
        test::run_one_kernel(rt2, KernelType::AIV, 1, [](BlockCtx& b) -> Task {
            b.set_stage(0, BlockCtx::kMaxStageItem + 1);
            co_return;
        });
        ADD_FAILURE() << "expected set_stage(0, 32768) to be refused";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("set_stage(0, 32768): an item is -1 (none) or 0 to 32767"), std::string::npos) << e.what();
    }
}

}  // namespace stage_test

namespace host {
namespace stage_test {

// moe_ffn's results name its seven stages, each with an extent and a busiest pipe, and the
// bounding stage is the one whose busiest pipe was busiest.
TEST(Stages, MoeFfnReportsEachStageAndTheBoundingOne) {
    for (const char* variant : {"expert_major", "per_expert"}) {
        RunRequest r;
        r.op = "moe_ffn";
        r.variant = variant;
        r.ranks = 4;
        r.m = 32;
        r.k = 256;
        r.n = 512;
        r.knobs["topk"] = 4;
        r.knobs["experts_per_rank"] = 4;
        r.compute_blocks = 4;
        r.comm_blocks = 8;
        r.timing_only = true;
        const ProgramOutput out = test::run_op(r);
        const nlohmann::json& extras = out.results.extras;
        ASSERT_TRUE(extras.contains("pipelined_stages")) << variant;
        const nlohmann::json& st = extras.at("pipelined_stages");
        std::set<std::string> names;
        std::string busiest;
        double best = -1;
        for (const nlohmann::json& s : st.at("stages")) {
            names.insert(s.at("stage").get<std::string>());
            EXPECT_GE(s.at("span_us").get<double>(), 0.0) << variant;
            EXPECT_GT(s.at("blocks").get<int>(), 0) << variant;
            const double pct = s.at("busiest_pipe_pct").get<double>();
            EXPECT_GT(pct, 0.0) << variant << " " << s.at("stage");
            EXPECT_LE(pct, 100.0) << variant << " " << s.at("stage");
            if (pct > best) {
                best = pct;
                busiest = s.at("stage").get<std::string>();
            }
        }
        EXPECT_EQ(names, (std::set<std::string>{"front", "dispatch", "gmm1", "swiglu", "gmm2", "combine", "unpermute"}))
            << variant;
        EXPECT_EQ(st.at("bounding_stage").get<std::string>(), busiest) << variant;
        const std::string summary = format_summary(out.results);
        EXPECT_NE(summary.find("Bounding stage:"), std::string::npos) << summary;
        EXPECT_NE(summary.find("Stages (device):"), std::string::npos) << summary;
    }
}

}  // namespace stage_test
}  // namespace host
}  // namespace tandem
