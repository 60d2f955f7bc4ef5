// Exact principal components of a dense matrix.
//
// The rows are centred on the column means and the d x d covariance of the
// centred rows is accumulated in double precision; its top k eigenvectors
// (Eigen's SelfAdjointEigenSolver) are the rotation, and the scores are the
// centred rows times the rotation. One product of the data with itself and
// one with the rotation, both cache-blocked (pca_kernels.h: Eigen's product,
// with AVX2 + FMA where the CPU has them), so the cost
// is n d^2 + 2 n d k flops plus O(d^3) for the eigenvectors: cheaper than
// Lanczos iterations over the whole data as soon as d is moderate, and exact.
// With d large the d x d matrix and its O(d^3) solve dominate; the caller
// picks another method then (R/pca.R documents the rule).
//
// Results do not depend on the number of threads: the column means are
// summed one column per task; the covariance is accumulated over fixed
// batches of rows, in batch order, with each task owning a fixed panel of
// its columns; every score is written by the task of its row block.
//
// Without centring (`centre` false) the same steps run with a centre of
// zeros: the "covariance" is then the rows' second moments X'X / (n - 1),
// its eigenvectors are the right singular vectors of X, and the result is
// the truncated SVD of the rows as they are (what keeps their dot products
// best, as for sparse counts whose zeros mean absence).
//
// Sign: each component is oriented so that its largest score in absolute
// value (the first such row on a tie) is positive.
#ifndef LSNN_PCA_H
#define LSNN_PCA_H

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "../base/parallel.h"
#include "pca_kernels.h"

