// Adam (Kingma and Ba 2015): the update of the sampled stepper of
// sampled_sgd.h and of the full-gradient stepper below, which PaCMAP and
// LocalMAP (pacmap.h) take.
//
//   m <- beta1 m + (1 - beta1) g;  v <- beta2 v + (1 - beta2) g^2;
//   Y <- Y - lr m_hat / (sqrt(v_hat) + eps)         (AdamEps::corrected)
//   Y <- Y - lr_t m / (sqrt(v) + eps),              (AdamEps::raw)
//        lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)
//
// with m_hat, v_hat the bias-corrected moments. The two forms differ only
// in the scale of eps; the raw one is PaCMAP's. Points [0, fixed) never
// move (new points placed in an existing embedding). The update is element
// by element, so it does not depend on the number of threads.
#ifndef LSNN_ADAM_H
#define LSNN_ADAM_H

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "optimizer.h"

namespace lsnn {

enum class AdamEps { corrected = 0, raw = 1 };

struct AdamSettings {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-7;
  AdamEps eps_form = AdamEps::corrected;
};

// The moments of n x d coordinates (column-major) and their update.
class Adam {
 public:
  Adam(std::size_t n, std::size_t d, std::size_t fixed, const AdamSettings& s)
      : n_(n), d_(d), fixed_(fixed), s_(s), m1_(n * d, 0.0), m2_(n * d, 0.0) {}

  // Step t (from 1) of learning rate lr along the gradient `grad`.
  template <typename Executor>
  void step(double lr, const double* grad, double* Y, Executor& executor) {
    b1t_ *= s_.beta1;
    b2t_ *= s_.beta2;
    // both forms as rate (m c1) / (sqrt(v v_scale) + eps)
    const double c1 = 1.0 / (1.0 - b1t_), c2 = 1.0 / (1.0 - b2t_);
    const bool raw = s_.eps_form == AdamEps::raw;
    const double v_scale = raw ? 1.0 : c2;
    const double rate = raw ? lr * std::sqrt(1.0 - b2t_) : lr;
    const double beta1 = s_.beta1, beta2 = s_.beta2, eps = s_.eps;
    double* m1 = m1_.data();
    double* m2 = m2_.data();
    const std::size_t n = n_, d = d_;
    executor.parallel_for(
        fixed_, n_,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d; ++c) {
            for (std::size_t x = c * n + b; x < c * n + e; ++x) {
              const double g = grad[x];
              m1[x] = beta1 * m1[x] + (1.0 - beta1) * g;
              m2[x] = beta2 * m2[x] + (1.0 - beta2) * g * g;
              Y[x] -= rate * (m1[x] * c1) / (std::sqrt(m2[x] * v_scale) + eps);
            }
          }
        },
        4096);
  }

 private:
  std::size_t n_, d_, fixed_;
  AdamSettings s_;
  std::vector<double> m1_, m2_;
  double b1t_ = 1.0, b2t_ = 1.0;
};

struct AdamStepperSettings {
  double learning_rate = 1.0;
  AdamSettings adam{0.9, 0.999, 1e-7, AdamEps::raw};
};

// Full-gradient Adam at a constant learning rate for the driver of
// optimizer.h. Before each step it calls the objective's phase hook,
// objective.begin_step(iter, Y, executor), which may change the objective
// (PaCMAP's weights, LocalMAP's pairs); the run then has a fixed number of
// steps (no early stop: the objective changes along the way).
template <typename Objective>
class AdamStepper {
 public:
  static constexpr bool kEarlyStop = false;
  static constexpr const char* kStepName = "iteration";

  AdamStepper(Objective& objective, const AdamStepperSettings& s)
      : objective_(objective),
        lr_(s.learning_rate),
        grad_(objective.n() * objective.d(), 0.0),
        adam_(objective.n(), objective.d(), objective.fixed(), s.adam) {}

  std::string divergence_hint() const { return "lower 'eta'"; }

  template <typename Executor>
  double prepare(int iter, const double* Y, bool want_cost, Executor& executor) {
    objective_.begin_step(iter, Y, executor);
    return objective_.evaluate(Y, want_cost, grad_.data(), nullptr, executor);
  }

  template <typename Executor>
  void advance(int, double* Y, Executor& executor) {
    adam_.step(lr_, grad_.data(), Y, executor);
  }

 private:
  Objective& objective_;
  double lr_;
  std::vector<double> grad_;
  Adam adam_;
};

}  // namespace lsnn

#endif  // LSNN_ADAM_H
