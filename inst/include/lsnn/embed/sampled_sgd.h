// Stochastic gradient descent with negative sampling for the costs whose
// all-pairs part is a sum of repulsions (LargeVis, UMAP, t-UMAP): the
// optimisation of LargeVis (Tang et al. 2016) and UMAP (McInnes et al.
// 2018), in a form whose result does not depend on the number of threads.
//
// Why it exists beside the full gradient of costs.h: at tens of thousands of
// points the all-pairs repulsion of these costs outweighs the attraction of
// the sparse P so much that full gradient descent spreads the points into
// an almost uniform disc that keeps few of the graph's neighbours.
// Sampling a few repulsions per attraction, as LargeVis and UMAP do,
// weakens the repulsion in proportion, and it costs O(edges) per epoch.
//
// One epoch, for every point i at once (rows in parallel, each point writes
// only its own gradient, from the coordinates of the previous epoch):
//   - each stored edge (i, j) is due once every vmax / v_ij epochs (the
//     heaviest every epoch); a due edge adds the attraction of -log w_ij to
//     i's gradient and draws `negative_sample_rate` points k uniformly, each
//     adding gamma times the repulsion of -log(1 - w_ik); every pair's
//     contribution is clipped to [-clip, clip] per coordinate;
//   - the points move by an Adam step (Kingma and Ba 2015) of a learning
//     rate that falls linearly to 0 over the epochs.
// P is symmetric, so edge (j, i) pulls j in j's own row. With fixed points
// (objective.fixed() > 0: new points placed in an existing embedding) only
// the other points move, and their negative samples are fixed points.
//
// With a density term (density.h, densMAP), each epoch from the term's
// start adds the term's exact gradient at the coordinates of the previous
// epoch (prepared by the objective's phase step, DensityObjective), scaled as the samples scale the cost: an edge of weight
// v is due v / vmax of the epochs, so the samples follow on average
// 1 / (2 vmax) times the gradient of the cost (each edge is in two rows),
// and the term is added at that scale (each coordinate of a point's share
// clipped as a pair's).
//
// Determinism: the negative samples of point i in epoch t come from a
// generator seeded by hash64(seed, t, i) and are drawn in the order of i's
// row; no point's update reads another's within an epoch.
#ifndef LSNN_SAMPLED_SGD_H
#define LSNN_SAMPLED_SGD_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "adam.h"
#include "cost_models.h"
#include "density.h"
#include "optimizer.h"
#include "../base/parallel.h"
#include "../base/random.h"
#include "../base/sparse.h"

namespace lsnn {

struct SampledSettings {
  double learning_rate = 1.0;
  int negative_sample_rate = 5;
  // weight of each sampled repulsion
  double gamma = 1.0;
  double clip = 4.0;
  // Adam's moment decays; a short memory suits the falling learning rate
  double beta1 = 0.5;
  double beta2 = 0.9;
  double adam_eps = 1e-7;
  std::uint64_t seed = 0;
};

inline double clip_to(double x, double c) { return std::min(c, std::max(-c, x)); }

// The sampled stepper for the cost `Model` (cost_models.h, scalar), taken
// with gamma = 1: each sample is weighted by the settings' gamma instead.
// A pair's step is 2 c (y_i - y_j): the gradient of -log w (c the model's
// attraction) or of -log(1 - w) (c its repulsion). The objective gives the
// recorded costs.
template <typename Model, typename Objective>
class SampledStepper {
 public:
  static constexpr bool kEarlyStop = false;
  static constexpr const char* kStepName = "epoch";

  SampledStepper(const Model& model, Objective& objective, const SparseRows& P,
                 const SampledSettings& s, int n_epochs, DensityTerm* density = nullptr)
      : model_(model), objective_(objective), P_(P), s_(s), n_epochs_(n_epochs),
        density_(density),
        n_(P.n), d_(objective.d()), fixed_(objective.fixed()),
        adam_(n_, d_, fixed_, AdamSettings{s.beta1, s.beta2, s.adam_eps, AdamEps::corrected}) {
    if (n_ == 0 || d_ == 0) throw std::invalid_argument("the embedding needs points and dimensions");
    if (n_epochs < 0 || s.negative_sample_rate < 0 || !(s.learning_rate > 0.0) ||
        !(s.gamma >= 0.0) || !(s.clip > 0.0)) {
      throw std::invalid_argument("invalid settings for the sampled optimisation");
    }
    const std::size_t nnz = static_cast<std::size_t>(P.ptr[n_]);
    double vmax = 0.0;
    for (std::size_t e = 0; e < nnz; ++e) {
      if (!(P.val[e] >= 0.0) || !std::isfinite(P.val[e])) {
        throw std::invalid_argument("the affinities must be finite and non-negative");
      }
      vmax = std::max(vmax, P.val[e]);
    }
    vmax_ = vmax;
    // epochs between two samples of each edge, and the epoch of its next
    period_.assign(nnz, HUGE_VAL);
    next_.assign(nnz, HUGE_VAL);
    if (vmax > 0.0) {
      for (std::size_t e = 0; e < nnz; ++e) {
        if (P.val[e] > 0.0) period_[e] = next_[e] = vmax / P.val[e];
      }
    }
    const std::size_t nd = n_ * d_;
    grad_.assign(nd, 0.0);
    prev_.resize(nd);
  }

