// The exact sums of the far field's regions (plan.h): the near field of a
// grid (the pairs of points in neighbouring boxes), the near fields of a
// shed halo, the small components summed directly and the peeled outliers.
// Every sum runs over the points of its boxes in sorted order, four pairs
// at a time (CostKernels::near_run), in a fixed order: the results do not
// depend on the number of threads.
#ifndef LSNN_FARFIELD_NEAR_FIELD_H
#define LSNN_FARFIELD_NEAR_FIELD_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "../embed/cost_kernels.h"
#include "box_grid.h"
#include "plan.h"

namespace lsnn {

class NearField {
 public:
  // The near sums of the last all_neighbours() or halo(): sums()[c * n + i]
  // = sum_j c_ij (y_i - y_j) (c < d) and sums()[d * n + i] = sum_j e_ij.
  const std::vector<double>& sums() const { return near_; }

  void release() {
    for (auto* v : {&near_, &sx_, &sy_}) std::vector<double>().swap(*v);
  }

  // Every point against the other points of its neighbouring boxes on
  // `grid` (in 2-D the boxes of a row of the neighbourhood are consecutive
  // in the sorted order: one run per row).
  template <typename Executor>
  void all_neighbours(const CostKernels& kernels, const PairProblem& prob, const BoxGrid& grid,
                      const double* Y, std::size_t d, std::size_t stride, bool energy,
                      Executor& executor) {
    const std::size_t nb0 = grid.shape().boxes[0];
    const std::vector<std::size_t>& start = grid.box_start();
    per_point(
        grid, Y, d, stride, executor, [](std::size_t, const BoxWindow&) { return true; },
        [&](std::size_t, std::size_t s, double xi, double yi, const double* X, const double* Yy,
            const BoxWindow& w, double* acc) {
          for (std::size_t ry = w.y0; ry < w.y1; ++ry) {
            run_but(kernels, prob, s, xi, yi, X, Yy, start[ry * nb0 + w.x0],
                    start[ry * nb0 + w.x1], energy, acc);
          }
        });
  }

  // The near fields of a shed region on its coarse grid: a halo point
  // against every other point of its neighbouring boxes, a core point
  // against the halo points of its neighbouring boxes (its sums with the
  // core are the core region's). Points with no halo box in reach keep 0.
  template <typename Executor>
  void halo(const CostKernels& kernels, const PairProblem& prob, const BoxGrid& coarse,
            const std::vector<unsigned char>& core, const double* Y, std::size_t d,
            std::size_t stride, bool energy, Executor& executor) {
    const std::size_t nb0 = coarse.shape().boxes[0];
    const std::vector<std::size_t>& start = coarse.box_start();
    const auto wanted = [&](std::size_t box, const BoxWindow& w) {
      return coarse.filled(box) != 0 && (!core[box] || halo_in(coarse, core, w));
    };
    per_point(
        coarse, Y, d, stride, executor, wanted,
        [&](std::size_t box, std::size_t s, double xi, double yi, const double* X,
            const double* Yy, const BoxWindow& w, double* acc) {
          const bool halo_box = !core[box];
          for (std::size_t ry = w.y0; ry < w.y1; ++ry) {
            if (halo_box) {
              run_but(kernels, prob, s, xi, yi, X, Yy, start[ry * nb0 + w.x0],
                      start[ry * nb0 + w.x1], energy, acc);
              continue;
            }
            for (std::size_t rx = w.x0; rx < w.x1; ++rx) {
              const std::size_t o = ry * nb0 + rx;
              if (core[o] || coarse.filled(o) == 0) continue;
              kernels.near_run(prob, xi, yi, X, Yy, start[o], start[o + 1], energy, acc);
            }
          }
        });
  }

  // The components of a components region that are summed directly: their
  // pairs added to F and E, one task per component.
  template <typename Executor>
  static void small_components(const CostKernels& kernels, const PairProblem& prob,
                               const FarFieldRegion& r, std::size_t d, double* F, bool energy,
                               double* E, Executor& executor) {
    constexpr std::size_t most = FarFieldTuning::direct_points;
    const std::vector<std::size_t>& small = r.direct_components;
    if (small.empty()) return;
    const double* Y = r.coords;
    const std::size_t stride = r.stride;
    executor.parallel_for(
        0, small.size(),
        [&](std::size_t t0, std::size_t t1) {
          double x[most], y[most];
          for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t c = small[t];
            const std::size_t m = r.component_start[c + 1] - r.component_start[c];
            const std::size_t* idx = r.component_points.data() + r.component_start[c];
            for (std::size_t k = 0; k < m; ++k) {
              x[k] = Y[idx[k]];
              y[k] = d == 2 ? Y[stride + idx[k]] : 0.0;
            }
            const double* yy = d == 2 ? y : nullptr;
            for (std::size_t k = 0; k < m; ++k) {
              double acc[3] = {0.0, 0.0, 0.0};
              kernels.near_run(prob, x[k], y[k], x, yy, 0, k, energy, acc);
              kernels.near_run(prob, x[k], y[k], x, yy, k + 1, m, energy, acc);
              const std::size_t i = idx[k];
              F[i] += acc[0];
              if (d == 2) F[stride + i] += acc[1];
              if (energy) E[i] += acc[2];
            }
          }
        },
        1);
  }

