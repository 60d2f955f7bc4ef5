// Stochastic gradient descent with negative sampling for the costs whose
// all-pairs part is a sum of repulsions (LargeVis, UMAP, t-UMAP): the
// optimisation of LargeVis (Tang et al. 2016) and UMAP (McInnes et al.
// 2018), in a form whose result does not depend on the number of threads.
//
// Why it exists beside the full gradient of costs.h: at tens of thousands of
// points the all-pairs repulsion of these costs outweighs the attraction of
// the sparse P so much that full gradient descent spreads the points into
// an almost uniform disc (70,000 Fashion-MNIST images, UMAP: 15-NN
// preservation 0.14 against uwot's 0.17 on the same graph, bench/README.md).
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
// P is symmetric, so edge (j, i) pulls j in j's own row.
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
#include <vector>

#include "cost_kernels.h"
#include "fft_repulsion.h"
#include "optimizer.h"
#include "parallel.h"
#include "random.h"
#include "sparse.h"

namespace lsnn {

struct SampledSettings {
  int n_epochs = 500;
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
  // the cost is recorded every `epoch` epochs from the start (0: at the
  // end only)
  int epoch = 50;
};

// The coefficients c of a pair's gradient c * (y_i - y_j) for the costs'
// attractive term -log w and repulsive term -log(1 - w), s the squared
// distance. The repulsion is the all-pairs kernel of the full gradient
// (`pair`, with gamma = 1: the sampled weight is applied per sample).
struct SampledKernel {
  RadialKernel pair;