namespace lsnn {

struct PcaResult {
  Eigen::VectorXd center;    // d column means (zeros without centring)
  Eigen::MatrixXd rotation;  // d x k, orthonormal columns, by decreasing variance
  Eigen::MatrixXd scores;    // n x k: (row - center) * rotation
  Eigen::VectorXd variance;  // k variances of the scores (divisor n - 1; without
                             // centring, their mean squares times n / (n - 1))
};

namespace pca_detail {

typedef Eigen::Map<const Eigen::MatrixXd> ConstMatrixMap;

// Rows per batch of the covariance and per block of the scores: the products
// read a centred copy of one batch (at most 16 MB), large enough that the
// calls' overhead and the packing of their operands stay small.
inline std::size_t rows_per_block(std::size_t d) {
  return std::max<std::size_t>(256, std::min<std::size_t>(2048, (std::size_t(1) << 21) / d));
}

// Copies rows [r0, r0 + out.rows()) of x, minus the centre, into `out`,
// columns [c0, c1).
inline void centre_rows(const ConstMatrixMap& x, const Eigen::VectorXd& center, Eigen::Index r0,
                        Eigen::Index c0, Eigen::Index c1, Eigen::MatrixXd& out) {
  const Eigen::Index m = out.rows();
  for (Eigen::Index c = c0; c < c1; ++c) {
    out.col(c) = x.col(c).segment(r0, m).array() - center[c];
  }
}

// Column panels of the covariance's lower triangle: panel p covers columns
// [start[p], start[p + 1]) and its rows from start[p] down. Their widths are
// chosen for about equal work, so that a few threads share them evenly, and
// depend on d only.
inline std::vector<Eigen::Index> lower_panels(Eigen::Index d) {
  const Eigen::Index target = std::max<Eigen::Index>(1, std::min<Eigen::Index>(16, d / 32));
  const double total = 0.5 * static_cast<double>(d) * static_cast<double>(d + 1);
  std::vector<Eigen::Index> start{0};
  double done = 0.0;
  Eigen::Index c = 0;
  for (Eigen::Index p = 1; p < target; ++p) {
    const double goal = total * static_cast<double>(p) / static_cast<double>(target);
    while (c < d && done < goal) done += static_cast<double>(d - c++);
    if (c > start.back() && c < d) start.push_back(c);
  }
  start.push_back(d);
  return start;
}

// The column means of x into `center`, one column per task.
template <typename Executor>
void column_means(const ConstMatrixMap& x, Eigen::VectorXd& center, Executor& executor) {
  const Eigen::Index n = x.rows();
  executor.parallel_for(0, static_cast<std::size_t>(x.cols()), [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      const Eigen::Index j = static_cast<Eigen::Index>(c);
      center[j] = x.col(j).sum() / static_cast<double>(n);
    }
  }, 8);
}

// The covariance (lower triangle) of the rows of x less `center`, batch by
// batch of `block` rows, in batch order.
template <typename Executor>
Eigen::MatrixXd covariance(const ConstMatrixMap& x, const Eigen::VectorXd& center, Eigen::Index block,
                           const PcaKernels& kern, Executor& executor) {
  using Eigen::Index;
  const Index n = x.rows(), d = x.cols();
  const std::size_t n_cols = static_cast<std::size_t>(d);
  const std::vector<Index> panel = lower_panels(d);
  const std::size_t n_panels = panel.size() - 1;
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(d, d);
  Eigen::MatrixXd centred(std::min(block, n), d);
  const std::size_t n_batches = static_cast<std::size_t>((n + block - 1) / block);
  Phase<Executor> phase(executor, "PCA: covariance", n_batches);
  for (std::size_t b = 0; b < n_batches; ++b) {
    const Index r0 = static_cast<Index>(b) * block, m = std::min(block, n - r0);
    if (m != centred.rows()) centred.resize(m, d);
    executor.parallel_for(0, n_cols, [&](std::size_t c0, std::size_t c1) {
      centre_rows(x, center, r0, static_cast<Index>(c0), static_cast<Index>(c1), centred);
    }, 16);
    executor.parallel_for(0, n_panels, [&](std::size_t p0, std::size_t p1) {
      for (std::size_t p = p0; p < p1; ++p) {
        kern.cross_panel(centred.data(), static_cast<std::size_t>(m), n_cols,
                         static_cast<std::size_t>(panel[p]),
                         static_cast<std::size_t>(panel[p + 1] - panel[p]), cov.data());
      }
    });
    phase.set(b + 1);
  }
  phase.finish(std::string());
  return cov;
}

// The top k eigenvectors of `cov` (the solver reads the lower triangle) into
// out.rotation, their eigenvalues into out.variance; `cov` is freed.
inline void top_components(Eigen::MatrixXd& cov, Eigen::Index k, PcaResult& out) {
  const Eigen::Index d = cov.rows();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(cov, Eigen::ComputeEigenvectors);
  if (solver.info() != Eigen::Success) {
    throw std::runtime_error("the eigendecomposition of the covariance did not converge");
  }
  cov.resize(0, 0);
  out.rotation.resize(d, k);
  out.variance.resize(k);
  for (Eigen::Index j = 0; j < k; ++j) {
    // eigenvalues ascending; a null direction can come out a rounding below 0
    out.rotation.col(j) = solver.eigenvectors().col(d - 1 - j);
    out.variance[j] = std::max(0.0, solver.eigenvalues()[d - 1 - j]);
  }
}

// The scores (rows of x less out.center, times out.rotation), one block of
// `block` rows per task, into out.scores.
template <typename Executor>
void component_scores(const ConstMatrixMap& x, Eigen::Index block, const PcaKernels& kern, PcaResult& out,
                      Phase<Executor>& phase, Executor& executor) {
  using Eigen::Index;
  const Index n = x.rows(), d = x.cols(), k = out.rotation.cols();
  out.scores.resize(n, k);
  const std::size_t n_blocks = static_cast<std::size_t>((n + block - 1) / block);
  const std::size_t blocks_per_batch = std::max<std::size_t>(2 * executor.n_threads(), 8);
  batched_for(executor, n_blocks, blocks_per_batch, [&](std::size_t b0, std::size_t b1) {
    Eigen::MatrixXd rows;
    for (std::size_t b = b0; b < b1; ++b) {
      const Index r0 = static_cast<Index>(b) * block, m = std::min(block, n - r0);
      rows.resize(m, d);
      centre_rows(x, out.center, r0, 0, d, rows);
      kern.product(rows.data(), static_cast<std::size_t>(m), static_cast<std::size_t>(d), out.rotation.data(),
                   static_cast<std::size_t>(k), out.scores.data() + r0, static_cast<std::size_t>(n));
    }
  }, [&](std::size_t done) { phase.set(done); });
}

// A definite sign per component: its largest score in absolute value (the
// first such row on a tie) positive.
template <typename Executor>
void orient_components(PcaResult& out, Executor& executor) {
  using Eigen::Index;
  const Index n = out.scores.rows();
  executor.parallel_for(0, static_cast<std::size_t>(out.scores.cols()), [&](std::size_t j0, std::size_t j1) {
    for (std::size_t jj = j0; jj < j1; ++jj) {
      const Index j = static_cast<Index>(jj);
      Index at = 0;
      for (Index i = 1; i < n; ++i) {
        if (std::abs(out.scores(i, j)) > std::abs(out.scores(at, j))) at = i;
      }
      if (out.scores(at, j) < 0) {
        out.scores.col(j) = -out.scores.col(j);
        out.rotation.col(j) = -out.rotation.col(j);
      }
    }
  });
}

inline std::string pca_summary(std::size_t n_rows, std::size_t n_cols, std::size_t k_comp, bool centre,
                               double kept, double total_variance) {
  return "PCA of " + std::to_string(n_rows) + " x " + std::to_string(n_cols) + ": " +
         std::to_string(k_comp) + " components, " +
         std::to_string(static_cast<int>(std::lround(
             total_variance > 0 ? 100.0 * kept / total_variance : 100.0))) +
         (centre ? "% of the variance" : "% of the sum of squares");
}

}  // namespace pca_detail

