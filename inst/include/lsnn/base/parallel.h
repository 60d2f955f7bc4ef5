// lsnn: the execution policy every long-running algorithm in the core takes.
//
// The core knows nothing of R. An algorithm receives an `Executor`, a small
// policy object with these members:
//
//   std::size_t n_threads() const;
//   template <typename Body>
//   void parallel_for(std::size_t begin, std::size_t end, Body&& body,
//                     std::size_t grain = 1);
//       Calls body(b, e) on disjoint sub-ranges covering [begin, end),
//       possibly from several threads at once. `body` must not touch R.
//   void begin_phase(const char* name, std::size_t total);
//   bool progress(std::size_t done);
//   void end_phase(const std::string& summary);
//   void phase_note(const std::string& line);
//       Progress of the work, on the calling (main) thread only, between
//       parallel batches: a phase starts with its total number of steps,
//       progress() says how many are done (or `progress_unchanged`) and
//       returns true when the user asked to stop (Ctrl-C in R); the phase
//       ends with a one-line summary (empty when it was cut short);
//       phase_note() adds a line on the way (an epoch's cost). The
//       executor decides what to show and how often to look for an
//       interrupt; the core only calls checkpoint() (directly, through a
//       Phase or through batched_for()) between batches.
//
// The glue in src/r_executor.h fills it with RcppParallel, R's interrupt
// checks and cli's progress bars.
//
// Results never depend on how parallel_for splits a range: every algorithm
// writes each output element from exactly one index of the range, and
// anything random is seeded per index from seeds drawn before the loop.
#ifndef LSNN_PARALLEL_H
#define LSNN_PARALLEL_H

#include <algorithm>
#include <cstddef>
#include <exception>
#include <string>
#include <utility>

namespace lsnn {

// Thrown by the core when the executor reports an interrupt; the glue turns
// it back into an R interrupt.
struct interrupted_error : std::exception {
  const char* what() const noexcept override { return "interrupted by the user"; }
};

// For Executor::progress(): no new steps, only a chance to interrupt.
constexpr std::size_t progress_unchanged = static_cast<std::size_t>(-1);

// The one place where the core stops on an interrupt: called on the main
// thread between parallel batches, with the steps of the current phase done
// so far when there is a phase.
template <typename Executor>
void checkpoint(Executor& executor, std::size_t done = progress_unchanged) {
  if (executor.progress(done)) throw interrupted_error();
}

// A phase of long work, for its executor's progress display: opened with
// its total number of steps, advanced between batches, closed by finish()
// with a one-line summary (or, when an exception cuts it short, without).
template <typename Executor>
class Phase {
 public:
  Phase(Executor& executor, const char* name, std::size_t total) : executor_(executor) {
    executor_.begin_phase(name, total);
  }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;
  ~Phase() {
    if (open_) executor_.end_phase(std::string());
  }

  void set(std::size_t done) { checkpoint(executor_, done); }
  void note(const std::string& line) { executor_.phase_note(line); }
  void finish(const std::string& summary) {
    open_ = false;
    executor_.end_phase(summary);
  }

 private:
  Executor& executor_;
  bool open_ = true;
};

// Runs body over [0, n) in consecutive batches of `batch` indices, with a
// checkpoint on the calling thread after each batch, so that Ctrl-C is
// honoured within one batch's time and no worker thread ever calls R.
// `after_batch(done)` runs on the calling thread after each batch (progress).
template <typename Executor, typename Body, typename AfterBatch>
void batched_for(Executor& executor, std::size_t n, std::size_t batch,
                 Body&& body, AfterBatch&& after_batch,
                 std::size_t grain = 1) {
  batch = std::max<std::size_t>(batch, 1);
  for (std::size_t start = 0; start < n; start += batch) {
    const std::size_t stop = std::min(n, start + batch);
    executor.parallel_for(start, stop, body, grain);
    after_batch(stop);
    checkpoint(executor);
  }
}

template <typename Executor, typename Body>
void batched_for(Executor& executor, std::size_t n, std::size_t batch,
                 Body&& body, std::size_t grain = 1) {
  batched_for(executor, n, batch, std::forward<Body>(body),
              [](std::size_t) {}, grain);
}

}  // namespace lsnn

#endif  // LSNN_PARALLEL_H