  std::string divergence_hint() const { return "lower 'eta'"; }

  template <typename Executor>
  double prepare(int, const double* Y, bool want_cost, Executor& executor) {
    if (!want_cost) return NAN;
    return objective_.evaluate(Y, true, grad_.data(), nullptr, executor);
  }

  template <typename Executor>
  void advance(int t, double* Y, Executor& executor) {
    const std::size_t n = n_, d = d_;
    // The previous epoch's coordinates, point by point (a negative sample
    // then touches one cache line, not d) and in single precision: the
    // random reads are what an epoch waits for once the coordinates outgrow
    // the cache (1e6 points: 16 MB in double), and the differences they give
    // are used only to a few digits (each pair's step is clipped).
    float* prev = prev_.data();
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            for (std::size_t c = 0; c < d; ++c) prev[i * d + c] = static_cast<float>(Y[c * n + i]);
          }
        },
        4096);
    const float* Yp = prev;
    const int m = s_.negative_sample_rate;
    const double clip = s_.clip, gamma = s_.gamma;
    // with fixed points, only they are drawn as negative samples
    const std::size_t pool = fixed_ > 0 ? fixed_ : n;
    double* grad = grad_.data();
    executor.parallel_for(
        fixed_, n,
        [&](std::size_t r0, std::size_t r1) {
          std::vector<double> gi(d), dy(d);
          for (std::size_t i = r0; i < r1; ++i) {
            std::fill(gi.begin(), gi.end(), 0.0);
            SplitMix64 rng(hash64(s_.seed, static_cast<std::uint64_t>(t), i));
            for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) {
              if (next_[e] > t) continue;
              next_[e] += period_[e];
              const std::size_t j = static_cast<std::size_t>(P_.col[e]);
              const double ca = 2.0 * model_.attraction(sqdist(Yp, i, j, dy.data()));
              for (std::size_t c = 0; c < d; ++c) gi[c] += clip_to(ca * dy[c], clip);
              for (int r = 0; r < m; ++r) {
                const std::size_t k = rng.below(pool);
                if (k == i) continue;
                const double cr = 2.0 * gamma * model_.repulsion(sqdist(Yp, i, k, dy.data()));
                for (std::size_t c = 0; c < d; ++c) gi[c] += clip_to(cr * dy[c], clip);
              }
            }
            for (std::size_t c = 0; c < d; ++c) grad[c * n + i] = gi[c];
          }
        },
        256);
    // (the objective's phase step has prepared the term at Y: see
    // density.h's DensityObjective)
    if (density_ != nullptr && density_->active(t) && vmax_ > 0.0) {
      density_->add_gradient(grad, 0.5 / vmax_, executor, clip);
    }
    const double lr = s_.learning_rate * (1.0 - static_cast<double>(t - 1) / n_epochs_);
    adam_.step(lr, grad_.data(), Y, executor);
  }

 private:
  // |y_i - y_j|^2 of the single-precision copy, the difference in dy
  double sqdist(const float* Yp, std::size_t i, std::size_t j, double* dy) const {
    double q = 0.0;
    for (std::size_t c = 0; c < d_; ++c) {
      dy[c] = static_cast<double>(Yp[i * d_ + c]) - Yp[j * d_ + c];
      q += dy[c] * dy[c];
    }
    return q;
  }

  Model model_;
  Objective& objective_;
  SparseRows P_;
  SampledSettings s_;
  int n_epochs_;
  DensityTerm* density_;
  double vmax_ = 0.0;
  std::size_t n_, d_, fixed_;
  std::vector<double> period_, next_, grad_;
  std::vector<float> prev_;
  Adam adam_;
};

}  // namespace lsnn

#endif  // LSNN_SAMPLED_SGD_H
