// The layout engine's one entry point: an objective (costs.h's
// CostEvaluator, placement.h's PlacementObjective or pacmap.h's
// PairObjective), a stepper (gradient descent, optimizer.h; negative
// sampling, sampled_sgd.h; or full-gradient Adam, adam.h) and the driver loop
// of optimizer.h, chosen from one settings struct.
//
// Gradient descent minimises the objective itself. Negative sampling (for
// the costs that are sums of repulsions: LargeVis, UMAP, t-UMAP) follows
// its own stochastic gradient and uses the objective only to record the
// cost, which is then evaluated only every `epoch` epochs and at the end
// (epoch 0: only at the end; a spectral start can put a whole cluster on one
// spot, where even the approximate cost sums all its pairs). Adam follows
// the full gradient of an objective that changes along the run (its phase
// hook begin_step(): PaCMAP's weights, LocalMAP's redrawn pairs).
#ifndef LSNN_LAYOUT_H
#define LSNN_LAYOUT_H

#include <stdexcept>
#include <type_traits>
#include <utility>

#include "adam.h"
#include "cost_models.h"
#include "costs.h"
#include "density.h"
#include "optimizer.h"
#include "sampled_sgd.h"
#include "../base/sparse.h"

namespace lsnn {

enum class StepperKind { gradient_descent = 0, sampled = 1, adam = 2 };

struct LayoutSettings {
  StepperKind stepper = StepperKind::gradient_descent;
  DriverSettings driver;
  GradientDescentSettings descent;
  SampledSettings sampled;
  AdamStepperSettings adam;
};

// Whether an objective has the phase hook the Adam stepper calls before each
// step, begin_step(iter, Y, executor).
template <typename Objective, typename Executor, typename = void>
struct has_step_hook : std::false_type {};
template <typename Objective, typename Executor>
struct has_step_hook<Objective, Executor,
                     std::void_t<decltype(std::declval<Objective&>().begin_step(
                         0, std::declval<const double*>(), std::declval<Executor&>()))>>
    : std::true_type {};

// optimize_layout() by gradient descent or negative sampling.
template <typename Objective, typename Executor>
OptimizerResult layout_steps(Objective& objective, const CostParams& params, const SparseRows& P,
                             double* Y, const LayoutSettings& s, Executor& executor,
                             DensityTerm* density) {
  if (s.stepper == StepperKind::adam) {
    throw std::invalid_argument("the Adam stepper needs an objective with a phase hook");
  }
  if (s.stepper == StepperKind::gradient_descent) {
    GradientDescent<Objective> stepper(objective, s.descent);
    return optimize(stepper, objective, Y, s.driver, executor);
  }
  if (normalised(params.method)) {
    throw std::invalid_argument(
        "negative sampling needs a cost whose repulsions are summed, not normalised (t-SNE)");
  }
  // the samples carry the weight gamma themselves
  CostParams unit = params;
  unit.gamma = 1.0;
  return with_cost_model<ScalarMath>(unit, [&](const auto& model) {
    SampledStepper<std::decay_t<decltype(model)>, Objective> stepper(
        model, objective, P, s.sampled, s.driver.max_steps, density);
    return optimize(stepper, objective, Y, s.driver, executor);
  });
}

// Optimises Y (n x d, column-major, in place) for `objective`. The sampled
// stepper draws its samples from the affinities P with the cost `params`;
// the others read neither (PaCMAP's objective, which has no P, passes empty
// ones). An objective with a phase hook (has_step_hook) runs under Adam, the
// others under gradient descent or negative sampling. `density`, when
// given, adds density.h's term from its starting step: to the objective
// (DensityObjective, which the driver tells each step) and, under negative
// sampling, to the stepper's own gradient.
template <typename Objective, typename Executor>
OptimizerResult optimize_layout(Objective& objective, const CostParams& params,
                                const SparseRows& P, double* Y, const LayoutSettings& s,
                                Executor& executor, DensityTerm* density = nullptr) {
  if constexpr (has_step_hook<Objective, Executor>::value) {
    // only the Adam stepper calls the hook that keeps such an objective right
    if (s.stepper != StepperKind::adam) {
      throw std::invalid_argument("an objective with a phase hook needs the Adam stepper");
    }
    if (density != nullptr) {
      throw std::invalid_argument("the density term is for gradient descent and negative sampling");
    }
    AdamStepper<Objective> stepper(objective, s.adam);
    return optimize(stepper, objective, Y, s.driver, executor);
  } else {
    if (density != nullptr) {
      DensityObjective<Objective> with_density(objective, *density);
      return layout_steps(with_density, params, P, Y, s, executor, density);
    }
    return layout_steps(objective, params, P, Y, s, executor, nullptr);
  }
}

}  // namespace lsnn

#endif  // LSNN_LAYOUT_H