// The first k principal components of the n x d column-major matrix `x`
// (finite values; n >= 2, 1 <= k <= d), of its rows centred on the column
// means or, with `centre` false, as they are. Components beyond the rank of
// the (centred) data have variance 0 and arbitrary (orthonormal) directions.
template <typename Executor>
PcaResult principal_components(const double* x_data, std::size_t n_rows, std::size_t n_cols,
                               std::size_t k_comp, bool centre, const PcaKernels& kern,
                               Executor& executor) {
  using Eigen::Index;
  if (n_rows < 2) throw std::invalid_argument("PCA needs at least 2 rows");
  if (k_comp < 1 || k_comp > n_cols) {
    throw std::invalid_argument("the number of components must be between 1 and the number of "
                                "columns");
  }
  Eigen::initParallel();
  const Index n = static_cast<Index>(n_rows), d = static_cast<Index>(n_cols),
              k = static_cast<Index>(k_comp);
  const pca_detail::ConstMatrixMap x(x_data, n, d);
  PcaResult out;

  out.center = Eigen::VectorXd::Zero(d);
  if (centre) {
    pca_detail::column_means(x, out.center, executor);
    checkpoint(executor);
  }
  const Index block = static_cast<Index>(pca_detail::rows_per_block(n_cols));
  Eigen::MatrixXd cov = pca_detail::covariance(x, out.center, block, kern, executor);
  cov /= static_cast<double>(n - 1);
  const double total_variance = cov.diagonal().sum();
  pca_detail::top_components(cov, k, out);
  checkpoint(executor);
  {
    Phase<Executor> phase(executor, "PCA: scores", static_cast<std::size_t>((n + block - 1) / block));
    pca_detail::component_scores(x, block, kern, out, phase, executor);
    phase.finish(pca_detail::pca_summary(n_rows, n_cols, k_comp, centre, out.variance.sum(), total_variance));
  }
  pca_detail::orient_components(out, executor);
  return out;
}

}  // namespace lsnn

#endif  // LSNN_PCA_H
