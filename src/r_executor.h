// The R side of lsnn's execution policy (see inst/include/lsnn/parallel.h):
// RcppParallel for the threads, R's event loop for Ctrl-C, message() for
// progress. Only parallel_for's body runs off the main thread.
#ifndef LSNN_R_EXECUTOR_H
#define LSNN_R_EXECUTOR_H

#include <Rcpp.h>
// RcppParallel's RMatrix.h derives from std::iterator, deprecated in C++17;
// lsnn does not use it, so its warning is silenced for that header alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <RcppParallel.h>
#pragma GCC diagnostic pop

#include <lsnn/parallel.h>

#include <algorithm>
#include <string>
#include <thread>

namespace lsnn_r {

inline void check_interrupt_unsafe(void*) { R_CheckUserInterrupt(); }

// R_CheckUserInterrupt() long-jumps on Ctrl-C, which must not cross C++
// frames; R_ToplevelExec contains the jump and reports it as FALSE.
inline bool user_interrupted() {
  return R_ToplevelExec(check_interrupt_unsafe, nullptr) == FALSE;
}

// The most threads worth asking for: what RcppParallel's TBB would run
// (RcppParallel::defaultNumThreads(), which honours the process's CPU
// affinity), else the hardware's count. Asking TBB for more only earns its
// "number of workers is currently limited" warning, and per-thread buffers.
inline int max_useful_threads() {
  int cap = 0;
#if RCPP_PARALLEL_USE_TBB
  cap = tbb::this_task_arena::max_concurrency();
#endif
  if (cap < 1) cap = static_cast<int>(std::thread::hardware_concurrency());
  return cap < 1 ? 1 : cap;
}

class RExecutor {
 public:
  // n_threads is capped here, for every entry point at once.
  RExecutor(int n_threads, bool verbose)
      : n_threads_(std::max(1, std::min(n_threads, max_useful_threads()))), verbose_(verbose) {}

  std::size_t n_threads() const { return static_cast<std::size_t>(n_threads_); }

  template <typename Body>
  void parallel_for(std::size_t begin, std::size_t end, Body&& body,
                    std::size_t grain = 1) {
    if (begin >= end) return;
    if (n_threads_ <= 1 || end - begin <= grain) {
      body(begin, end);
      return;
    }
    BodyWorker<Body> worker(body);
    RcppParallel::parallelFor(begin, end, worker, grain, n_threads_);
  }

  bool interrupted() { return user_interrupted(); }

  void report(const std::string& text) {
    if (!verbose_) return;
    Rcpp::Function message("message");
    message(text);
  }

  bool verbose() const { return verbose_; }

 private:
  template <typename Body>
  struct BodyWorker : public RcppParallel::Worker {
    explicit BodyWorker(Body& body) : body_(body) {}
    void operator()(std::size_t begin, std::size_t end) override { body_(begin, end); }
    Body& body_;
  };

  int n_threads_;
  bool verbose_;
};

// Runs a call into the core, turning lsnn's interrupt into an R interrupt and
// any other C++ exception into an R error with its message (without the
// internal .Call as the error's call).
template <typename F>
auto run_core(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const lsnn::interrupted_error&) {
    throw Rcpp::internal::InterruptedException();
  } catch (const Rcpp::exception&) {
    throw;
  } catch (const Rcpp::internal::InterruptedException&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Rcpp::exception("not enough memory for this problem", false);
  } catch (const std::exception& e) {
    throw Rcpp::exception(e.what(), false);
  }
}

}  // namespace lsnn_r

#endif  // LSNN_R_EXECUTOR_H
