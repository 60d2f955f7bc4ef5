// The optimisation of a layout: one driver loop, optimize(), that advances
// the coordinates by a stepper, records the cost every `epoch` steps (with
// progress and Ctrl-C through the Executor), stops early when the cost
// settles and refuses to return coordinates that are no longer finite; and
// the gradient-descent stepper of t-SNE. The sampled stepper of LargeVis
// and UMAP is in sampled_sgd.h; layout.h chooses between them.
//
// A stepper has
//   double prepare(int iter, const double* Y, bool want_cost, Executor&):
//     what step `iter` (from 1) needs to know of Y (the gradient), and the
//     cost of Y when want_cost (NaN otherwise);
//   void advance(int iter, double* Y, Executor&): takes step `iter`;
//   static constexpr bool kEarlyStop: whether the driver may stop when the
//     relative change of the cost between two records falls below `tol`
//     (after step `tol_after`);
//   static constexpr const char* kStepName: "iteration" or "epoch";
//   std::string divergence_hint() const: what the user can change when the
//     run diverges (the step size's argument, ...).
// The objective (costs.h's CostEvaluator) gives the final cost.
//
// Gradient descent, as in t-SNE:
//
//   gain  <- gain + 0.2 where the gradient's sign differs from the last
//            update's, gain * 0.8 where it agrees, at least min_gain
//            (Jacobs' delta-bar-delta);
//   update <- momentum * update - eta * gain * gradient;  Y <- Y + update;
//   Y is recentred (column means 0) after every step, and scaled up when
//   it has shrunk below min_spread (see GradientDescentSettings), unless the
//   objective has fixed points (objective.fixed() > 0: points [0, fixed)
//   never move, as when new points are placed in an existing embedding).
//
// The momentum switches from `momentum` to `final_momentum` at iteration
// `mom_switch_iter`; P is multiplied by `exaggeration` up to iteration
// `stop_lying_iter` (early exaggeration, through the objective's phase hook),
// with its own step size `eta_exaggerated`.
//
// The caller may watch the run: DriverSettings::observer, when set, is
// called after every `observe_every`-th step on the calling thread (between
// steps, never while threads run) with the steps done and Y, and ends the
// run there by returning true (the result says so in `stopped`). It sees
// Y only: the run does not depend on it otherwise.
//
// A run that diverges ends with std::runtime_error rather than return
// garbage: coordinates or a cost that stop being finite (a step size,
// exaggeration or starting scale so large that the squared distances
// overflow), or coordinates beyond divergence_limit() (a step size so large
// that every step overshoots, throwing the points ever further out while
// the numbers stay finite). The check only reads Y: a run that does not
// diverge is the same with or without it.
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
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "costs.h"
#include "../base/parallel.h"