  double attract(double s) const {
    const double alpha = pair.alpha, a = pair.a, b = pair.b;
    switch (pair.method) {
      case CostMethod::largevis:
        return 2.0 * alpha / (1.0 + alpha * s);
      case CostMethod::largevis_exp:
        return 2.0 / (1.0 + std::exp(-s));
      case CostMethod::umap:
      default: {
        if (b == 1.0) return 2.0 * a / (1.0 + a * s);
        // s^(b - 1) is unbounded at 0 for b < 1: coincident points do not pull
        if (!(s > 0.0)) return 0.0;
        const double sb = std::pow(s, b);
        return 2.0 * a * b * (sb / s) / (1.0 + a * sb);
      }
    }
  }
  // d/dy_i of -log(1 - w) is 2 force(s) (y_i - y_j)
  double repel(double s) const { return 2.0 * pair.force(s); }
};

inline double clip_to(double x, double c) { return std::min(c, std::max(-c, x)); }

// Y: n x d column-major, updated in place. `cost(Y)` returns the cost of
// coordinates Y (recorded only, as the run has no early stop: the
// learning rate decides the end).
template <typename Executor, typename CostFn>
OptimizerResult optimize_sampled(const SparseRows& P, double* Y, std::size_t d,
                                 const SampledKernel& kernel, const SampledSettings& s,
                                 CostFn&& cost, Executor& executor) {
  const std::size_t n = P.n, nd = n * d;
  if (n == 0 || d == 0) throw std::invalid_argument("the embedding needs points and dimensions");
  if (s.n_epochs < 0 || s.negative_sample_rate < 0 || !(s.learning_rate > 0.0) ||
      !(s.gamma >= 0.0) || !(s.clip > 0.0)) {
    throw std::invalid_argument("invalid settings for the sampled optimisation");
  }
  if (!all_finite(Y, nd)) throw std::invalid_argument("the initial coordinates are not all finite");
  const std::size_t nnz = static_cast<std::size_t>(P.ptr[n]);
  double vmax = 0.0;
  for (std::size_t e = 0; e < nnz; ++e) {
    if (!(P.val[e] >= 0.0) || !std::isfinite(P.val[e])) {
      throw std::invalid_argument("the affinities must be finite and non-negative");
    }
    vmax = std::max(vmax, P.val[e]);
  }
  // epochs between two samples of each edge, and the epoch of its next
  std::vector<double> period(nnz, HUGE_VAL), next(nnz, HUGE_VAL);
  if (vmax > 0.0) {
    for (std::size_t e = 0; e < nnz; ++e) {
      if (P.val[e] > 0.0) period[e] = next[e] = vmax / P.val[e];
    }
  }
  std::vector<double> grad(nd, 0.0), m1(nd, 0.0), m2(nd, 0.0);
  // The previous epoch's coordinates, point by point (a negative sample then
  // touches one cache line, not d) and in single precision: the random
  // reads are what an epoch waits for once the coordinates outgrow the
  // cache (1e6 points: 16 MB in double), and the differences they give are
  // used only to a few digits (each pair's step is clipped).
  std::vector<float> prev(nd);

  OptimizerResult res;
  CostHistory<Executor> history(executor, static_cast<std::size_t>(s.n_epochs), "epoch");
  auto record = [&](int epoch) {
    const double c = cost(Y);
    if (std::isnan(c)) throw_diverged(epoch);
    history.record(res, epoch, c);
  };
  // The start's cost only on request: a spectral start can put whole
  // clusters on a point, where the near field of the approximate cost sums
  // every pair of a cluster (183 s of a 1e6-point run).
  if (s.epoch > 0) record(0);

  const int m = s.negative_sample_rate;
  const double clip = s.clip, gamma = s.gamma;
  double b1t = 1.0, b2t = 1.0;
  for (int t = 1; t <= s.n_epochs; ++t) {
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            for (std::size_t c = 0; c < d; ++c) {
              prev[i * d + c] = static_cast<float>(Y[c * n + i]);
            }
          }
        },
        4096);
    const float* Yp = prev.data();
    executor.parallel_for(
        0, n,
        [&](std::size_t r0, std::size_t r1) {
          std::vector<double> gi(d), dy(d);
          for (std::size_t i = r0; i < r1; ++i) {
            std::fill(gi.begin(), gi.end(), 0.0);
            SplitMix64 rng(hash64(s.seed, static_cast<std::uint64_t>(t), i));
            for (int e = P.ptr[i]; e < P.ptr[i + 1]; ++e) {
              if (next[e] > t) continue;
              next[e] += period[e];
              const std::size_t j = static_cast<std::size_t>(P.col[e]);
              double q = 0.0;
              for (std::size_t c = 0; c < d; ++c) {
                dy[c] = static_cast<double>(Yp[i * d + c]) - Yp[j * d + c];
                q += dy[c] * dy[c];
              }
              const double ca = kernel.attract(q);
              for (std::size_t c = 0; c < d; ++c) gi[c] += clip_to(ca * dy[c], clip);
              for (int r = 0; r < m; ++r) {
                const std::size_t k = rng.below(n);
                if (k == i) continue;
                double qk = 0.0;
                for (std::size_t c = 0; c < d; ++c) {
                  dy[c] = static_cast<double>(Yp[i * d + c]) - Yp[k * d + c];
                  qk += dy[c] * dy[c];
                }
                const double cr = gamma * kernel.repel(qk);
                for (std::size_t c = 0; c < d; ++c) gi[c] += clip_to(cr * dy[c], clip);
              }
            }
            for (std::size_t c = 0; c < d; ++c) grad[c * n + i] = gi[c];
          }
        },
        256);
    b1t *= s.beta1;
    b2t *= s.beta2;
    const double lr = s.learning_rate * (1.0 - static_cast<double>(t - 1) / s.n_epochs);
    const double c1 = 1.0 / (1.0 - b1t), c2 = 1.0 / (1.0 - b2t);
    executor.parallel_for(
        0, nd,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t x = b; x < e; ++x) {
            const double g = grad[x];
            m1[x] = s.beta1 * m1[x] + (1.0 - s.beta1) * g;
            m2[x] = s.beta2 * m2[x] + (1.0 - s.beta2) * g * g;
            Y[x] -= lr * (m1[x] * c1) / (std::sqrt(m2[x] * c2) + s.adam_eps);
          }
        },
        4096);
    if (!all_finite(Y, nd)) throw_diverged(t);
    res.iterations = t;
    if (s.epoch > 0 && t % s.epoch == 0 && t < s.n_epochs) record(t);
    history.set(static_cast<std::size_t>(t));
  }
  if (res.cost_iter.empty() || res.cost_iter.back() != res.iterations) {
    record(res.iterations);
  }
  history.finish(res);
  return res;
}

}  // namespace lsnn

#endif  // LSNN_SAMPLED_SGD_H
