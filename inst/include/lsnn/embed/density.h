// The density term of densMAP and den-SNE (Narayan, Berger and Cho, Nature
// Biotechnology 2021): a cost that keeps each point's local radius.
//
// Over the stored entries of the symmetric affinities P (the graph's edges,
// the diagonal left out), point i's radius
//   in the data:   R_i = sum_j p_ij x_ij / sum_j p_ij,  x_ij = |x_i - x_j|^2;
//   in the layout: S_i = sum_j w_ij q_ij / sum_j w_ij,  q_ij = |y_i - y_j|^2,
//                  w = 1 / (1 + a q^b) (t-SNE and t-UMAP: a = b = 1; the
//                  normalisation of t-SNE's q cancels in the ratio),
// and its log radii ro_i = log(eps + R_i), re_i = log(eps + S_i), eps = 1e-8
// (umap-learn's; a point without entries has the radius 0). With z the
// standardised ro (mean 0, variance 1, both over n), m and V the mean and
// variance of re (over n) and s = sqrt(V + var_shift),
//   corr = (1/n) sum_i z_i (re_i - m) / s,
// Pearson's correlation of the log radii when var_shift = 0; var_shift keeps
// it finite for a layout whose radii are all alike (umap-learn's shift of
// the variance). The term added to the method's cost is
//   -lambda * W * corr,
// weighed against the method's cost as the reference implementations weigh
// it, so that lambda means what it means there. UMAP and t-UMAP: W = twice
// the sum of P's stored entries. umap-learn's densMAP samples each stored
// entry (i, j) and moves both ends, so on average its steps follow
// A - lambda * sum(P) * corr, A the cross-entropy counting each edge once;
// lsnn's cross-entropy counts each edge from both ends (2 A), so its term
// is doubled too. t-SNE: W = 2 (densvis' den-SNE: its steps
// take the gradient of KL over 4 and of the correlation over 2, P summing
// to 1).
//
// Gradient: with D_i = sum_j w_ij and w' = dw/dq = -a b q^(b-1) w^2,
//   d re_i / d q_ij = (w_ij + w'_ij (q_ij - S_i)) / (D_i (eps + S_i)),
//   d corr / d re_i = g_i = (z_i - C (re_i - m) / s^2) / (n s),  C = s corr,
// and q_ij enters re_i (row i) and re_j (row j, P symmetric), so
//   d corr / d y_i = sum_j 2 (y_i - y_j) (g_i dre_i/dq_ij + g_j dre_j/dq_ji),
// a sum over row i alone. Work: O(edges) per iteration, in three passes
// over the points: the layout radii (rows in parallel) and the global sums
// (mean, variance, covariance: partial sums over fixed blocks of points,
// added in block order), which are the driver's phase step of each
// iteration (prepare()), then each point's gradient from its own row
// (add_gradient()). No sum depends on the number of threads.
//
// The passes read every edge's partner at random: on large layouts they wait
// on memory, not on arithmetic. prepare() therefore keeps, point by point,
// the coordinates with the point's c_i and S_i beside them (one cache line
// a partner, where the column-major layout and separate arrays take one per
// dimension and per quantity), and each edge's w and w' for the gradient
// pass, which then computes no power.
#ifndef LSNN_DENSITY_H
#define LSNN_DENSITY_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "cost_models.h"
#include "../base/parallel.h"
#include "../base/sparse.h"

