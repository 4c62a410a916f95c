#pragma once
// What a profiler reports for each kernel launch (msprof's op summary: task duration and
// PipeUtilization), measured from the simulator's statistics of the launch (KernelStats):
//  * kernel time: the launch's task duration as the profiler counts it: from the task's start on
//    the device to its end, i.e. its blocks' span (the first block's start to the last block's
//    end) with the task's own overheads around it (host.task_start_us: dispatching the task to
//    the cores, the blocks' start, the scalar preamble; host.task_end_us: the final
//    synchronisation; sim/MODEL.md "A kernel's time as the profiler counts it"). Those are parts
//    of the host's launch and completion latencies, so the host-timed views are unchanged by
//    them; they add the rest of the launch, completion and synchronize overheads around it (and,
//    for a view of several launches, everything between them).
//  * pipe ratio: per pipe, busy / kernel time on each core that ran a block of the launch, and
//    over those cores the mean, the smallest and the largest. Busy is the sum of the
//    [start, end) intervals of the instructions the pipe executed for the launch; waiting in
//    wait_flag, pipe_barrier or TWAIT is not busy; SCALAR is one issue slot per instruction the
//    core issued (sim/exec/logical_process.hpp, CoreBusy). AIC pipes are averaged over the AIC
//    cores, AIV pipes over the AIV cores (a MIX launch has both).
// The results JSON's `kernels` array (docs/RESULTS.md "Kernel time and pipe utilisation") is built here.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/op_desc.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// The pipes msprof's PipeUtilization reports for a core type, in its order: AIC cube, MTE1,
// MTE2, FIXP, scalar; AIV MTE2, vector, MTE3, scalar.
const std::vector<Pipe>& profiled_pipes(CoreType t);
// The pipe's key in the results JSON: "cube", "mte1", "mte2", "fixp", "vector", "mte3", "scalar".
const char* pipe_key(Pipe p);

// busy / kernel time of one pipe over the cores of one type that ran the launch (fractions).
struct PipeRatio {
    CoreType core_type = CoreType::AIC;
    Pipe pipe = Pipe::M;
    double mean = 0;
    double min = 0;
    double max = 0;
};

// One launch of one view on one rank.
struct KernelFigures {
    kernels::ViewKind view = kernels::ViewKind::Pipelined;
    int launch = 0;  // its index among the view's launches (phases in order, then launch order)
    int phase = 0;
    int stream = 0;  // index into the op's streams()
    std::string kernel;
    LaunchCores cores = CoreType::AIC;
    int blocks = 0;
    SimTime start = 0;  // device clock: first block started
    SimTime end = 0;    // last block done
    SimTime task_start = 0;  // the task started on the device (start less the task's start overhead)
    SimTime task_end = 0;    // the task ended (end plus the task's end overhead)
    int aic_cores = 0;  // cores that ran at least one of its blocks
    int aiv_cores = 0;
    std::vector<PipeRatio> pipe_ratio;  // profiled_pipes of each core type that ran it
    std::vector<StageBusy> stages;      // by stage id (KernelStats::stages)

    double kernel_us() const { return to_us(task_end - task_start); }  // the task duration
    double blocks_us() const { return to_us(end - start); }            // first block start to last block end
    const PipeRatio* ratio(CoreType t, Pipe p) const;  // null when that core type did not run it
};

// The parts of the host's launch and completion latencies that the profiler's task duration holds
// (sim/profile.hpp HostProfile::task_start_us, task_end_us).
struct TaskOverheads {
    SimTime start_ps = 0;  // the task's start on the device to its first block's start
    SimTime end_ps = 0;    // its last block's end to the task's end
    static TaskOverheads of(const Profile& profile);
};

// The figures of a launch from its statistics (the identity fields are left to the caller).
KernelFigures measure_kernel(const KernelStats& stats, TaskOverheads task = {});

// A stage's figures (docs/RESULTS.md "Stages"): its span on the device clock, the blocks that ran
// it, busy per pipe summed over them, and its busiest pipe's busy / (blocks x kernel time) in %.
// The stage whose busiest pipe is busiest that way bounds the kernel (the one that would have to
// get faster first): `bounding_stage`.
struct StageFigures {
    std::string name;
    const StageBusy* busy = nullptr;
    Pipe busiest = Pipe::S;
    double busiest_pct = 0;
};
std::vector<StageFigures> stage_figures(const KernelFigures& k, const std::vector<std::string>& stage_names);

// The results JSON's `kernels` array from every rank's figures (per_rank[r], in launch order):
// one entry per (view, launch), with rank 0's kernel_us, cores, pipe_ratio and stages, the
// extremes of kernel_us over the ranks and every rank's kernel_us, start_us and end_us.
nlohmann::json kernels_json(const std::vector<std::vector<KernelFigures>>& per_rank,
                            const std::vector<std::string>& stream_names, const std::vector<std::string>& stage_names = {});

// The pipelined view's stages over all its launches (results `pipelined_stages`), from the
// `kernels` array: each stage's extent, blocks and busiest pipe, its busy % over the view's
// device span (first launch's start to last launch's end, the entries' rank), and the stage
// with the highest (`bounding_stage`). Null when no launch has stages.
nlohmann::json pipelined_stages_json(const nlohmann::json& kernels);

}  // namespace tandem::host
