// The pool of a sweep or a tune. See sweep_runner.hpp.
#include "host/batch/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <ostream>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "host/batch/sweep_outputs.hpp"
#include "host/batch/sweep_wire.hpp"
#include "host/io/atomic_file.hpp"
#include "host/run/program.hpp"
#include "sim/host_threads.hpp"
#include "sim/sim_error.hpp"
#include "host/params/fail.hpp"

namespace tandem::host {
namespace {

using Clock = std::chrono::steady_clock;

std::string duration_text(double s) { return s < 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s); }

}  // namespace

int effective_jobs(const std::optional<int>& jobs) {
    if (jobs) return *jobs;
    return host_core_count();
}

struct SweepRunner::State {
    SweepOptions opt;
    mutable std::mutex mu;
    std::condition_variable cv;
    std::vector<SweepEntry> entries;
    std::size_t next = 0;        // next entry to start
    std::size_t batch_end = 0;   // end of the current run()'s entries
    int running = 0;
    int runs_done = 0;           // ran to an end (ok or failed), over all run() calls
    int failed = 0;
    int bad = 0;
    int expected_total = 0;
    bool stop = false;           // start no new rows
    bool finalized = false;      // gave up on running rows: workers must not touch anything
    bool interrupted = false;
    int abandoned = 0;
    bool started = false;
    Clock::time_point start{};
    std::string write_error;
    std::size_t progress_width = 0;
    bool progress_open = false;
    Clock::time_point last_draw{};
    int pool_size = 0;
    int threads_per_run = 1;  // each running row's share of the host's threads

    // Over processes (opt.peers with more than one): set by run().
    bool coordinator = false;             // rank 0: hands rows out, gathers them
    bool remote_worker = false;           // another rank: runs the rows it is given
    int my_rank = 0;                      // this process's rank (0 without peers)
    std::vector<int> rows_by_process{0};  // rows finished, by rank (index 0 only without peers)
    // rank 0
    int remote_running = 0;               // rows handed out and not back yet
    std::vector<int> owner;               // by entry index: the rank it was handed to (-1: none)
    std::vector<bool> told_done;          // by rank: sent "no more rows"
    // the other ranks
    std::deque<std::size_t> assigned;     // rows given, not started
    bool no_more = false;                 // rank 0 has no more rows for us
    bool request_out = false;             // a request is waiting for its answer
    std::vector<std::size_t> outbox;      // finished rows to send to rank 0

    int interrupt_count() const { return opt.interrupts ? opt.interrupts->load(std::memory_order_relaxed) : 0; }

    // The next row this process runs, if any. Callers hold mu.
    std::optional<std::size_t> take_next() {
        if (remote_worker) {
            if (assigned.empty()) return std::nullopt;
            const std::size_t i = assigned.front();
            assigned.pop_front();
            return i;
        }
        if (next >= batch_end) return std::nullopt;
        return next++;
    }

    // A row ran to an end here or on rank `process`. Callers hold mu.
    void finish(std::size_t index, SweepEntry done, int process) {
        ++runs_done;
        ++rows_by_process[static_cast<std::size_t>(process)];
        if (done.status == SweepStatus::Failed) {
            ++failed;
            message(fmt::format("{}: {}{}", done.job.origin, done.error,
                                coordinator ? fmt::format(" (MPI rank {})", process) : std::string()));
        }
        entries[index] = std::move(done);
        write_outputs();
        show_progress();
    }

    // Rows still running anywhere. Callers hold mu.
    int running_anywhere() const { return running + remote_running; }

