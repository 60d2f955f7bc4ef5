// The rows' coordinates in an approximate principal subspace.
//
// Random-projection trees only need the coarse geometry of the data: split
// on the leading principal coordinates of rows with many columns, they read
// a fraction of the memory and, as most of the variance lies in those
// directions, their leaves are as good (random +-1 projections to the same
// number of dimensions, tried first, lost much of the leaves' quality).
//
// The subspace is estimated from the covariance of a fixed sample of rows by
// a few steps of subspace iteration from a seeded random start; only the
// trees use it, so its accuracy affects speed, never the reported
// distances.
#ifndef LSNN_PRINCIPAL_H
#define LSNN_PRINCIPAL_H

#include <Eigen/Core>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../base/random.h"
#include "rp_forest.h"

namespace lsnn {

class PrincipalRows {
 public:
  // Coordinates of all rows of `space` in `dims` principal directions, when
  // the space is dense, its scores are squared euclidean distances, and it
  // has more than twice `dims` columns; else empty (available() is false).
  // The work: the covariance of 4,096 rows and one product of all rows with
  // the basis, a few percent of the forest's.
  template <typename Executor>
  PrincipalRows(const ScoreSpace& space, std::size_t dims, std::uint64_t seed, Executor& executor) {
    const std::size_t n = space.n(), d = space.d();
    if (!space.float_rows() || space.data().metric() == Metric::manhattan || d <= 2 * dims || n < 2) return;
    r_ = dims;
    const DistanceKernels& kern = space.data().kernels();

    // A fixed sample of rows, centred, stored transposed (d x ns).
    const std::size_t ns = std::min<std::size_t>(n, 4096);
    std::vector<double> mean(d, 0.0);
    for (std::size_t s = 0; s < ns; ++s) {
      const float* x = space.row(s * n / ns);
      for (std::size_t k = 0; k < d; ++k) mean[k] += x[k];
    }
    for (double& m : mean) m /= static_cast<double>(ns);
    std::vector<float> sample_t(d * ns);
    for (std::size_t s = 0; s < ns; ++s) {
      const float* x = space.row(s * n / ns);
      for (std::size_t k = 0; k < d; ++k) sample_t[k * ns + s] = static_cast<float>(x[k] - mean[k]);
    }
    // Covariance (up to a factor): d x d.
    std::vector<float> cov(d * d);
    kern.dot_tile(sample_t.data(), d, sample_t.data(), d, ns, cov.data());
    sample_t.clear();
    sample_t.shrink_to_fit();

    // Subspace iteration from a random start, in double precision.
    typedef Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic> MatrixD;
    Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> c(cov.data(), d, d);
    const MatrixD C = c.cast<double>();
    MatrixD V(d, dims);
    for (std::size_t j = 0; j < dims; ++j) {
      for (std::size_t k = 0; k < d; ++k) {
        const std::uint64_t h = hash64(seed, j, k);
        V(k, j) = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0) - 0.5;
      }
    }
    for (int step = 0; step < 6; ++step) {
      const MatrixD W = C * V;
      Eigen::HouseholderQR<MatrixD> qr(W);
      V = qr.householderQ() * MatrixD::Identity(d, dims);
    }
    // Basis rows (dims x d, for the row-major products) and the mean's
    // coordinates.
    basis_.resize(dims * d);
    std::vector<float> mean_coord(dims);
    for (std::size_t j = 0; j < dims; ++j) {
      double mj = 0.0;
      for (std::size_t k = 0; k < d; ++k) {
        basis_[j * d + k] = static_cast<float>(V(k, j));
        mj += V(k, j) * mean[k];
      }
      mean_coord[j] = static_cast<float>(mj);
    }

    // Coordinates of every row, centred on the sample mean.
    rows_.resize(n * dims);
    const std::size_t block = 1024;
    executor.parallel_for(0, (n + block - 1) / block, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t i0 = b * block, i1 = std::min(n, i0 + block);
        float* z = &rows_[i0 * dims];
        kern.dot_tile(space.row(i0), i1 - i0, basis_.data(), dims, d, z);
        for (std::size_t i = i0; i < i1; ++i) {
          float* zi = &rows_[i * dims];
          for (std::size_t j = 0; j < dims; ++j) zi[j] -= mean_coord[j];
        }
      }
    });
  }

  bool available() const { return r_ > 0; }
  std::size_t d() const { return r_; }
  const float* row(std::size_t i) const { return &rows_[i * r_]; }

 private:
  std::size_t r_ = 0;
  std::vector<float> basis_;  // r x d
  std::vector<float> rows_;   // n x r
};

}  // namespace lsnn

#endif  // LSNN_PRINCIPAL_H