namespace lsnn {

struct GradientDescentSettings {
  double eta = 200.0;
  // the step size while P is exaggerated (openTSNE and FIt-SNE take
  // n / exaggeration in each phase)
  double eta_exaggerated = 200.0;
  double momentum = 0.5;
  double final_momentum = 0.8;
  int mom_switch_iter = 250;
  double exaggeration = 1.0;
  int stop_lying_iter = 0;
  double min_gain = 0.01;
  // A layout whose spread (the root mean square of its centred coordinates)
  // falls below min_spread is scaled up to rescale_spread, its pending
  // updates with it. Early exaggeration can shrink a layout of unstructured
  // data towards 1e-18; below about 1e-8 the squared distances vanish
  // against 1 in the output kernels, every pair looks alike and nothing
  // brings the layout back in finite precision, while the shape it has
  // (the slowest modes of the linear dynamics) is kept by the rescaling.
  double min_spread = 1e-8;
  double rescale_spread = 1e-4;
};

// A look at the layout during a run: called with the steps done and Y
// (n x d, column-major, read only); returns true to stop the run.
using LayoutObserver = std::function<bool(int done, const double* Y)>;

// The driver's own settings.
struct DriverSettings {
  int max_steps = 1000;
  // steps between two cost records (0: only the final cost)
  int epoch = 50;
  // whether the records begin with the cost of the start: an evaluation of
  // the grid's cost can take far longer on a start whose points crowd into
  // a few boxes than on the layout that follows
  bool cost_at_start = true;
  // early stop (steppers with kEarlyStop): relative cost change, compared
  // only between records both after step tol_after
  double tol = 1e-7;
  int tol_after = 0;
  // steps between two calls of the observer (when set)
  int observe_every = 0;
  LayoutObserver observer;
};

struct OptimizerResult {
  std::vector<int> cost_iter;    // iterations (0 = the initial coordinates)
  std::vector<double> cost;      // the cost after that many iterations
  int iterations = 0;            // iterations done
  bool converged = false;        // stopped by the tolerance
  bool stopped = false;          // stopped by the observer
};


inline bool all_finite(const double* x, std::size_t count) {
  double acc = 0.0;  // 0 * x is NaN exactly when x is not finite
  for (std::size_t t = 0; t < count; ++t) acc += 0.0 * x[t];
  return acc == 0.0;
}

// No converging layout of n points comes near this: the converged layouts
// of every cost spread over a few times sqrt(n) at most (the area of a 2-D
// layout grows with n; t-SNE of 1e6 points stays within some hundreds),
// and a layout never needs to leave its start's scale by orders of
// magnitude (new points placed among fixed ones lie among them). Diverging
// steps overshoot by a factor each step, so they pass any such bound within
// a few steps.
constexpr double kDivergenceFactor = 1e4;

inline double divergence_limit(const double* Y, std::size_t n, std::size_t count) {
  double start = 0.0;
  for (std::size_t t = 0; t < count; ++t) start = std::max(start, std::fabs(Y[t]));
  return kDivergenceFactor * std::max({start, std::sqrt(static_cast<double>(n)), 1.0});
}

// Whether every coordinate is finite and within `limit` (NaN is not).
inline bool all_within(const double* x, std::size_t count, double limit) {
  bool ok = true;
  for (std::size_t t = 0; t < count; ++t) ok &= std::fabs(x[t]) <= limit;
  return ok;
}

inline void throw_diverged(int iter, const std::string& hint, double limit = NAN) {
  char scale[160] = "its coordinates or cost are no longer finite numbers";
  if (!std::isnan(limit)) {
    std::snprintf(scale, sizeof(scale),
                  "its coordinates passed %.3g, far beyond the scale of any layout of these points",
                  limit);
  }
  throw std::runtime_error("the embedding diverged at iteration " + std::to_string(iter) + " (" +
                           scale + "): " + hint);
}

// After step `iter`: an error if Y has diverged.
inline void check_diverged(int iter, const double* Y, std::size_t count, double limit,
                           const std::string& hint) {
  if (all_within(Y, count, limit)) return;
  throw_diverged(iter, hint, all_finite(Y, count) ? limit : NAN);
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

// Whether an objective has the driver's phase step begin_iteration(iter, Y,
// executor), called with Y before each step (from 1) is prepared, and with
// the final Y (and the last step's number) before the final cost: an
// objective whose terms change along the run and need sums over all points
// first (density.h's term: on from its starting step, its global means and
// variances) takes them there, whichever stepper evaluates it.
template <typename Objective, typename Executor, typename = void>
struct has_iteration_hook : std::false_type {};
template <typename Objective, typename Executor>
struct has_iteration_hook<Objective, Executor,
                          std::void_t<decltype(std::declval<Objective&>().begin_iteration(
                              0, std::declval<const double*>(), std::declval<Executor&>()))>>
    : std::true_type {};

// Runs `stepper` on Y (n x d column-major, updated in place) for at most
// s.max_steps steps; `objective` gives the final cost.
template <typename Stepper, typename Objective, typename Executor>
OptimizerResult optimize(Stepper& stepper, Objective& objective, double* Y,
                         const DriverSettings& s, Executor& executor) {
  const std::size_t nd = objective.n() * objective.d();
  if (!all_finite(Y, nd)) throw std::invalid_argument("the initial coordinates are not all finite");
  const double limit = divergence_limit(Y, objective.n(), nd);
  OptimizerResult res;
  CostHistory<Executor> history(executor, static_cast<std::size_t>(std::max(s.max_steps, 0)),
                                Stepper::kStepName);
  double prev_cost = NAN;
  int prev_cost_iter = -1;
  for (int iter = 1; iter <= s.max_steps; ++iter) {
    const int done = iter - 1;  // steps already applied to Y
    const bool want_cost = s.epoch > 0 && done % s.epoch == 0 && (done > 0 || s.cost_at_start);
    if constexpr (has_iteration_hook<Objective, Executor>::value) {
      objective.begin_iteration(iter, Y, executor);
    }
    const double cost = stepper.prepare(iter, Y, want_cost, executor);
    if (want_cost) {
      if (std::isnan(cost)) throw_diverged(done, stepper.divergence_hint());
      history.record(res, done, cost);
      if (Stepper::kEarlyStop && prev_cost_iter >= s.tol_after && done > s.tol_after &&
          std::fabs(prev_cost - cost) <= s.tol * std::fabs(cost)) {
        res.converged = true;
        res.iterations = done;
        history.finish(res);
        return res;
      }
      prev_cost = cost;
      prev_cost_iter = done;
    }
    stepper.advance(iter, Y, executor);
    check_diverged(iter, Y, nd, limit, stepper.divergence_hint());
    res.iterations = iter;
    history.set(static_cast<std::size_t>(iter));
    if (s.observer && s.observe_every > 0 && iter % s.observe_every == 0 && s.observer(iter, Y)) {
      res.stopped = true;
      break;
    }
  }
  objective.set_exaggeration(1.0);
  // the cost of the final coordinates
  if (res.cost_iter.empty() || res.cost_iter.back() != res.iterations) {
    if constexpr (has_iteration_hook<Objective, Executor>::value) {
      objective.begin_iteration(res.iterations, Y, executor);
    }
    std::vector<double> grad(nd);
    const double cost = objective.evaluate(Y, true, grad.data(), nullptr, executor);
    if (std::isnan(cost)) throw_diverged(res.iterations, stepper.divergence_hint());
    history.record(res, res.iterations, cost);
  }
  history.finish(res);
  return res;
}

// Gradient descent with momentum and delta-bar-delta gains (see the top).
template <typename Objective>
class GradientDescent {
 public:
  static constexpr bool kEarlyStop = true;
  static constexpr const char* kStepName = "iteration";

  GradientDescent(Objective& objective, const GradientDescentSettings& s)
      : objective_(objective),
        s_(s),
        n_(objective.n()),
        d_(objective.d()),
        fixed_(objective.fixed()),
        grad_(n_ * d_, 0.0),
        update_(n_ * d_, 0.0),
        gains_(n_ * d_, 1.0) {}

  std::string divergence_hint() const {
    // early exaggeration and the start apply to a whole layout only
    if (fixed_ > 0) return "lower 'eta'";
    return std::string("lower 'eta'") +
           (s_.stop_lying_iter > 0 && s_.exaggeration != 1.0 ? " or 'exaggeration'" : "") +
           ", or start from smaller coordinates ('init_sdev', 'init')";
  }

  template <typename Executor>
  double prepare(int iter, const double* Y, bool want_cost, Executor& executor) {
    const bool lying = iter <= s_.stop_lying_iter;
    if (iter == 1 || iter == s_.stop_lying_iter + 1) {
      objective_.set_exaggeration(lying ? s_.exaggeration : 1.0);
    }
    return objective_.evaluate(Y, want_cost, grad_.data(), nullptr, executor);
  }

  template <typename Executor>
  void advance(int iter, double* Y, Executor& executor) {
    const double momentum = iter < s_.mom_switch_iter ? s_.momentum : s_.final_momentum;
    const double eta = iter <= s_.stop_lying_iter ? s_.eta_exaggerated : s_.eta;
    const double min_gain = s_.min_gain;
    double* grad = grad_.data();
    double* update = update_.data();
    double* gains = gains_.data();
    const std::size_t n = n_, d = d_;
    executor.parallel_for(
        fixed_, n_,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d; ++c) {
            for (std::size_t t = c * n + b; t < c * n + e; ++t) {
              double g = gains[t];
              // the gain grows while the steps keep their direction (the
              // gradient's sign then differs from the last update's)
              const bool same = (grad[t] > 0.0) == (update[t] > 0.0) &&
                                (grad[t] < 0.0) == (update[t] < 0.0);
              g = same ? g * 0.8 : g + 0.2;
              if (g < min_gain) g = min_gain;
              gains[t] = g;
              update[t] = momentum * update[t] - eta * g * grad[t];
              Y[t] += update[t];
            }
          }
        },
        1024);
    // a layout with fixed points keeps their frame
    if (fixed_ == 0) {
      recentre(iter, Y);
      keep_resolvable(Y);
    }
  }

