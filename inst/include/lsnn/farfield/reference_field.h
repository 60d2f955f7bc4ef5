// The all-pairs terms that fixed points (a reference layout) exert on any
// position x: F(x) = sum_j c(|x - r_j|^2) (x - r_j) and E(x) = sum_j e(...)
// over the reference points r_j (t-SNE: E is x's Z over the reference; the
// others: its all-pairs cost). Used to place new points in an embedding
// whose points do not move: the reference's part of the grid (its charges,
// the FFTs, the node potentials) is computed once, so each later position
// costs one interpolation plus its exact near field, whatever the
// reference's size.
//
// With `approximate` (1 or 2 dimensions) one grid (plan_grid_shape()) is
// laid over the reference and a margin around it; a position outside the
// grid is summed exactly over every reference point. Otherwise every
// position is summed exactly (in any dimension).
#ifndef LSNN_FARFIELD_REFERENCE_FIELD_H
#define LSNN_FARFIELD_REFERENCE_FIELD_H

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "../embed/cost_kernels.h"
#include "box_grid.h"
#include "convolution.h"
#include "far_field.h"
#include "shape_plan.h"

namespace lsnn {

class ReferenceField {
 public:
  template <typename Executor>
  ReferenceField(const CostParams& params, const double* R, std::size_t n, std::size_t d,
                 bool approximate, const GridSettings& gs, const CostKernels* kernels,
                 Executor& executor)
      : kernels_(kernels), n_(n), d_(d), grid_mode_(approximate && d <= 2 && n > 0) {
    prob_.params = params;
    if (d_ == 0) throw std::invalid_argument("the embedding needs at least one dimension");
    if (!grid_mode_) {
      rows_.assign(R, R + n * d);  // n x d column-major, as given
      if (d_ <= 2) {
        sx_.assign(R, R + n);
        if (d_ == 2) sy_.assign(R + n, R + 2 * n);
      }
      return;
    }
    build_grid(R, gs, executor);
  }
  // (the grid refers to the field's own geometry)
  ReferenceField(const ReferenceField&) = delete;
  ReferenceField& operator=(const ReferenceField&) = delete;

  std::size_t dimensions() const { return d_; }

  // F (d values) and E at position x (d coordinates); E only when
  // `energy` (t-SNE always needs it: it is Z).
  void at(const double* x, bool energy, double* F, double& E) const {
    double acc[3] = {0.0, 0.0, 0.0};
    std::size_t box = 0;
    if (grid_mode_ && geometry_.box_at(x, box)) {
      double phi[3] = {0.0, 0.0, 0.0};
      grid_.potentials_at(x, box, d_ + (energy ? 1 : 0), phi);
      if (geometry_.shape().near_field) near(x, box, energy, acc);
      for (std::size_t c = 0; c < d_; ++c) F[c] = phi[c] + acc[c];
      E = energy ? phi[d_] + acc[2] : 0.0;
      return;
    }
    if (d_ <= 2) {
      kernels_->near_run(prob_, x[0], d_ == 2 ? x[1] : 0.0, sx_.data(),
                         d_ == 2 ? sy_.data() : nullptr, 0, sx_.size(), energy, acc);
      for (std::size_t c = 0; c < d_; ++c) F[c] = acc[c];
      E = acc[2];
      return;
    }
    exact_any_dimension(x, energy, F, E);
  }

