// Gradient descent for the embedding costs of costs.h, as in t-SNE:
//
//   gain  <- gain + 0.2 where the gradient's sign differs from the last
//            update's, gain * 0.8 where it agrees, at least min_gain
//            (Jacobs' delta-bar-delta);
//   update <- momentum * update - eta * gain * gradient;  Y <- Y + update;
//   Y is recentred (column means 0) after every step.
//
// The momentum switches from `momentum` to `final_momentum` at iteration
// `mom_switch_iter`; P is multiplied by `exaggeration` up to iteration
// `stop_lying_iter` (early exaggeration), when the approximate gradient takes
// the coarser grid of exaggeration_grid() (fft_repulsion.h). The cost (of P
// itself) is taken every `epoch` iterations and after the last one; once the
// exaggeration is over, the run stops when the relative change between two
// successive epoch costs falls below `tol`.
//
// Coordinates that stop being finite (a step size, exaggeration or starting
// scale so large that the squared distances overflow) end the run with
// std::runtime_error rather than return NaN.
//
// Deterministic: the update is element-wise and the sums of costs.h are taken
// in an order that does not depend on the number of threads.
#ifndef LSNN_OPTIMIZER_H
#define LSNN_OPTIMIZER_H

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "costs.h"
#include "parallel.h"

namespace lsnn {

struct OptimizerSettings {
  int max_iter = 1000;
  double eta = 200.0;
  double momentum = 0.5;
  double final_momentum = 0.8;
  int mom_switch_iter = 250;
  double exaggeration = 1.0;
  int stop_lying_iter = 0;
  double min_gain = 0.01;
  double tol = 1e-7;
  int epoch = 50;
};

struct OptimizerResult {
  std::vector<int> cost_iter;    // iterations (0 = the initial coordinates)
  std::vector<double> cost;      // the cost after that many iterations
  int iterations = 0;            // iterations done
  bool converged = false;        // stopped by the tolerance
};

inline double sign_of(double x) { return (x > 0.0) - (x < 0.0); }

inline bool all_finite(const double* x, std::size_t count) {
  double acc = 0.0;  // 0 * x is NaN exactly when x is not finite
  for (std::size_t t = 0; t < count; ++t) acc += 0.0 * x[t];
  return acc == 0.0;
}

inline void throw_diverged(int iter) {
  throw std::runtime_error(
      "the embedding diverged at iteration " + std::to_string(iter) +
      " (its coordinates or cost are no longer finite numbers): lower 'eta' or "
      "'exaggeration', or start from smaller coordinates ('init_sdev', 'init')");
}

// A run's cost history and its progress display: the cost after each
// recorded step (an "iteration" or an "epoch") with the time since the
// start, and the summary line at the end.
template <typename Executor>
class CostHistory {
 public:
  CostHistory(Executor& executor, std::size_t total, const char* step)
      : phase_(executor, "optimization", total),
        step_(step),
        start_(std::chrono::steady_clock::now()) {}

  void record(OptimizerResult& res, int done, double cost) {
    res.cost_iter.push_back(done);
    res.cost.push_back(cost);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s %d: cost %.6g (%.1f s)", step_, done, cost, secs);
    phase_.note(buf);
  }
  void set(std::size_t done) { phase_.set(done); }
  void finish(const OptimizerResult& res) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "optimization: %d %ss%s, cost %.6g", res.iterations, step_,
                  res.converged ? " (converged)" : "", res.cost.back());
    phase_.finish(buf);
  }

 private:
  Phase<Executor> phase_;
  const char* step_;
  std::chrono::steady_clock::time_point start_;
};

// Y: n x d column-major, updated in place.
template <typename Executor>
OptimizerResult optimize_embedding(CostEvaluator& evaluator, double* Y,
                                   const OptimizerSettings& s, Executor& executor) {
  const std::size_t n = evaluator.n(), d = evaluator.d(), nd = n * d;
  if (!all_finite(Y, nd)) throw std::invalid_argument("the initial coordinates are not all finite");
  std::vector<double> grad(nd, 0.0), update(nd, 0.0), gains(nd, 1.0);
  OptimizerResult res;
  CostHistory<Executor> history(executor, static_cast<std::size_t>(std::max(s.max_iter, 0)),
                                "iteration");
  double prev_cost = NAN;
  int prev_cost_iter = -1;

  for (int iter = 1; iter <= s.max_iter; ++iter) {
    const bool lying = iter <= s.stop_lying_iter;
    if (iter == 1 || iter == s.stop_lying_iter + 1) {
      evaluator.use_exaggeration_grid(lying && s.exaggeration != 1.0);
    }
    const double momentum = iter < s.mom_switch_iter ? s.momentum : s.final_momentum;
    const int done = iter - 1;  // iterations already applied to Y
    const bool want_cost = s.epoch > 0 && done % s.epoch == 0;
    const double cost = evaluator.evaluate(Y, lying ? s.exaggeration : 1.0, want_cost,
                                           grad.data(), nullptr, executor);
    if (want_cost) {
      if (std::isnan(cost)) throw_diverged(done);
      history.record(res, done, cost);
      // only compare epochs that are both past the exaggeration
      if (prev_cost_iter >= s.stop_lying_iter && done > s.stop_lying_iter &&
          std::fabs(prev_cost - cost) <= s.tol * std::fabs(cost)) {
        res.converged = true;
        res.iterations = done;
        history.finish(res);
        return res;
      }
      prev_cost = cost;
      prev_cost_iter = done;
    }
    const double eta = s.eta, min_gain = s.min_gain;
    executor.parallel_for(
        0, nd,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t t = b; t < e; ++t) {
            double g = gains[t];
            g = sign_of(grad[t]) != sign_of(update[t]) ? g + 0.2 : g * 0.8;
            if (g < min_gain) g = min_gain;
            gains[t] = g;
            update[t] = momentum * update[t] - eta * g * grad[t];
            Y[t] += update[t];
          }
        },
        1024);
    for (std::size_t c = 0; c < d; ++c) {
      double mean = 0.0;
      for (std::size_t i = 0; i < n; ++i) mean += Y[c * n + i];
      mean /= static_cast<double>(n);
      // the mean is finite only if every coordinate of the column is (or
      // their sum overflowed, as bad a sign)
      if (!std::isfinite(mean)) throw_diverged(iter);
      for (std::size_t i = 0; i < n; ++i) Y[c * n + i] -= mean;
    }
    res.iterations = iter;
    history.set(static_cast<std::size_t>(iter));
  }
  evaluator.use_exaggeration_grid(false);
  // the cost of the final coordinates
  if (res.cost_iter.empty() || res.cost_iter.back() != res.iterations) {
    const double cost = evaluator.evaluate(Y, 1.0, true, grad.data(), nullptr, executor);
    if (std::isnan(cost)) throw_diverged(res.iterations);
    history.record(res, res.iterations, cost);
  }
  history.finish(res);
  return res;
}

}  // namespace lsnn

#endif  // LSNN_OPTIMIZER_H
