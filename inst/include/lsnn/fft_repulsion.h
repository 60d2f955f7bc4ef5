// The all-pairs (repulsive) part of the embedding costs of costs.h in O(n)
// per evaluation, by the grid interpolation of interpolation.h, for 1- and
// 2-dimensional embeddings.
//
// t-SNE. With w = 1 / (1 + d^2), the repulsion needs, for every point,
// F_i = sum_j w_ij^2 (y_i - y_j) = y_i sum_j w_ij^2 - sum_j w_ij^2 y_j and
// Z = sum_ij w_ij: the kernel w^2 with charges 1 and y (one per dimension)
// and the kernel w with charge 1, from one spreading of the charges. (The
// odd kernel (y_i - y_j) w^2 with charge 1 saves two FFTs but was measured
// 1.5 times less accurate: the interpolation errors of the two sums above
// largely cancel between near points.) The self terms (j = i: w = 1,
// y_i - y_i = 0) are removed exactly.
#ifndef LSNN_FFT_REPULSION_H
#define LSNN_FFT_REPULSION_H

#include <cmath>
#include <cstddef>
#include <vector>

#include "cost_kernels.h"
#include "interpolation.h"

namespace lsnn {

// The costs with an approximate all-pairs sum.
inline bool approx_supported(CostMethod m) { return m == CostMethod::tsne; }

// Grid settings for t-SNE's kernels (length scale 1): 3 nodes per box,
// boxes 1 wide, at least 50 per dimension (the published defaults of the
// method). Measured on 3,000 and 5,000 Fashion-MNIST images (50 principal
// components, perplexity 30, 500 iterations, same start): the final exact
// KL of an approximate run was 6 % above the exact run's with 3 nodes per
// box, 2 % with 4 and 0.03-0.2 % with 5 (runs of the exact gradient from
// different starts differ by 0.5 %), for 1.7 times the FFT work of 3 nodes
// with 5: the user chooses with options(lsnn.grid = c(nodes, width, min)).
struct TsneGrid {
  GridSettings grid;
  TsneGrid() {
    grid.nodes = 3;
    grid.box_width = 1.0;
    grid.min_boxes = 50;
  }
};

class TsneRepulsion {
 public:
  explicit TsneRepulsion(const GridSettings& gs = TsneGrid().grid) : gs_(gs) {}

  // Y: coordinate c of point i at Y[c * stride + i] (d = 1 or 2). Writes
  // F[c * stride + i] = sum_j w_ij^2 (y_i - y_j) and returns Z.
  template <typename Executor>
  double evaluate(const double* Y, std::size_t n, std::size_t d, std::size_t stride,
                  double* F, Executor& executor) {
    grid_.layout(Y, n, d, stride, gs_, executor);
    // charge sets: 0 -> 1, 1 + c -> y_c
    grid_.spread(1 + d,
                 [&](std::size_t o, std::size_t i) {
                   return o == 0 ? 1.0 : Y[(o - 1) * stride + i];
                 },
                 executor);
    grid_.kernel(0,
                 [](double dx, double dy) {
                   const double w = 1.0 / (1.0 + dx * dx + dy * dy);
                   return w * w;
                 },
                 executor);
    grid_.kernel(1, [](double dx, double dy) { return 1.0 / (1.0 + dx * dx + dy * dy); },
                 executor);
    // outputs: 0 -> w^2 * 1, 1 + c -> w^2 * y_c; Z (with the n self terms
    // w = 1) from the spectra, without a transform back
    std::vector<std::size_t> ks(d + 1, 0), cs(d + 1, 0);
    for (std::size_t c = 0; c < d; ++c) cs[1 + c] = 1 + c;
    phi_.resize((d + 1) * n);
    grid_.potentials(ks, cs, phi_.data(), executor);
    const double* s0 = phi_.data();
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d; ++c) {
            const double* sy = phi_.data() + (1 + c) * n;
            const double* y = Y + c * stride;
            double* f = F + c * stride;
            for (std::size_t i = b; i < e; ++i) f[i] = y[i] * s0[i] - sy[i];
          }
        },
        4096);
    return grid_.energy(1, 0) - static_cast<double>(n);
  }

  const InterpolationGrid& grid() const { return grid_; }

 private:
  GridSettings gs_;
  InterpolationGrid grid_;
  std::vector<double> phi_;
};

}  // namespace lsnn

#endif  // LSNN_FFT_REPULSION_H
