// The layout engine's entry point: an objective (costs.h), a stepper
// (gradient descent, optimizer.h; or negative sampling, sampled_sgd.h) and
// the driver loop of optimizer.h, chosen from one settings struct.
//
// Gradient descent minimises the objective itself. Negative sampling (for
// the costs that are sums of repulsions: LargeVis, UMAP, t-UMAP) follows
// its own stochastic gradient and uses the objective only to record the
// cost, which is then evaluated only every `epoch` epochs and at the end
// (epoch 0: only at the end; a spectral start can put a whole cluster on one
// spot, where even the approximate cost sums all its pairs).
#ifndef LSNN_LAYOUT_H
#define LSNN_LAYOUT_H

#include <stdexcept>
#include <type_traits>

#include "cost_models.h"
#include "costs.h"
#include "optimizer.h"
#include "sampled_sgd.h"
#include "sparse.h"

namespace lsnn {

enum class StepperKind { gradient_descent = 0, sampled = 1 };

struct LayoutSettings {
  StepperKind stepper = StepperKind::gradient_descent;
  DriverSettings driver;
  GradientDescentSettings descent;
  SampledSettings sampled;
};

// Optimises Y (n x d, column-major, in place) for `objective` (costs.h's
// CostEvaluator, or placement.h's for new points in a fixed embedding),
// whose affinities are P and whose cost is `params`.
template <typename Objective, typename Executor>
OptimizerResult optimize_layout(Objective& objective, const CostParams& params,
                                const SparseRows& P, double* Y, const LayoutSettings& s,
                                Executor& executor) {
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
        model, objective, P, s.sampled, s.driver.max_steps);
    return optimize(stepper, objective, Y, s.driver, executor);
  });
}

}  // namespace lsnn

#endif  // LSNN_LAYOUT_H
