// lsnn: the execution policy every long-running algorithm in the core takes.
//
// The core knows nothing of R. An algorithm receives an `Executor`, a small
// policy object with four members:
//
//   std::size_t n_threads() const;
//   template <typename Body>
//   void parallel_for(std::size_t begin, std::size_t end, Body&& body,
//                     std::size_t grain = 1);
//       Calls body(b, e) on disjoint sub-ranges covering [begin, end),
//       possibly from several threads at once. `body` must not touch R.
//   bool interrupted();
//       Called on the calling (main) thread only, between batches: true when
//       the user asked to stop (Ctrl-C in R).
//   void report(const std::string& message);
//       Progress text, also on the main thread only.
//
// The glue in src/ fills it with RcppParallel and R's interrupt checks; the
// SerialExecutor below is the R-free default used by the core's own checks.
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

// Thrown by the core when Executor::interrupted() says so; the glue turns it
// back into an R interrupt.
struct interrupted_error : std::exception {
  const char* what() const noexcept override { return "interrupted by the user"; }
};

struct SerialExecutor {
  std::size_t n_threads() const { return 1; }
  template <typename Body>
  void parallel_for(std::size_t begin, std::size_t end, Body&& body,
                    std::size_t /* grain */ = 1) const {
    if (begin < end) body(begin, end);
  }
  bool interrupted() { return false; }
  void report(const std::string&) {}
};

// Runs body over [0, n) in consecutive batches of `batch` indices, polling
// for an interrupt on the calling thread after each batch, so that Ctrl-C is
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
    if (executor.interrupted()) throw interrupted_error();
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