namespace lsnn {

// the shift inside the logarithm of every radius (umap-learn's)
constexpr double kRadiusShift = 1e-8;

struct DensitySettings {
  double lambda = 0.0;
  double var_shift = 0.1;
  // the first step (from 1) with the term
  int start = 1;
  // the data's log radii, one per point (empty: no term)
  std::vector<double> data_log_radii;
  bool on() const { return !data_log_radii.empty(); }
};

// The squared data distances of P's stored entries (out, aligned with P's
// entries; NaN where the graph has no distance for the pair) from a kNN
// graph: idx (1-based) and dist, n x k column-major, row i listing i's
// neighbours. An entry (i, j) takes the graph's distance from i to j, or
// else from j to i. P's rows must be sorted by column.
template <typename Executor>
void edge_sq_distances(const SparseRows& P, const int* idx, const double* dist, std::size_t k,
                       double* out, Executor& executor) {
  const std::size_t n = P.n;
  const std::size_t nnz = static_cast<std::size_t>(P.ptr[n]);
  std::fill(out, out + nnz, std::numeric_limits<double>::quiet_NaN());
  // the position of column j in P's row i, or -1
  auto find = [&](std::size_t i, int j) -> long long {
    const int* b = P.col + P.ptr[i];
    const int* e = P.col + P.ptr[i + 1];
    const int* at = std::lower_bound(b, e, j);
    return at != e && *at == j ? static_cast<long long>(at - P.col) : -1;
  };
  // each row's own neighbours: every point writes only its own row
  executor.parallel_for(
      0, n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          for (std::size_t c = 0; c < k; ++c) {
            const int j = idx[c * n + i] - 1;
            if (j < 0 || static_cast<std::size_t>(j) >= n || static_cast<std::size_t>(j) == i) continue;
            const long long at = find(i, j);
            if (at >= 0) out[at] = dist[c * n + i] * dist[c * n + i];
          }
        }
      },
      1024);
  // the entries only the other end lists: entry (i, j) is written by row j
  // alone (a row lists a neighbour once), so writes never meet
  executor.parallel_for(
      0, n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t j = b; j < e; ++j) {
          for (std::size_t c = 0; c < k; ++c) {
            const int i = idx[c * n + j] - 1;
            if (i < 0 || static_cast<std::size_t>(i) >= n || static_cast<std::size_t>(i) == j) continue;
            const long long at = find(static_cast<std::size_t>(i), static_cast<int>(j));
            if (at >= 0 && std::isnan(out[at])) out[at] = dist[c * n + j] * dist[c * n + j];
          }
        }
      },
      1024);
}

// The log radii of the data (above): ro_i from P's values and the squared
// distances of its entries (sq, aligned with P's entries).
template <typename Executor>
void data_log_radii(const SparseRows& P, const double* sq, double* out, Executor& executor) {
  executor.parallel_for(
      0, P.n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          double num = 0.0, den = 0.0;
          for (int t = P.ptr[i]; t < P.ptr[i + 1]; ++t) {
            if (static_cast<std::size_t>(P.col[t]) == i) continue;
            num += P.val[t] * sq[t];
            den += P.val[t];
          }
          out[i] = std::log(kRadiusShift + (den > 0.0 ? num / den : 0.0));
        }
      },
      1024);
}

// The density term over P's pattern (copied: the objective may rewrite P's
// arrays) for layouts of d dimensions under the cost `params` (UMAP's
// kernel w = 1 / (1 + a q^b), t-SNE's 1 / (1 + q)).
class DensityTerm {
 public:
  DensityTerm(const SparseRows& P, const DensitySettings& s, const CostParams& params,
              std::size_t d)
      : s_(s), n_(P.n), d_(d) {
    const bool tsne = normalised(params.method);
    if (!tsne && params.method != CostMethod::umap) {
      throw std::invalid_argument("the density term is for t-SNE, UMAP and t-UMAP");
    }
    a_ = tsne ? 1.0 : params.a;
    b_ = tsne ? 1.0 : params.b;
    if (s.data_log_radii.size() != n_) {
      throw std::invalid_argument("the data's radii must be one per point");
    }
    if (!(s.lambda >= 0.0) || !(s.var_shift >= 0.0) || !(a_ > 0.0) || !(b_ > 0.0)) {
      throw std::invalid_argument("invalid settings of the density term");
    }
    col_.reserve(static_cast<std::size_t>(P.ptr[n_]));
    // the diagonal is left out here once, and W summed in entry order
    std::vector<int> ptr(n_ + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) {
      for (int t = P.ptr[i]; t < P.ptr[i + 1]; ++t) {
        if (static_cast<std::size_t>(P.col[t]) == i) continue;
        col_.push_back(P.col[t]);
        weight_ += P.val[t];
      }
      ptr[i + 1] = static_cast<int>(col_.size());
    }
    ptr_.swap(ptr);
    weight_ = tsne ? 2.0 : 2.0 * weight_;
    // z: the data's log radii standardised (over n)
    const std::vector<double>& ro = s.data_log_radii;
    double mean = 0.0;
    for (double r : ro) mean += r;
    mean /= static_cast<double>(n_);
    double var = 0.0;
    for (double r : ro) var += (r - mean) * (r - mean);
    var /= static_cast<double>(n_);
    const double sd = std::sqrt(var);
    z_.assign(n_, 0.0);
    if (sd > 0.0 && std::isfinite(sd)) {
      for (std::size_t i = 0; i < n_; ++i) z_[i] = (ro[i] - mean) / sd;
    }
    D_.assign(n_, 0.0);
    re_.assign(n_, 0.0);
  }

  // Whether step `iter` (from 1) takes the term: lambda = 0 never does.
  bool active(int iter) const { return s_.lambda > 0.0 && iter >= s_.start; }
  double lambda() const { return s_.lambda; }
  double weight() const { return weight_; }
  // the correlation of the last evaluation
  double correlation() const { return corr_; }

