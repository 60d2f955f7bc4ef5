// New points placed in an embedding whose points stay where they are: the
// objective of neighbor_embedding_transform().
//
// The layout holds N = n_fixed + m points: the reference embedding first
// (fixed), then the new points (moving). P has a row for each new point,
// its affinities to reference points (columns < n_fixed); the reference's
// rows are empty. Each new point i has its own cost, under the model of
// the embedding's cost (cost_models.h), over the pairs (i, reference j):
//
//   tsne    KL(P_i || Q_i), q_ij = w_ij / Z_i, Z_i = sum_j w_ij (each new
//           point normalised over the reference alone);
//   others  sum_j [stored-affinity cost of p_ij] + sum_j [all-pairs cost].
//
// so dC/dy_i = 2 (A_i - S_i F_i / Z_i) for t-SNE (S_i = sum_j p_ij) and
// 2 (A_i + F_i) for the others, with A the attraction of P and F the
// all-pairs repulsion of the reference (ReferenceField, farfield/reference_field.h).
// New points do not act on each other, and the reference feels nothing.
// The gradient of the reference points is 0, and the steppers leave them
// (fixed()).
//
// Determinism: every new point's sums run over its own row of P and over
// the reference in a fixed order; nothing depends on the threads.
#ifndef LSNN_PLACEMENT_H
#define LSNN_PLACEMENT_H

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "costs.h"
#include "../farfield/reference_field.h"
#include "../base/parallel.h"
#include "../base/sparse.h"

namespace lsnn {

class PlacementObjective {
 public:
  // Y0: the N x d starting layout (column-major), whose first n_fixed rows
  // are the reference; P: N rows as above.
  template <typename Executor>
  PlacementObjective(const CostKernels& kernels, const CostSettings& settings,
                     const SparseRows& P, std::size_t n_fixed, std::size_t d, const double* Y0,
                     Executor& executor)
      : settings_(settings), P_(P), n_(P.n), fixed_(n_fixed), d_(d),
        field_(settings.params, reference_of(Y0, P.n, n_fixed, d).data(), n_fixed, d,
               settings.gradient == GradientKind::approx, evaluation_grid(settings, false), &kernels,
               executor) {
    if (n_fixed == 0 || n_fixed > n_) throw std::invalid_argument("no reference points to place against");
    for (std::size_t i = 0; i < n_; ++i) {
      for (int e = P.ptr[i]; e < P.ptr[i + 1]; ++e) {
        const double p = P.val[e];
        if (i < n_fixed || P.col[e] < 0 || static_cast<std::size_t>(P.col[e]) >= n_fixed ||
            !(p >= 0.0) || !std::isfinite(p)) {
          throw std::invalid_argument(
              "the new points' affinities must be finite, non-negative and to reference points");
        }
      }
    }
  }

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  // points [0, fixed()) do not move
  std::size_t fixed() const { return fixed_; }
  void set_exaggeration(double factor) { p_scale_ = factor; }

  // Cost and gradient at Y (N x d, column-major; the reference rows as at
  // construction). grad is N x d (0 on the reference); pcost, when not
  // null, gets each point's cost (0 on the reference).
  template <typename Executor>
  double evaluate(const double* Y, bool want_cost, double* grad, double* pcost,
                  Executor& executor) {
    const std::size_t n = n_, d = d_, fixed = fixed_;
    for (std::size_t c = 0; c < d; ++c) std::fill(grad + c * n, grad + c * n + fixed, 0.0);
    point_cost_.assign(n, 0.0);
    const bool tsne = normalised(settings_.params.method);
    const double p_scale = p_scale_;
    with_cost_model<ScalarMath>(settings_.params, [&](const auto& model) {
      executor.parallel_for(
          fixed, n,
          [&](std::size_t b, std::size_t e) {
            std::vector<double> x(d), F(d), A(d), dy(d);
            for (std::size_t i = b; i < e; ++i) {
              for (std::size_t c = 0; c < d; ++c) x[c] = Y[c * n + i];
              double E = 0.0;
              field_.at(x.data(), tsne || want_cost, F.data(), E);
              std::fill(A.begin(), A.end(), 0.0);
              double sparse_cost = 0.0, row_sum = 0.0;
              for (int t = P_.ptr[i]; t < P_.ptr[i + 1]; ++t) {
                const std::size_t j = static_cast<std::size_t>(P_.col[t]);
                const double p = P_.val[t];
                if (!(p > 0.0)) continue;
                double s = 0.0;
                for (std::size_t c = 0; c < d; ++c) {
                  dy[c] = x[c] - Y[c * n + j];
                  s += dy[c] * dy[c];
                }
                const double coef = model.sparse_coefficient(s, p * p_scale);
                for (std::size_t c = 0; c < d; ++c) A[c] += coef * dy[c];
                if (want_cost) sparse_cost += model.sparse_cost(s, p);
                row_sum += p;
              }
              const double rep = tsne ? (E > 0.0 ? row_sum / E : 0.0) : -1.0;
              for (std::size_t c = 0; c < d; ++c) grad[c * n + i] = 2.0 * (A[c] - rep * F[c]);
              if (want_cost) {
                point_cost_[i] = tsne ? sparse_cost + (row_sum > 0.0 ? row_sum * std::log(E) : 0.0)
                                      : sparse_cost + E;
              }
            }
          },
          64);
    });
    checkpoint(executor);
    if (!want_cost) return NAN;
    double cost = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (pcost != nullptr) pcost[i] = point_cost_[i];
      cost += point_cost_[i];
    }
    return cost;
  }

 private:
  // The reference rows of Y0 as an n_fixed x d column-major matrix.
  static std::vector<double> reference_of(const double* Y0, std::size_t n, std::size_t n_fixed,
                                          std::size_t d) {
    std::vector<double> R(n_fixed * d);
    for (std::size_t c = 0; c < d; ++c) {
      std::copy(Y0 + c * n, Y0 + c * n + n_fixed, R.begin() + c * n_fixed);
    }
    return R;
  }

  CostSettings settings_;
  SparseRows P_;
  std::size_t n_, fixed_, d_;
  double p_scale_ = 1.0;
  ReferenceField field_;
  std::vector<double> point_cost_;
};

}  // namespace lsnn

#endif  // LSNN_PLACEMENT_H