    // Sends and receives what is due between the processes. Callers hold mu. Throws
    // tandem::SimError for a message that makes no sense (the job is then ended by the caller).
    void pump_peers() {
        SweepPeers& peers = *opt.peers;
        if (remote_worker) {
            for (const std::size_t i : outbox) peers.send(0, kTagResult, encode_sweep_result(i, entries[i]));
            outbox.clear();
            while (std::optional<PeerMessage> m = peers.poll()) {
                if (m->from != 0 || m->tag != kTagAssign) {
                    fail(fmt::format("sweep over MPI: unexpected message (tag {}) from rank {}", m->tag, m->from));
                }
                request_out = false;
                const std::vector<std::size_t> given = decode_assign(m->bytes);
                if (given.empty()) no_more = true;
                for (const std::size_t i : given) {
                    if (i >= batch_end) fail(fmt::format("sweep over MPI: rank 0 gave row index {} of {}", i, batch_end));
                    assigned.push_back(i);
                }
                cv.notify_all();
            }
            const int free_slots = pool_size - running - static_cast<int>(assigned.size());
            if (!no_more && !request_out && free_slots > 0) {
                peers.send(0, kTagRequest, encode_request(free_slots));
                request_out = true;
            }
            return;
        }
        while (std::optional<PeerMessage> m = peers.poll()) {
            const int from = m->from;
            if (from <= 0 || from >= peers.size()) fail(fmt::format("sweep over MPI: a message from rank {}", from));
            if (m->tag == kTagRequest) {
                const int want = decode_request(m->bytes);
                std::vector<std::size_t> given;
                while (!stop && interrupt_count() == 0 && static_cast<int>(given.size()) < want && next < batch_end) {
                    owner[next] = from;
                    given.push_back(next++);
                }
                remote_running += static_cast<int>(given.size());
                if (given.empty()) told_done[static_cast<std::size_t>(from)] = true;
                peers.send(from, kTagAssign, encode_assign(given));
            } else if (m->tag == kTagResult) {
                DecodedResult d = decode_sweep_result(m->bytes);
                if (d.index >= entries.size() || owner[d.index] != from) {
                    fail(fmt::format("sweep over MPI: rank {} sent row index {}, which it was not given", from, d.index));
                }
                owner[d.index] = -1;
                --remote_running;
                d.entry.job = entries[d.index].job;
                finish(d.index, std::move(d.entry), from);
            } else {
                fail(fmt::format("sweep over MPI: unexpected message (tag {}) from rank {}", m->tag, from));
            }
        }
    }

    // Every other rank has been told there are no more rows. Callers hold mu.
    bool all_told_done() const { return std::all_of(told_done.begin() + 1, told_done.end(), [](bool b) { return b; }); }

    double elapsed() const { return started ? std::chrono::duration<double>(Clock::now() - start).count() : 0.0; }

    // Callers hold mu.
    std::string progress_text() const {
        const int total = expected_total > 0 ? expected_total : bad + static_cast<int>(entries.size());
        const int done = bad + runs_done;
        const double el = elapsed();
        std::string text = fmt::format("{}: {}/{} done, {} bad", opt.label, done, total, bad);
        if (failed > 0) text += fmt::format(", {} failed", failed);
        text += fmt::format(", elapsed {:.1f} s", el);
        const int remaining = total - done;
        if (remaining > 0 && !stop) {
            text += runs_done > 0 ? fmt::format(", about {} left", duration_text(el / runs_done * remaining))
                                  : std::string(", estimating time left");
        }
        return text;
    }

    void show_progress() {
        if (!opt.progress) return;
        const std::string text = progress_text();
        last_draw = Clock::now();
        if (opt.progress_tty) {
            *opt.progress << '\r' << text << std::string(progress_width > text.size() ? progress_width - text.size() : 0, ' ');
            progress_width = text.size();
            progress_open = true;
        } else {
            *opt.progress << text << '\n';
        }
        opt.progress->flush();
    }

    // A message line; on a terminal the progress line is cleared first and redrawn after.
    void message(const std::string& line) {
        if (!opt.messages) return;
        const bool redraw = opt.progress_tty && progress_open && opt.progress == opt.messages;
        if (redraw) *opt.messages << '\r' << std::string(progress_width, ' ') << '\r';
        *opt.messages << line << '\n';
        opt.messages->flush();
        if (redraw) {
            progress_width = 0;
            show_progress();
        }
    }

    void end_progress() {
        if (opt.progress && opt.progress_tty && progress_open) {
            *opt.progress << '\n';
            opt.progress->flush();
        }
        progress_open = false;
    }