 private:
  template <typename Executor>
  void build_grid(const double* R, const GridSettings& gs, Executor& executor) {
    // the reference and two chargeless corners of a box a quarter of its
    // range (at least 2 units) wider on every side, so that new points that
    // move a little beyond the reference stay on the grid
    const std::size_t m = n_ + 2;
    std::vector<double> pts(2 * m, 0.0);
    for (std::size_t c = 0; c < d_; ++c) {
      double lo = R[c * n_], hi = lo;
      for (std::size_t i = 0; i < n_; ++i) {
        lo = std::min(lo, R[c * n_ + i]);
        hi = std::max(hi, R[c * n_ + i]);
      }
      const double margin = std::max(2.0, 0.25 * (hi - lo));
      std::copy(R + c * n_, R + (c + 1) * n_, pts.begin() + c * m);
      pts[c * m + n_] = lo - margin;
      pts[c * m + n_ + 1] = hi + margin;
    }
    pts_ = std::move(pts);
    const std::size_t n = n_, d = d_;
    ShapeReport report;
    const GridShape shape = plan_grid_shape(pts_.data(), m, d, m, gs, nullptr, report);
    geometry_.assign(shape, pts_.data(), m, m, executor);
    grid_.bind(geometry_);
    grid_.spread(1, [n](std::size_t, std::size_t i) { return i < n ? 1.0 : 0.0; }, executor);
    model_kernels(grid_, prob_.params, d, true, executor);
    std::vector<std::size_t> ks, cs;
    one_set_outputs(d, true, ks, cs);
    std::vector<double> phi((d + 1) * m);
    grid_.potentials(ks, cs, phi.data(), executor);
    // the reference points in box order, each box's run of them, for the
    // near field and for the exact sums off the grid
    const std::vector<std::size_t>& order = geometry_.order();
    const std::vector<std::size_t>& start = geometry_.box_start();
    const std::size_t nboxes = start.size() - 1;
    src_start_.assign(nboxes + 1, 0);
    sx_.clear();
    sy_.clear();
    for (std::size_t b = 0; b < nboxes; ++b) {
      for (std::size_t s = start[b]; s < start[b + 1]; ++s) {
        const std::size_t i = order[s];
        if (i >= n_) continue;
        sx_.push_back(pts_[i]);
        if (d_ == 2) sy_.push_back(pts_[m + i]);
      }
      src_start_[b + 1] = sx_.size();
    }
  }

  // The reference points of the boxes neighbouring `box`, exactly.
  void near(const double* x, std::size_t box, bool energy, double* acc) const {
    const GridShape& sh = geometry_.shape();
    const std::size_t nb0 = sh.boxes[0];
    const BoxWindow w = sh.window(box, sh.near_depth);
    for (std::size_t ry = w.y0; ry < w.y1; ++ry) {
      const std::size_t lo = src_start_[ry * nb0 + w.x0], hi = src_start_[ry * nb0 + w.x1];
      kernels_->near_run(prob_, x[0], d_ == 2 ? x[1] : 0.0, sx_.data(),
                         d_ == 2 ? sy_.data() : nullptr, lo, hi, energy, acc);
    }
  }

  void exact_any_dimension(const double* x, bool energy, double* F, double& E) const {
    const std::size_t n = n_, d = d_;
    const double* R = rows_.data();
    std::fill(F, F + d, 0.0);
    double e_sum = 0.0;
    lsnn::with_cost_model<ScalarMath>(prob_.params, [&](const auto& model) {
      for (std::size_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (std::size_t c = 0; c < d; ++c) {
          const double t = x[c] - R[c * n + j];
          s += t * t;
        }
        double rep, en;
        model.pair_terms(s, rep, en);
        for (std::size_t c = 0; c < d; ++c) F[c] += rep * (x[c] - R[c * n + j]);
        e_sum += en;
      }
    });
    E = energy ? e_sum : 0.0;
  }

  const CostKernels* kernels_;
  PairProblem prob_ = {};
  std::size_t n_, d_;
  bool grid_mode_;
  BoxGrid geometry_;
  GridConvolution grid_;
  std::vector<double> pts_;      // the grid's points (reference, two corners)
  std::vector<double> sx_, sy_;  // reference coordinates (in box order on a grid)
  std::vector<std::size_t> src_start_;
  std::vector<double> rows_;  // the reference, for the exact sums beyond 2-D
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_REFERENCE_FIELD_H
