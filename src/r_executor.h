// The R side of lsnn's execution policy (see inst/include/lsnn/base/parallel.h):
// RcppParallel for the threads, R's event loop for Ctrl-C, cli's progress
// bars and message() for progress. Only parallel_for's body runs off the
// main thread; everything else here runs on it, between batches.
#ifndef LSNN_R_EXECUTOR_H
#define LSNN_R_EXECUTOR_H

#include <Rcpp.h>
// RcppParallel's RMatrix.h derives from std::iterator, deprecated in C++17;
// lsnn does not use it, so its include guard is set and RcppParallel.h
// leaves it out (CRAN refuses pragmas that silence the warning).
#define __RCPP_PARALLEL_RMATRIX__
#include <RcppParallel.h>
#include <cli/progress.h>

#include <lsnn/base/parallel.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace lsnn_r {

// The jump that R's event loop started while the core was running (an
// interrupt, setTimeLimit()'s error, any condition raised by
// R_CheckUserInterrupt), held until the core's frames have unwound. Rcpp
// keeps the token protected (R_PreserveObject) until the jump is resumed.
// Main thread only.
inline SEXP& pending_jump() {
  static SEXP token = nullptr;
  return token;
}

// Gives up a pending jump that nobody will resume (R's own unwinding already
// went past it), so that it does not leak or resume in a later call.
inline void drop_pending_jump() {
  SEXP& token = pending_jump();
  if (token != nullptr) R_ReleaseObject(token);
  token = nullptr;
}

// Runs R's event loop (Ctrl-C, time limits, other events). Whatever R
// raises there long-jumps, which must not cross C++ frames: the jump is
// stopped at R_UnwindProtect, kept in pending_jump(), and reported as an
// interrupt so that the core unwinds, stops its threads and frees its memory
// as for Ctrl-C; run_core() then resumes the jump, so the condition reaches
// the caller's handlers (tryCatch) as R raised it.
inline bool user_interrupted() {
  try {
    Rcpp::unwindProtect([]() -> SEXP {
      R_CheckUserInterrupt();
      return R_NilValue;
    });
    return false;
  } catch (const Rcpp::LongjumpException& e) {
    drop_pending_jump();
    pending_jump() = e.token;
    return true;
  }
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
  // `verbose`: show each phase of long work as a cli progress bar (after
  // cli's usual delay, option cli.progress_show_after) and its summary as a
  // message; otherwise nothing is printed. n_threads is capped here, for
  // every entry point at once.
  RExecutor(int n_threads, bool verbose)
      : n_threads_(std::max(1, std::min(n_threads, max_useful_threads()))), verbose_(verbose),
        last_poll_(std::chrono::steady_clock::now()) {
#if RCPP_PARALLEL_USE_TBB
    // (made here, not at the first loop, so that no two threads ever make it;
    // TBB sets it up at its first use)
    if (n_threads_ > 1 &&
        RcppParallel::internal::backend() == RcppParallel::internal::BACKEND_TBB) {
      arena_.reset(new tbb::task_arena(n_threads_));
    }
#endif
  }
  RExecutor(const RExecutor&) = delete;
  RExecutor& operator=(const RExecutor&) = delete;
  ~RExecutor() { close_bar(); }

  std::size_t n_threads() const { return static_cast<std::size_t>(n_threads_); }

  template <typename Body>
  void parallel_for(std::size_t begin, std::size_t end, Body&& body,
                    std::size_t grain = 1) {
    if (begin >= end) return;
    if (n_threads_ <= 1 || end - begin <= grain) {
      body(begin, end);
      return;
    }
#if RCPP_PARALLEL_USE_TBB
    // One arena for the executor's lifetime: RcppParallel::parallelFor makes
    // and drops an arena per loop, and a layout runs thousands of loops;
    // creating arenas that often has hung in oneTBB's arena set-up.
    if (arena_) {
      arena_->execute([&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end, grain),
                          [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
      });
      return;
    }
#endif
    BodyWorker<Body> worker(body);
    RcppParallel::parallelFor(begin, end, worker, grain, n_threads_);
  }

  void begin_phase(const char* name, std::size_t total) {
    close_bar();
    if (!verbose_ || total == 0) return;
    Rcpp::List config = Rcpp::List::create(Rcpp::Named("name") = std::string(name));
    const double units = static_cast<double>(total);
    // cli's C functions evaluate R code; an R error or interrupt there
    // becomes a C++ exception (Rcpp::LongjumpException), resumed in R by
    // the Rcpp wrapper once the core's frames have unwound.
    // With option cli.progress_show_after = 0 the bar is drawn at once
    // (otherwise at cli's first tick after the delay).
    SEXP after = Rf_GetOption1(Rf_install("cli.progress_show_after"));
    const bool at_once = Rf_isNumeric(after) && Rf_length(after) == 1 && Rf_asReal(after) == 0.0;
    bar_ = Rcpp::unwindProtect([&]() -> SEXP {
      SEXP bar = PROTECT(cli_progress_bar(units, config));
      if (at_once) cli_progress_update(bar, 0.0, 0.0, 1);
      UNPROTECT(1);
      return bar;
    });
  }

  // Updates the bar when cli's timer says an update is due, and looks for
  // an interrupt at most every 20 ms (each look runs R's event loop).
  bool progress(std::size_t done) {
    if (bar_ != R_NilValue && done != lsnn::progress_unchanged && CLI_SHOULD_TICK) {
      const double units = static_cast<double>(done);
      SEXP bar = bar_;
      Rcpp::unwindProtect([&]() -> SEXP {
        cli_progress_set(bar, units);
        return R_NilValue;
      });
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < std::chrono::milliseconds(20)) return false;
    last_poll_ = now;
    return user_interrupted();
  }

  void end_phase(const std::string& summary) {
    close_bar();
    if (!verbose_ || summary.empty()) return;
    Rcpp::Function message("message");
    message(summary);
  }

  // A line within the phase; cli redraws the bar below it.
  void phase_note(const std::string& line) {
    if (!verbose_) return;
    Rcpp::Function message("message");
    message(line);
  }

 private:
  template <typename Body>
  struct BodyWorker : public RcppParallel::Worker {
    explicit BodyWorker(Body& body) : body_(body) {}
    void operator()(std::size_t begin, std::size_t end) override { body_(begin, end); }
    Body& body_;
  };

  // Also called while an exception unwinds (a phase cut short), so it must
  // not throw: a failure to remove the bar is ignored.
  void close_bar() noexcept {
    if (bar_ == R_NilValue) return;
    SEXP bar = bar_;
    bar_ = R_NilValue;
    try {
      Rcpp::unwindProtect([&]() -> SEXP {
        cli_progress_done(bar);
        return R_NilValue;
      });
    } catch (...) {
    }
  }

  int n_threads_;
#if RCPP_PARALLEL_USE_TBB
  std::unique_ptr<tbb::task_arena> arena_;
#endif
  bool verbose_;
  Rcpp::RObject bar_;  // the phase's cli bar (kept from the garbage collector), or NULL
  std::chrono::steady_clock::time_point last_poll_;
};

// Runs a call into the core, turning lsnn's interrupt into the jump R started
// (see user_interrupted()) or else an R interrupt, and
// any other C++ exception into an R error with its message (without the
// internal .Call as the error's call).
template <typename F>
auto run_core(F&& f) -> decltype(f()) {
  drop_pending_jump();
  try {
    return f();
  } catch (const lsnn::interrupted_error&) {
    SEXP token = pending_jump();
    pending_jump() = nullptr;
    if (token != nullptr) throw Rcpp::LongjumpException(token);
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