  // A peel region: the largest component's points (`inner`: its m
  // points, their coordinates at core_y, their own sums f, e from its
  // region) get the outliers' sums added; the outliers get every other
  // point's, directly. Writes F and E of every point.
  template <typename Executor>
  void peel(const CostKernels& kernels, const PairProblem& prob, const FarFieldRegion& r,
            const FarFieldRegion& inner, const double* f, const double* e, std::size_t d,
            double* F, bool energy, double* E, Executor& executor) {
    const std::vector<std::size_t>& out = r.outliers;
    const std::size_t m = inner.n, nout = out.size(), stride = r.stride;
    const std::size_t* idx = inner.points;
    sx_.resize(2 * nout);
    for (std::size_t k = 0; k < nout; ++k) {
      sx_[k] = r.coords[out[k]];
      sx_[nout + k] = d == 2 ? r.coords[stride + out[k]] : 0.0;
    }
    const double* ox = sx_.data();
    const double* oy = d == 2 ? sx_.data() + nout : nullptr;
    const double* bx = inner.coords;
    const double* by = d == 2 ? inner.coords + m : nullptr;
    executor.parallel_for(
        0, m,
        [&](std::size_t b, std::size_t end) {
          for (std::size_t k = b; k < end; ++k) {
            double acc[3] = {0.0, 0.0, 0.0};
            kernels.near_run(prob, bx[k], by != nullptr ? by[k] : 0.0, ox, oy, 0, nout, energy,
                             acc);
            const std::size_t i = idx[k];
            F[i] = f[k] + acc[0];
            if (d == 2) F[stride + i] = f[m + k] + acc[1];
            if (energy) E[i] = e[k] + acc[2];
          }
        },
        1024);
    executor.parallel_for(
        0, nout,
        [&](std::size_t b, std::size_t end) {
          for (std::size_t k = b; k < end; ++k) {
            double acc[3] = {0.0, 0.0, 0.0};
            const double x = ox[k], y = oy != nullptr ? oy[k] : 0.0;
            kernels.near_run(prob, x, y, bx, by, 0, m, energy, acc);
            kernels.near_run(prob, x, y, ox, oy, 0, k, energy, acc);
            kernels.near_run(prob, x, y, ox, oy, k + 1, nout, energy, acc);
            const std::size_t i = out[k];
            F[i] = acc[0];
            if (d == 2) F[stride + i] = acc[1];
            if (energy) E[i] = acc[2];
          }
        },
        1);
  }

 private:
  // The coordinates in `grid`'s box order, then, one task per row of boxes,
  // for every point s of every box that wanted(box, window) (its window of
  // neighbouring boxes): sums(box, s, x, y, X, Y, window, acc) accumulates
  // its sums (X, Y the sorted coordinates), which become its near sums.
  template <typename Executor, typename Wanted, typename Sums>
  void per_point(const BoxGrid& grid, const double* Y, std::size_t d, std::size_t stride,
                 Executor& executor, Wanted&& wanted, Sums&& sums) {
    const std::size_t n = grid.points(), R = grid.shape().near_depth;
    const std::size_t nb0 = grid.shape().boxes[0];
    const std::vector<std::size_t>& order = grid.order();
    const std::vector<std::size_t>& start = grid.box_start();
    gather_sorted(order, Y, n, d, stride);
    const double* X = sx_.data();
    const double* Yy = d == 2 ? sy_.data() : nullptr;
    executor.parallel_for(
        0, grid.shape().boxes[1],
        [&](std::size_t r0, std::size_t r1) {
          for (std::size_t by = r0; by < r1; ++by) {
            for (std::size_t bx = 0; bx < nb0; ++bx) {
              const std::size_t box = by * nb0 + bx;
              const BoxWindow w = grid.shape().window(bx, by, R);
              if (!wanted(box, w)) continue;
              for (std::size_t s = start[box]; s < start[box + 1]; ++s) {
                const double xi = X[s], yi = Yy != nullptr ? Yy[s] : 0.0;
                double acc[3] = {0.0, 0.0, 0.0};
                sums(box, s, xi, yi, X, Yy, w, acc);
                const std::size_t i = order[s];
                for (std::size_t c = 0; c <= d; ++c) near_[c * n + i] = acc[c == d ? 2 : c];
              }
            }
          }
        },
        1);
  }

  // whether the window holds a filled halo box
  static bool halo_in(const BoxGrid& coarse, const std::vector<unsigned char>& core,
                      const BoxWindow& w) {
    const std::size_t nb0 = coarse.shape().boxes[0];
    for (std::size_t ry = w.y0; ry < w.y1; ++ry) {
      for (std::size_t rx = w.x0; rx < w.x1; ++rx) {
        const std::size_t o = ry * nb0 + rx;
        if (!core[o] && coarse.filled(o) > 0) return true;
      }
    }
    return false;
  }

  // The coordinates in a grid's box order (sx_, sy_), and near_ zeroed.
  void gather_sorted(const std::vector<std::size_t>& order, const double* Y, std::size_t n,
                     std::size_t d, std::size_t stride) {
    sx_.resize(n);
    sy_.resize(d == 2 ? n : 0);
    for (std::size_t s = 0; s < n; ++s) {
      sx_[s] = Y[order[s]];
      if (d == 2) sy_[s] = Y[stride + order[s]];
    }
    near_.assign((d + 1) * n, 0.0);
  }

  // The sums of the sorted point s with the run [lo, hi) of sorted points,
  // itself left out.
  static void run_but(const CostKernels& kernels, const PairProblem& prob, std::size_t s,
                      double xi, double yi, const double* X, const double* Yy, std::size_t lo,
                      std::size_t hi, bool energy, double* acc) {
    if (s >= lo && s < hi) {
      kernels.near_run(prob, xi, yi, X, Yy, lo, s, energy, acc);
      kernels.near_run(prob, xi, yi, X, Yy, s + 1, hi, energy, acc);
    } else {
      kernels.near_run(prob, xi, yi, X, Yy, lo, hi, energy, acc);
    }
  }

  std::vector<double> near_, sx_, sy_;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_NEAR_FIELD_H