    void write_outputs() {
        if (opt.out_prefix.empty() || !write_error.empty()) return;
        try {
            const std::string csv = sweep_csv(entries);
            write_file_atomic(opt.out_prefix + ".csv", std::as_bytes(std::span<const char>(csv.data(), csv.size())));
            write_json_atomic(opt.out_prefix + ".json", sweep_json(entries));
        } catch (const std::exception& e) {
            write_error = e.what();
            stop = true;
        }
    }
};

namespace {

SweepEntry run_job(const SweepJob& job) {
    SweepEntry e;
    e.job = job;
    try {
        RunOutputs outputs;
        outputs.host_threads = job.host_threads;
        ProgramOutput out = run_program(job.run, *job.profile, outputs);
        e.results = std::move(out.results);
        e.has_results = true;
        if (job.run.request.sanitize && out.bench.sanitizer_total > 0) {
            // --sanitize: a row whose run broke a synchronisation rule fails, naming the first
            // violation (the whole report is what a single run with --sanitize prints).
            const std::string& first = out.bench.sanitizer_violations.front().text;
            e.status = SweepStatus::Failed;
            e.error = fmt::format("--sanitize found {} violation{}, the first: {}", out.bench.sanitizer_total,
                                  out.bench.sanitizer_total == 1 ? "" : "s", first.substr(0, first.find('\n')));
        } else if (e.results.verification == Verification::Failed) {
            e.status = SweepStatus::Failed;
            e.error = "verification FAILED";
        } else {
            e.status = SweepStatus::Ok;
        }
    } catch (const std::exception& ex) {
        e.status = SweepStatus::Failed;
        e.error = ex.what();
    }
    return e;
}

void worker_loop(const std::shared_ptr<SweepRunner::State>& s) {
    for (;;) {
        std::size_t index = 0;
        SweepJob job;
        {
            std::unique_lock lock(s->mu);
            for (;;) {
                if (s->stop || s->finalized || s->interrupt_count() > 0) return;
                if (const std::optional<std::size_t> i = s->take_next()) {
                    index = *i;
                    break;
                }
                // Another rank's pool waits for rows from rank 0 until it has no more.
                if (!s->remote_worker || s->no_more) return;
                s->cv.wait(lock);
            }
            job = s->entries[index].job;
            job.host_threads = s->threads_per_run;
            ++s->running;
        }
        SweepEntry done = run_job(job);
        std::lock_guard lock(s->mu);
        if (s->finalized) return;  // abandoned: the process is ending without us
        --s->running;
        s->finish(index, std::move(done), s->my_rank);
        if (s->remote_worker) s->outbox.push_back(index);
        s->cv.notify_all();
    }
}

}  // namespace

SweepRunner::SweepRunner(SweepOptions options) : state_(std::make_shared<State>()) { state_->opt = std::move(options); }

SweepRunner::~SweepRunner() { finish_progress(); }

void SweepRunner::set_bad_rows(int bad) {
    std::lock_guard lock(state_->mu);
    state_->bad = bad;
}

void SweepRunner::set_expected_total(int total) {
    std::lock_guard lock(state_->mu);
    state_->expected_total = total;
}