  // The layout's log radii re at Y (n x d, column-major) into `out`.
  template <typename Executor>
  void layout_log_radii(const double* Y, double* out, Executor& executor) {
    copy_by_point(Y, executor);
    radii(executor);
    std::copy(re_.begin(), re_.end(), out);
  }

  // The phase step of an iteration (the driver's, through
  // DensityObjective::begin_iteration()): the layout's radii at Y, then the
  // global sums (mean, variance, covariance) over fixed blocks of points,
  // and what each point's own radius contributes to the gradient. The
  // gradient and the value below are those of the Y prepared last.
  template <typename Executor>
  void prepare(const double* Y, Executor& executor) {
    copy_by_point(Y, executor);
    radii(executor);
    const double nn = static_cast<double>(n_);
    const double m = block_sum(executor, [&](std::size_t i) { return re_[i]; }) / nn;
    const double V =
        block_sum(executor, [&](std::size_t i) { return (re_[i] - m) * (re_[i] - m); }) / nn;
    const double C = block_sum(executor, [&](std::size_t i) { return z_[i] * (re_[i] - m); }) / nn;
    const double sd = std::sqrt(V + s_.var_shift);
    if (!(sd > 0.0)) {
      // every radius alike and no shift: the correlation is not defined,
      // and the term is left out
      corr_ = 0.0;
      for (std::size_t i = 0; i < n_; ++i) point_[i * (d_ + 2) + d_] = 0.0;
      return;
    }
    corr_ = C / sd;
    // c_i = g_i / (D_i (eps + S_i)), g_i = d corr / d re_i, beside S_i
    const std::size_t d = d_, stride = d + 2;
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            double* terms = point_.data() + i * stride + d;
            const double g = (z_[i] - C * (re_[i] - m) / (sd * sd)) / (nn * sd);
            terms[0] = D_[i] > 0.0 ? g / (D_[i] * (kRadiusShift + terms[1])) : 0.0;
          }
        },
        4096);
  }

  // The term's value at the prepared Y: -lambda W corr.
  double value() const { return -s_.lambda * weight_ * corr_; }

  // Adds `scale` times the term's gradient at the prepared coordinates to
  // grad (n x d, column-major), each coordinate of each edge's part clipped
  // to +-clip, as the sampled steps clip each sample (umap-learn clips each
  // edge's part too; a clip of the point's sum instead held the term back,
  // bench/CHANGELOG.md); each point from its own row. The gradient is that at
  // the Y given to prepare() (the only one the steppers evaluate), which
  // this pass reads in prepare()'s copy.
  template <typename Executor>
  void add_gradient(double* grad, double scale, Executor& executor,
                    double clip = HUGE_VAL) const {
    const double factor = -s_.lambda * weight_ * scale;
    const std::size_t n = n_, d = d_;
    const std::size_t stride = d + 2;
    const double* pt = point_.data();
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          std::vector<double> acc(d), dy(d);
          for (std::size_t i = b; i < e; ++i) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int t = ptr_[i]; t < ptr_[i + 1]; ++t) {
              const std::size_t j = static_cast<std::size_t>(col_[t]);
              double q = 0.0;
              for (std::size_t c = 0; c < d; ++c) {
                dy[c] = pt[i * stride + c] - pt[j * stride + c];
                q += dy[c] * dy[c];
              }
              const double w = w_[t], wp = wp_[t];
              const double* pi = pt + i * stride + d;
              const double* pj = pt + j * stride + d;
              const double coef = pi[0] * (w + wp * (q - pi[1])) + pj[0] * (w + wp * (q - pj[1]));
              for (std::size_t c = 0; c < d; ++c) {
                const double v = factor * 2.0 * coef * dy[c];
                acc[c] += std::min(clip, std::max(-clip, v));
              }
            }
            for (std::size_t c = 0; c < d; ++c) grad[c * n + i] += acc[c];
          }
        },
        256);
  }

  // prepare(), add_gradient() and value() at once (cost_gradient()).
  template <typename Executor>
  double add(const double* Y, double* grad, double scale, Executor& executor) {
    prepare(Y, executor);
    add_gradient(grad, scale, executor);
    return value();
  }

 private:
  // w = 1 / (1 + a q^b) and w' = dw/dq; w' is taken as 0 at q = 0, where
  // it multiplies a difference of coordinates that is 0 too (for b < 1 it
  // is infinite there, and its product with the difference tends to 0)
  void kernel(double q, double* w, double* wp) const {
    if (b_ == 1.0) {
      *w = 1.0 / (1.0 + a_ * q);
      *wp = -a_ * *w * *w;
      return;
    }
    const double qb = q > 0.0 ? std::pow(q, b_) : 0.0;
    *w = 1.0 / (1.0 + a_ * qb);
    *wp = q > 0.0 ? -a_ * b_ * (qb / q) * *w * *w : 0.0;
  }

  // point_'s coordinates: Y (n x d, column-major) point by point, d + 2
  // numbers a point (S_i follows, from radii(), then c_i, from prepare())
  template <typename Executor>
  void copy_by_point(const double* Y, Executor& executor) {
    const std::size_t n = n_, d = d_, stride = d + 2;
    point_.resize(n * stride);
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            for (std::size_t c = 0; c < d; ++c) point_[i * stride + c] = Y[c * n + i];
          }
        },
        4096);
  }

  // S_i, D_i and re_i at point_'s coordinates, and each edge's w and w',
  // each point from its own row
  template <typename Executor>
  void radii(Executor& executor) {
    const std::size_t d = d_, stride = d + 2;
    double* pt = point_.data();
    w_.resize(col_.size());
    wp_.resize(col_.size());
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            double num = 0.0, den = 0.0;
            for (int t = ptr_[i]; t < ptr_[i + 1]; ++t) {
              const std::size_t j = static_cast<std::size_t>(col_[t]);
              double q = 0.0;
              for (std::size_t c = 0; c < d; ++c) {
                const double dy = pt[i * stride + c] - pt[j * stride + c];
                q += dy * dy;
              }
              double w, wp;
              kernel(q, &w, &wp);
              w_[t] = w;
              wp_[t] = wp;
              num += w * q;
              den += w;
            }
            D_[i] = den;
            const double S = den > 0.0 ? num / den : 0.0;
            pt[i * stride + d + 1] = S;
            re_[i] = std::log(kRadiusShift + S);
          }
        },
        256);
  }

  // sum_i f(i) over the points: partial sums over blocks of a fixed size,
  // added in block order
  template <typename Executor, typename F>
  double block_sum(Executor& executor, F f) const {
    constexpr std::size_t kBlock = 4096;
    const std::size_t nb = (n_ + kBlock - 1) / kBlock;
    std::vector<double> part(nb, 0.0);
    executor.parallel_for(
        0, nb,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t k = b; k < e; ++k) {
            double acc = 0.0;
            const std::size_t hi = std::min(n_, (k + 1) * kBlock);
            for (std::size_t i = k * kBlock; i < hi; ++i) acc += f(i);
            part[k] = acc;
          }
        },
        1);
    double total = 0.0;
    for (double p : part) total += p;
    return total;
  }

  DensitySettings s_;
  double a_ = 1.0, b_ = 1.0;
  std::size_t n_, d_;
  double weight_ = 0.0;
  double corr_ = 0.0;
  std::vector<int> ptr_, col_;
  std::vector<double> z_, D_, re_;
  // the coordinates point by point with c_i and S_i, and each edge's w and
  // w', at the Y prepared last
  std::vector<double> point_, w_, wp_;
};