 private:
  void recentre(int iter, double* Y) const {
    for (std::size_t c = 0; c < d_; ++c) {
      double mean = 0.0;
      for (std::size_t i = 0; i < n_; ++i) mean += Y[c * n_ + i];
      mean /= static_cast<double>(n_);
      // the mean is finite only if every coordinate of the column is (or
      // their sum overflowed, as bad a sign)
      if (!std::isfinite(mean)) throw_diverged(iter, divergence_hint());
      for (std::size_t i = 0; i < n_; ++i) Y[c * n_ + i] -= mean;
    }
  }

  // The rescaling of a layout shrunk below min_spread (see the settings).
  void keep_resolvable(double* Y) {
    const std::size_t nd = n_ * d_;
    double sq = 0.0;
    for (std::size_t t = 0; t < nd; ++t) sq += Y[t] * Y[t];
    const double spread = std::sqrt(sq / static_cast<double>(nd));
    if (!(spread > 0.0) || spread >= s_.min_spread) return;
    const double f = s_.rescale_spread / spread;
    for (std::size_t t = 0; t < nd; ++t) {
      Y[t] *= f;
      update_[t] *= f;
    }
  }

  Objective& objective_;
  GradientDescentSettings s_;
  std::size_t n_, d_, fixed_;
  std::vector<double> grad_, update_, gains_;
};

}  // namespace lsnn

#endif  // LSNN_OPTIMIZER_H