void SweepRunner::run(std::vector<SweepJob> jobs) {
    const std::shared_ptr<State> s = state_;
    std::unique_lock lock(s->mu);
    if (!s->started) {
        s->started = true;
        s->start = Clock::now();
    }
    if (s->finalized) return;
    const std::size_t first = s->entries.size();
    for (SweepJob& job : jobs) {
        SweepEntry e;
        e.job = std::move(job);
        s->entries.push_back(std::move(e));
    }
    s->next = first;
    s->batch_end = s->entries.size();
    const bool spread = s->opt.peers != nullptr && s->opt.peers->size() > 1;
    if (spread) {
        // Each run() is one batch of the hand-out protocol (--tune runs two: its stages); every
        // process calls run() with the same jobs, and a batch starts only after the previous one
        // ended everywhere (the caller synchronises, see run_tune), so no message of the
        // previous batch is still on its way.
        const auto processes = static_cast<std::size_t>(s->opt.peers->size());
        s->coordinator = s->opt.peers->rank() == 0;
        s->remote_worker = !s->coordinator;
        s->my_rank = s->opt.peers->rank();
        if (s->rows_by_process.size() != processes) s->rows_by_process.assign(processes, 0);
        s->owner.assign(s->entries.size(), -1);
        s->told_done.assign(processes, false);
        s->assigned.clear();
        s->no_more = false;
        s->request_out = false;
    }
    s->write_outputs();  // the files exist (with what is done so far) from the start
    if (s->opt.progress_tty) s->show_progress();
    const int pool = std::max(1, std::min<int>(s->opt.jobs > 0 ? s->opt.jobs : effective_jobs(std::nullopt),
                                               static_cast<int>(s->batch_end - first)));
    s->pool_size = pool;
    // The host's threads are shared by the rows running at once: --jobs J runs J machines of
    // about cores / J threads each, not J machines of every core.
    s->threads_per_run = thread_share(host_core_count(), pool);
    std::vector<std::thread> workers;
    if (!s->stop && s->interrupt_count() == 0) {
        for (int i = 0; i < pool; ++i) workers.emplace_back(worker_loop, s);
    }
    Clock::time_point interrupted_at{};
    std::string peer_error;
    for (;;) {
        if (spread) {
            try {
                s->pump_peers();
            } catch (const std::exception& e) {
                // The job cannot go on (the caller ends it): leave the running rows.
                peer_error = e.what();
                s->finalized = true;
                break;
            }
        }
        const int interrupts = s->interrupt_count();
        if (interrupts > 0 && !s->interrupted) {
            s->interrupted = true;
            s->stop = true;
            interrupted_at = Clock::now();
            if (s->running_anywhere() > 0) {
                s->message(fmt::format("{}: interrupted: starting no new runs; waiting up to {:.0f} s for the {} "
                                       "running (Ctrl-C again to abandon them)",
                                       s->opt.label, s->opt.interrupt_grace_s, s->running_anywhere()));
            }
        }
        if (s->remote_worker) {
            if (s->running == 0 && s->outbox.empty() && s->no_more && s->assigned.empty()) break;
        } else if (s->running_anywhere() == 0 && (s->stop || s->next >= s->batch_end) &&
                   (!s->coordinator || s->all_told_done())) {
            break;
        }
        if (s->interrupted && s->running_anywhere() > 0 &&
            (interrupts >= 2 ||
             std::chrono::duration<double>(Clock::now() - interrupted_at).count() >= s->opt.interrupt_grace_s)) {
            s->finalized = true;
            s->abandoned = s->running_anywhere();
            break;
        }
        // On a terminal the elapsed time ticks while long rows run.
        if (s->opt.progress_tty && Clock::now() - s->last_draw >= std::chrono::seconds(1)) s->show_progress();
        // Over processes, messages arrive without a notify: poll them often (a probe is cheap).
        s->cv.wait_for(lock, std::chrono::milliseconds(spread ? 2 : 50));
    }
    s->write_outputs();
    if (s->opt.progress_tty) s->show_progress();
    const bool abandon = s->finalized;
    const std::string write_error = s->write_error;
    s->cv.notify_all();  // pool threads waiting for rows: there are none to come
    lock.unlock();
    for (std::thread& t : workers) {
        if (abandon) t.detach();  // still simulating; they hold `s` and touch nothing once finalized
        else t.join();
    }
    if (!peer_error.empty()) fail(peer_error);
    if (!write_error.empty()) fail(fmt::format("{}: {}", s->opt.label, write_error));
}

std::vector<SweepEntry> SweepRunner::entries() const {
    std::lock_guard lock(state_->mu);
    return state_->entries;
}

bool SweepRunner::interrupted() const {
    std::lock_guard lock(state_->mu);
    return state_->interrupted;
}

int SweepRunner::abandoned() const {
    std::lock_guard lock(state_->mu);
    return state_->abandoned;
}

int SweepRunner::failed() const {
    std::lock_guard lock(state_->mu);
    return state_->failed;
}

std::vector<int> SweepRunner::rows_per_process() const {
    std::lock_guard lock(state_->mu);
    return state_->rows_by_process;
}

double SweepRunner::elapsed_seconds() const {
    std::lock_guard lock(state_->mu);
    return state_->elapsed();
}

void SweepRunner::finish_progress() {
    std::lock_guard lock(state_->mu);
    state_->end_progress();
}

}  // namespace tandem::host