// An objective with the density term added from the step the term starts
// at. The driver calls begin_iteration() with each step's coordinates before
// the step is prepared, and once more with the final coordinates before
// their cost (optimizer.h's has_iteration_hook): the term's phase step runs
// there, and every evaluation until the next call reads it (the steppers
// evaluate only the coordinates of their step).
template <typename Objective>
class DensityObjective {
 public:
  DensityObjective(Objective& inner, DensityTerm& term) : inner_(inner), term_(term) {}

  std::size_t n() const { return inner_.n(); }
  std::size_t d() const { return inner_.d(); }
  std::size_t fixed() const { return inner_.fixed(); }
  void set_exaggeration(double e) { inner_.set_exaggeration(e); }

  template <typename Executor>
  void begin_iteration(int iter, const double* Y, Executor& executor) {
    on_ = term_.active(iter);
    if (on_) term_.prepare(Y, executor);
  }
  // whether the term is on in this step (and prepared at its coordinates)
  bool on() const { return on_; }

  template <typename Executor>
  double evaluate(const double* Y, bool want_cost, double* grad, double* pcost,
                  Executor& executor) {
    const double cost = inner_.evaluate(Y, want_cost, grad, pcost, executor);
    if (!on_) return cost;
    term_.add_gradient(grad, 1.0, executor);
    return want_cost ? cost + term_.value() : cost;
  }

 private:
  Objective& inner_;
  DensityTerm& term_;
  bool on_ = false;
};

}  // namespace lsnn

#endif  // LSNN_DENSITY_H
