// The all-pairs (repulsive) part of the embedding costs of costs.h in
// O(n) per evaluation (for a bounded number of points per box), by the grid
// interpolation of interpolation.h with an exact near field, for 1- and
// 2-dimensional embeddings.
//
// Every cost's all-pairs part is a radial kernel sum: with s = d_ij^2,
//   F_i = sum_j c(s) (y_i - y_j)     (the repulsion; t-SNE: c = w^2)
//   E_i = sum_j e(s)                 (t-SNE: w, for Z; others: the cost)
// The forces are sums of the odd kernels c(s) (y_i - y_j)_c with charge 1
// (not y_i sum c - sum c y_j, which cancels badly away from the origin
// once the near field is exact: measured 50 times the error of the odd
// form on a converged t-SNE layout), so one charge set and d + 1 kernels.
//
// Kernel split. The kernels of LargeVis and UMAP have a sharp core
// (1 / (s + eps), s^b) that polynomial interpolation over a box resolves
// poorly, and t-SNE's gradient at a converged layout is a small difference
// of large attraction and repulsion, so that the plain grid's error (about
// 1e-2 of the repulsion) is of the order of the gradient itself. So the
// sums are split by boxes: the pairs in the same or neighbouring boxes
// (the near field) are summed directly, exactly, in a fixed order; the
// grid sums the rest (its node-to-node sums between neighbouring boxes are
// taken off the potentials, interpolation.h). A far pair is at least one
// box width apart, where these kernels are smooth on the scale of a box:
// the interpolation error falls geometrically with the nodes per box and
// does not depend on the box width for the power-law kernels (scale-free).
// The number of boxes is at least (n / points_per_box)^(1/d) per dimension
// so that the direct sums stay short, and boxes are at most box_width wide
// (the kernels' length scale, 1).
//
// Determinism: each point's near sum runs over the points of its
// neighbouring boxes in sorted order; the grid is deterministic.
#ifndef LSNN_FFT_REPULSION_H
#define LSNN_FFT_REPULSION_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cost_kernels.h"
#include "interpolation.h"
#include "parallel.h"

namespace lsnn {

// The default grid of each cost. Measured at 5,000 Fashion-MNIST rows (50
// principal components; layouts converged by the exact optimizer or uwot;
// relative gradient error |g_approx - g_exact| / |g_exact|, per-evaluation
// time on 2 threads, the machine shared):
//   t-SNE (layout 190 units wide; exact 9-16 ms): 3 nodes per 1-unit box,
//   no near field (the former default) 4.3; with a near field of the
//   neighbouring boxes: 5 nodes, 1-unit boxes 1.6e-2; near field 2 boxes
//   deep: 5 nodes 1-unit 7.9e-4 (630 ms), 2-unit 7.6e-4 (155 ms), 3-unit
//   5.2e-4 (72-78 ms), 4-unit 3.7e-4 (54 ms); 6 nodes 4-unit 3.8e-5 (86-130
//   ms); 7 nodes 6-unit 4.8e-6 (133 ms). The far pairs are then at least 2
//   boxes apart, where the kernel varies on the scale of the distance: the
//   error depends on the nodes much more than on the box width, and wide
//   boxes keep the FFTs small. Default: 5 nodes, boxes at most 4 wide
//   (wider only past 6,000 nodes per dimension), 2 boxes deep; KL within
//   2e-7.
//   LargeVis, UMAP, t-UMAP (uwot layouts 20-35 units wide; exact 15, 89, 14
//   ms): 3 nodes, near field 1 box deep, 2.6-3.3e-3 (12, 25, 10 ms); 4
//   nodes 4-5e-4 (LargeVis's default); 2 boxes deep 5-7e-4 (17, 43, 15 ms). Their kernels are
//   power laws beyond the core: the boxes' width only follows the points
//   (at least (n / 4)^(1/d) boxes per dimension).
//   LargeVis with exp weights: a Gaussian-like kernel of width 1 (not
//   scale-free). On 300 points (sd 1 and 10, 1-D and 2-D): 3 nodes in
//   1-unit boxes, 1 deep, up to 1.9e-2; 5 nodes, boxes at most 1.5 wide, 2
//   deep, at most 2.6e-5, for the same time.
inline GridSettings default_grid(CostMethod m) {
  GridSettings g;
  g.near_field = true;
  // t-SNE: the boxes are chosen by cost (refine()) down to a floor of 64
  // points per box; with the floor at 4, the dense clusters of a 1e5-point
  // layout got grids of 6 nodes per point, whose FFTs took 3/4 of the time
  // (bench/README.md, session 9)
  g.points_per_box = m == CostMethod::tsne ? 64.0 : 4.0;
  g.min_boxes = 1;
  // Crowded layouts refine the boxes (interpolation.h): a near pair costs
  // about 1 FFT element-level for t-SNE (AVX2 near field; measured on the
  // 1e5-point layout, where 4 chose grids 1.5x slower), 8 for LargeVis and
  // 20 for UMAP (std::pow); t-SNE's kernel varies on the scale of 1, so
  // narrow boxes need a shallower near field: none up to 0.3 wide, one box
  // deep up to 0.45 (on a converged t-SNE layout of 5,000 Fashion-MNIST
  // images, 5 nodes: the grid alone 2.6e-4 off at 0.3, 6.0e-4 at 0.35,
  // 3.1e-3 at 0.5; one box deep 6.9e-4 at 0.5, 1.2e-3 at 0.59, 2-3e-3 from
  // 0.7 to 4; two boxes deep 6.9e-5 at 4; bench/README.md, session 13).
  // Or 7 nodes per box: the grid alone 3.4e-4 off at 0.6, one box deep at
  // most 1.9e-4 from 0.7 to 8 (session 14); at 1e6 points the layout's
  // core, in boxes 0.5-0.6 wide, is summed in 0.8 s instead of 1.8 s.
  g.pair_weight = m == CostMethod::tsne ? 1.0 : m == CostMethod::umap ? 20.0 : 8.0;
  if (m == CostMethod::tsne) {
    g.nodes = 5;
    g.box_width = 4.0;
    g.near_boxes = 2;
    g.widen = true;
    g.smooth_width = 0.3;
    g.shallow_width = 0.45;
    g.fine_nodes = 7;
    g.fine_smooth_width = 0.6;
  } else {
    // LargeVis's Cauchy kernel (gamma = 1, small P) was 1.7e-2 off with 3
    // nodes on 300 points 60 units wide (boxes 7.5 wide), 4e-4 with 4
    g.nodes = m == CostMethod::largevis ? 4 : 3;
    g.near_boxes = 1;
    g.widen = true;
    g.box_width = HUGE_VAL;
    if (m == CostMethod::largevis_exp) {
      g.nodes = 5;
      g.box_width = 1.5;
      g.near_boxes = 2;
    }
  }
  return g;
}

// The grid while P is exaggerated (the first stop_lying_iter iterations of
// t-SNE). There the attraction of the exaggerated P dominates and the
// clusters only need to form: the accuracy of default_grid() buys nothing,
// and it is dear then, because the clusters are at their densest (many
// near pairs). So t-SNE takes the grid of FIt-SNE and openTSNE: 3 nodes in
// boxes 1 unit wide, at least 50 boxes per dimension, no near field (a
// gradient error of a few 1e-2; the time saved is in bench/README.md). The
// other costs keep their default grid: their kernels' sharp core needs the
// near field.
inline GridSettings exaggeration_grid(CostMethod m) {
  if (m != CostMethod::tsne) return default_grid(m);
  GridSettings g;
  g.nodes = 3;
  g.box_width = 1.0;
  g.min_boxes = 50;
  g.widen = true;
  return g;
}

// The kernels of a cost's all-pairs part on `grid`: slot c < d the
// repulsion times the offset's coordinate c (odd), slot d (with `energy`)
// the energy. Returns the energy of a point with itself (the grid's own
// self term, which the caller takes off when it has no near field).
template <typename Executor>
double model_kernels(InterpolationGrid& grid, const CostParams& params, std::size_t d,
                     bool energy, Executor& executor) {
  return lsnn::with_cost_model<ScalarMath>(params, [&](const auto& model) {
    grid.kernel(0, [model](double dx, double dy) { return model.repulsion(dx * dx + dy * dy) * dx; },
                executor);
    if (d == 2) {
      grid.kernel(1, [model](double dx, double dy) { return model.repulsion(dx * dx + dy * dy) * dy; },
                  executor);
    }
    if (energy) {
      grid.kernel(d, [model](double dx, double dy) { return model.energy(dx * dx + dy * dy); },
                  executor);
    }
    return static_cast<double>(model.energy(0.0));
  });
}

// The all-pairs sums of a layout, by components when it has several. A
// uniform grid over a wide layout of dense clusters is dear either way: fine
// boxes make FFTs over mostly empty space, coarse boxes a near field that
// sums whole clusters. So a coarse grid (n / 16 to n nodes, boxes at least
// kCoarseWidth wide) is laid first; its filled boxes fall into components,
// any two of which are at least two boxes apart (InterpolationGrid::
// label_components()). The coarse grid then sums only the pairs of points in
// different components: those are far pairs, at the accuracy of the default
// grids (5 nodes, 2 boxes deep); the largest component's targets read a
// charge set without its own points, the others' the full set less their
// own component's node sums. Each component's own pairs are a smaller
// problem of the same kind, summed by a GridRepulsion of its own over its
// own extent (which may split again, kMaxDepth levels in all), or directly
// when it has at most kDirect points; a few outlying points (at most kPeel
// outside the largest component) are summed directly against every point,
// with no coarse grid (peel()). One evaluation thus costs about what
// the components' own grids cost, plus O(n): it no longer grows with the
// distances between clusters. A layout that is one component (or whose
// components would cost more than kRemovalWork node pairs per node to
// separate) takes the single grid, as before. Before any of that, a sparse
// halo around dense clusters is shed (shed()): without it, a few thousand
// points strewn over a layout 1,000 times wider than its clusters join
// them into one component as wide as the layout.
class GridRepulsion {
 public:
  GridRepulsion() = default;
  // `kernels` (its near_run) sums the near field, four pairs at a time
  GridRepulsion(const CostParams& params, const GridSettings& gs, const CostKernels* kernels)
      : gs_(gs), kernels_(kernels) {
    prob_.params = params;
  }

  // Y: coordinate c of point i at Y[c * stride + i] (d = 1 or 2). Writes
  // F[c * stride + i] = sum_j c_ij (y_i - y_j) and, when `energy`,
  // E[i] = sum_{j != i} e_ij.
  template <typename Executor>
  void evaluate(const double* Y, std::size_t n, std::size_t d, std::size_t stride, double* F,
                bool energy, double* E, Executor& executor) {
    if (!cache_) cache_ = std::make_shared<SpectrumCache>();
    if (!work_) work_ = std::make_shared<GridWorkspace>();
    // (the halo's levels are at depth 0 too)
    if (depth_ == 0 && peels_ == 0) cache_->next_generation();
    grid_.share(cache_.get(), work_.get());
    coarse_.share(cache_.get(), work_.get());
    if (gs_.by_components && (depth_ < kMaxDepth || peels_ < kMaxPeels) && n >= kMinSplit &&
        by_components(Y, n, d, stride, F, energy, E, executor)) {
      // a grid not needed for two evaluations gives its memory back (grids
      // that once covered a large layout would otherwise keep it)
      idle_split_ = 0;
      if (++idle_whole_ == 2) grid_.release();
      // the grids of components that this layout no longer has are kept
      // (a layout's split changes from one evaluation to the next, and
      // grids made afresh fault in all their memory again) until unused
      // for two evaluations
      for (std::size_t k = used_children_; k < children_.size(); ++k) {
        if (++children_[k].unused_ == 2) children_[k].release_all();
      }
      return;
    }
    whole(Y, n, d, stride, F, energy, E, executor);
    idle_whole_ = 0;
    if (++idle_split_ == 2) {
      coarse_.release();
      children_.clear();
    }
  }

  void set_grid(const GridSettings& gs) { gs_ = gs; }

  // Gives back the memory of every grid (the next evaluation makes what
  // it needs again).
  void release_all() {
    grid_.release();
    coarse_.release();
    children_.clear();
    for (auto* v : {&phi_, &near_, &sx_, &sy_, &sub_y_, &sub_f_, &sub_e_, &out_y_}) {
      std::vector<double>().swap(*v);
    }
  }

  // the levels of components below the whole layout
  static constexpr int kMaxDepth = 3;
  // layouts of fewer points are never split
  static constexpr std::size_t kMinSplit = 512;
  // components of at most this many points are summed directly
  static constexpr std::size_t kDirect = 256;
  // when all but the largest component hold at most kPeel points, they are
  // summed directly against every point (no coarse grid), kMaxPeels times
  static constexpr std::size_t kPeel = 64;
  static constexpr int kMaxPeels = 8;
  // the narrowest coarse box, in units of the kernels' length scale (far
  // pairs are then at least 8 apart, where every cost's kernel is smooth)
  static constexpr double kCoarseWidth = 4.0;
  // the fewest coarse nodes (small layouts still find their components)
  static constexpr double kCoarseMinNodes = 4096.0;
  // the most node pairs per coarse node that the separation may cost
  static constexpr double kRemovalWork = 64.0;
  // a box is thinly filled when it holds fewer points than its nodes or
  // than 1 / kThinShare of the fullest box
  static constexpr std::size_t kThinShare = 64;
  // the halo's grid: nodes per point
  static constexpr double kShedNodesPerPoint = 0.25;
  // the coarse grid's nodes per box and dimension
  static constexpr int kCoarseNodes = 5;

 private:
  // One grid over the whole layout (with its exact near field, when it has
  // one).
  template <typename Executor>
  void whole(const double* Y, std::size_t n, std::size_t d, std::size_t stride, double* F,
             bool energy, double* E, Executor& executor) {
    grid_.layout(Y, n, d, stride, gs_, executor);
    grid_.spread(1, [](std::size_t, std::size_t) { return 1.0; }, executor);
    // (without a near field the grid's own self term is taken off the energy)
    const double self = model_kernels(grid_, prob_.params, d, energy, executor);
    std::vector<std::size_t> ks, cs;
    for (std::size_t c = 0; c <= d; ++c) {
      if (c == d && !energy) break;
      ks.push_back(c);
      cs.push_back(0);
    }
    const std::size_t nout = ks.size();
    phi_.resize(nout * n);
    grid_.potentials(ks, cs, phi_.data(), executor);
    checkpoint(executor);
    const bool nf = grid_.near_field();
    if (nf) near(Y, n, d, stride, energy, executor);
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d; ++c) {
            const double* ph = phi_.data() + c * n;
            double* f = F + c * stride;
            for (std::size_t i = b; i < e; ++i) f[i] = ph[i] + (nf ? near_[c * n + i] : 0.0);
          }
          if (energy) {
            const double* ph = phi_.data() + d * n;
            for (std::size_t i = b; i < e; ++i) {
              E[i] = ph[i] + (nf ? near_[d * n + i] : -self);
            }
          }
        },
        4096);
  }

  // A coarse grid: 5 nodes per box, two boxes deep, about n * nodes_per_point
// nodes (at least kCoarseMinNodes), boxes at least kCoarseWidth wide.
  GridSettings coarse_settings(const double* Y, std::size_t n, std::size_t d, std::size_t stride,
                               double nodes_per_point) const {
    GridSettings cs;
    cs.nodes = kCoarseNodes;
    cs.near_field = true;
    cs.near_boxes = 2;
    cs.widen = true;
    double span = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      const double* y = Y + c * stride;
      const auto mm = std::minmax_element(y, y + n);
      span = std::max(span, *mm.second - *mm.first);
    }
    const double total = std::max(static_cast<double>(n) * nodes_per_point, kCoarseMinNodes);
    const double nodes = d == 2 ? std::sqrt(total) : total;
    const double boxes = std::max(1.0, std::floor(nodes / cs.nodes));
    cs.box_width = ladder_width(std::max(kCoarseWidth, span / boxes));
    return cs;
  }

  // The sums by components (see above); false, with nothing written, when
  // the layout does not split.
  template <typename Executor>
  bool by_components(const double* Y, std::size_t n, std::size_t d, std::size_t stride,
                     double* F, bool energy, double* E, Executor& executor) {
    // a sparse halo first, on the finest coarse grid (which tells thinly
    // filled boxes from well filled ones best)
    std::size_t nc = 0;
    if (peels_ < kMaxPeels) {
      const GridSettings fine = coarse_settings(Y, n, d, stride, kShedNodesPerPoint);
      if (!std::isfinite(fine.box_width)) return false;
      coarse_.layout(Y, n, d, stride, fine, executor);
      nc = coarse_.label_components();
      if (shed(Y, n, d, stride, F, energy, E, nc, executor)) return true;
    }
    // the coarsest grid that splits the layout, from n / 16 to n nodes
    // (finer grids separate clusters that are closer together; they cost
    // less than a single grid over the same width with boxes fine enough
    // for the clusters)
    for (const double per_point : {1.0 / 16.0, 0.25, 1.0}) {
      const GridSettings cs = coarse_settings(Y, n, d, stride, per_point);
      if (!std::isfinite(cs.box_width)) return false;
      coarse_.layout(Y, n, d, stride, cs, executor);
      nc = coarse_.label_components();
      if (nc >= 2 || cs.box_width <= kCoarseWidth) break;
    }
    if (nc < 2) return false;
    const std::vector<std::size_t>& cstart = coarse_.component_start();
    const std::vector<std::size_t>& cboxes = coarse_.component_boxes();
    const std::vector<std::size_t>& start = coarse_.box_start();
    const std::vector<std::size_t>& order = coarse_.order();
    // the components' points, in box order: members_[mstart_[c] ..)
    mstart_.assign(nc + 1, 0);
    members_.clear();
    for (std::size_t c = 0; c < nc; ++c) {
      for (std::size_t k = cstart[c]; k < cstart[c + 1]; ++k) {
        const std::size_t b = cboxes[k];
        members_.insert(members_.end(), order.begin() + start[b], order.begin() + start[b + 1]);
      }
      mstart_[c + 1] = members_.size();
    }
    std::size_t big = 0;
    for (std::size_t c = 1; c < nc; ++c) {
      if (mstart_[c + 1] - mstart_[c] > mstart_[big + 1] - mstart_[big]) big = c;
    }
    const std::size_t n_big = mstart_[big + 1] - mstart_[big];
    if (n - n_big <= kPeel && peels_ < kMaxPeels) {
      peel(Y, n, d, stride, F, energy, E, big, executor);
      return true;
    }
    if (depth_ >= kMaxDepth) return false;
    const double budget = kRemovalWork * static_cast<double>(coarse_.nodes_total());
    if (!coarse_.separate(big, budget)) return false;

    // the pairs of different components: charge set 0 holds every point,
    // set 1 every point but the largest component's
    const InterpolationGrid& grid = coarse_;
    coarse_.spread(
        2,
        [&grid, big](std::size_t o, std::size_t i) {
          return o == 0 || grid.component_of_point(i) != big ? 1.0 : 0.0;
        },
        executor);
    model_kernels(coarse_, prob_.params, d, energy, executor);
    std::vector<std::size_t> ks, cs2;
    two_set_outputs(d, energy, ks, cs2);
    phi_.resize(ks.size() * n);
    coarse_.potentials(ks, cs2, phi_.data(), executor);
    checkpoint(executor);
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            const std::size_t set = grid.component_of_point(i) == big ? 1 : 0;
            for (std::size_t c = 0; c < d; ++c) F[c * stride + i] = phi_[(2 * c + set) * n + i];
            if (energy) E[i] = phi_[(2 * d + set) * n + i];
          }
        },
        4096);

    // each component's own pairs
    direct_components(Y, d, stride, F, energy, E, executor);
    std::size_t child = 0;
    for (std::size_t c = 0; c < nc; ++c) {
      const std::size_t m = mstart_[c + 1] - mstart_[c];
      if (m <= kDirect) continue;
      const std::size_t* idx = members_.data() + mstart_[c];
      sub_evaluate(child++, depth_ + 1, peels_, Y, d, stride, idx, m, energy, executor);
      for (std::size_t cc = 0; cc < d; ++cc) {
        for (std::size_t k = 0; k < m; ++k) F[cc * stride + idx[k]] += sub_f_[cc * m + k];
      }
      if (energy) {
        for (std::size_t k = 0; k < m; ++k) E[idx[k]] += sub_e_[k];
      }
    }
    used_children_ = child;
    return true;
  }

  // The sums among the m points idx[0 .. m) alone, by the grid children_[slot]
  // (made on first use, sharing this evaluator's spectra) at the given
  // level: their coordinates in sub_y_, the results in sub_f_ and sub_e_.
  template <typename Executor>
  void sub_evaluate(std::size_t slot, int depth, int peels, const double* Y, std::size_t d,
                    std::size_t stride, const std::size_t* idx, std::size_t m, bool energy,
                    Executor& executor) {
    while (children_.size() <= slot) children_.emplace_back(prob_.params, gs_, kernels_);
    GridRepulsion& sub = children_[slot];
    sub.unused_ = 0;
    sub.set_grid(gs_);
    sub.depth_ = depth;
    sub.peels_ = peels;
    sub.cache_ = cache_;
    sub.work_ = work_;
    sub_y_.resize(d * m);
    sub_f_.resize(d * m);
    sub_e_.resize(m);
    for (std::size_t c = 0; c < d; ++c) {
      for (std::size_t k = 0; k < m; ++k) sub_y_[c * m + k] = Y[c * stride + idx[k]];
    }
    sub.evaluate(sub_y_.data(), m, d, m, sub_f_.data(), energy, sub_e_.data(), executor);
  }

  // A few outlying points (every component but `big`, at most kPeel points):
  // the largest component's own pairs by a grid of its own extent, every
  // pair with an outlying point directly.
  template <typename Executor>
  void peel(const double* Y, std::size_t n, std::size_t d, std::size_t stride, double* F,
            bool energy, double* E, std::size_t big, Executor& executor) {
    const std::size_t m = mstart_[big + 1] - mstart_[big], r = n - m;
    const std::size_t* idx = members_.data() + mstart_[big];
    out_.clear();
    for (std::size_t c = 0; c + 1 < mstart_.size(); ++c) {
      if (c == big) continue;
      out_.insert(out_.end(), members_.begin() + mstart_[c], members_.begin() + mstart_[c + 1]);
    }
    sub_evaluate(0, depth_, peels_ + 1, Y, d, stride, idx, m, energy, executor);
    used_children_ = 1;
    out_y_.resize(2 * r);
    for (std::size_t k = 0; k < r; ++k) {
      out_y_[k] = Y[out_[k]];
      out_y_[r + k] = d == 2 ? Y[stride + out_[k]] : 0.0;
    }
    const double* ox = out_y_.data();
    const double* oy = d == 2 ? out_y_.data() + r : nullptr;
    const double* bx = sub_y_.data();
    const double* by = d == 2 ? sub_y_.data() + m : nullptr;
    // the largest component's points: their own sums plus the outliers'
    executor.parallel_for(
        0, m,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t k = b; k < e; ++k) {
            double acc[3] = {0.0, 0.0, 0.0};
            kernels_->near_run(prob_, bx[k], by != nullptr ? by[k] : 0.0, ox, oy, 0, r, energy,
                               acc);
            const std::size_t i = idx[k];
            F[i] = sub_f_[k] + acc[0];
            if (d == 2) F[stride + i] = sub_f_[m + k] + acc[1];
            if (energy) E[i] = sub_e_[k] + acc[2];
          }
        },
        1024);
    // the outliers: every other point, directly
    executor.parallel_for(
        0, r,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t k = b; k < e; ++k) {
            double acc[3] = {0.0, 0.0, 0.0};
            const double x = ox[k], y = oy != nullptr ? oy[k] : 0.0;
            kernels_->near_run(prob_, x, y, bx, by, 0, m, energy, acc);
            kernels_->near_run(prob_, x, y, ox, oy, 0, k, energy, acc);
            kernels_->near_run(prob_, x, y, ox, oy, k + 1, r, energy, acc);
            const std::size_t i = out_[k];
            F[i] = acc[0];
            if (d == 2) F[stride + i] = acc[1];
            if (energy) E[i] = acc[2];
          }
        },
        1);
  }

  // A sparse halo (the points of the coarse grid's thinly filled boxes far
  // from its well filled ones): its points are summed on the coarse grid,
  // the rest (the core) by a grid of its own extent. Points strewn between
  // and around the clusters, as the early exaggeration leaves them, would
  // otherwise join the clusters into one component (or stretch one
  // component) as wide as the layout, and a single grid fine enough for
  // the clusters over that width costs far more than n nodes (1e5 points
  // at iteration 260: 99.8 % of them within 70 units, the rest over 640;
  // 1e6 points: 99 % within 15 units, 50,000 of them in each 0.2-unit
  // cluster, the rest over 1,900). The grid is kShedNodesPerPoint nodes
  // per point. A box is well filled when it holds at least as many points
  // as it has nodes and at least 1 / kThinShare of the fullest box's (the
  // grid of the core is as fine as its densest part needs, so a sparse
  // region kept in the core costs nodes over all its area); the core is
  // the well filled boxes and the filled boxes within the near field's
  // reach of them, so that a halo point's near field holds only thinly
  // filled boxes and the core's points meet halo points in their near
  // field only in those boxes. Worth it when the core's extent is at most
  // half the layout's (in area) or the core falls into more components
  // than the layout; false, with nothing written, otherwise. The core may
  // shed again (at most kMaxPeels levels). The pairs: core with
  // core by the core's grid; core target with halo source on the coarse
  // grid (charge set 0: the halo's points) plus its near field's halo
  // points directly; halo target with any source on the coarse grid (set
  // 1: every point) plus its whole near field directly.
  template <typename Executor>
  bool shed(const double* Y, std::size_t n, std::size_t d, std::size_t stride, double* F,
            bool energy, double* E, std::size_t nc_all, Executor& executor) {
    const std::vector<std::size_t>& start = coarse_.box_start();
    const std::vector<std::size_t>& order = coarse_.order();
    const std::size_t nb0 = coarse_.boxes(0), nb1 = d == 2 ? coarse_.boxes(1) : 1;
    const std::size_t R = coarse_.near_boxes(), nboxes = nb0 * nb1;
    const std::size_t p = static_cast<std::size_t>(kCoarseNodes);
    auto filled = [&start](std::size_t b) { return start[b + 1] - start[b]; };
    std::size_t fullest = 0;
    for (std::size_t b = 0; b < nboxes; ++b) fullest = std::max(fullest, filled(b));
    const std::size_t well = std::max(d == 2 ? p * p : p, fullest / kThinShare);
    if (fullest < well) return false;  // no well filled box
    std::vector<unsigned char>& core = core_box_;
    core.assign(nboxes, 0);
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (filled(b) < well) continue;
      const std::size_t bx = b % nb0, by = b / nb0;
      const std::size_t y0 = by > R ? by - R : 0, y1 = std::min(nb1, by + R + 1);
      const std::size_t x0 = bx > R ? bx - R : 0, x1 = std::min(nb0, bx + R + 1);
      for (std::size_t y = y0; y < y1; ++y) {
        for (std::size_t x = x0; x < x1; ++x) core[y * nb0 + x] = 1;
      }
    }
    // the halo's size and the extents (in boxes) of the core and of the layout
    std::size_t halo = 0;
    std::size_t lo_all[2] = {nb0, nb1}, hi_all[2] = {0, 0}, lo_core[2] = {nb0, nb1},
                hi_core[2] = {0, 0};
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (filled(b) == 0) continue;
      const std::size_t at[2] = {b % nb0, b / nb0};
      for (std::size_t c = 0; c < 2; ++c) {
        lo_all[c] = std::min(lo_all[c], at[c]);
        hi_all[c] = std::max(hi_all[c], at[c]);
        if (core[b]) {
          lo_core[c] = std::min(lo_core[c], at[c]);
          hi_core[c] = std::max(hi_core[c], at[c]);
        }
      }
      if (!core[b]) halo += filled(b);
    }
    if (halo == 0) return false;
    const double area_all = static_cast<double>(hi_all[0] - lo_all[0] + 1) *
                            static_cast<double>(hi_all[1] - lo_all[1] + 1);
    const double area_core = static_cast<double>(hi_core[0] - lo_core[0] + 1) *
                             static_cast<double>(hi_core[1] - lo_core[1] + 1);
    bool worth = 2.0 * area_core <= area_all;
    if (!worth) {
      worth = coarse_.label_components(&core) > std::max<std::size_t>(nc_all, 1);
      coarse_.label_components();
    }
    if (!worth) return false;

    // the core's points (in box order) and the halo's
    members_.clear();
    out_.clear();
    for (std::size_t b = 0; b < nboxes; ++b) {
      std::vector<std::size_t>& to = core[b] ? members_ : out_;
      to.insert(to.end(), order.begin() + start[b], order.begin() + start[b + 1]);
    }
    const std::size_t m = members_.size();
    sub_evaluate(0, depth_, peels_ + 1, Y, d, stride, members_.data(), m, energy, executor);
    used_children_ = 1;

    // the coarse grid: set 0 the halo's charges, set 1 every point's
    const InterpolationGrid& grid = coarse_;
    coarse_.spread(
        2,
        [&grid, &core](std::size_t o, std::size_t i) {
          return o == 1 || !core[grid.box_of_point(i)] ? 1.0 : 0.0;
        },
        executor);
    model_kernels(coarse_, prob_.params, d, energy, executor);
    std::vector<std::size_t> ks, cs2;
    two_set_outputs(d, energy, ks, cs2);
    phi_.resize(ks.size() * n);
    // (core targets read set 0, halo targets set 1: outputs alternate sets)
    coarse_.potentials(
        ks, cs2, phi_.data(),
        [&grid, &core](std::size_t o, std::size_t i) {
          return (o % 2 == 1) == !core[grid.box_of_point(i)];
        },
        executor);
    checkpoint(executor);

    // the near fields, directly, over the coordinates in box order
    gather_sorted(order, Y, n, d, stride);
    const double* X = sx_.data();
    const double* Yy = d == 2 ? sy_.data() : nullptr;
    executor.parallel_for(
        0, nb1,
        [&](std::size_t r0, std::size_t r1) {
          for (std::size_t by = r0; by < r1; ++by) {
            const std::size_t y0 = by > R ? by - R : 0, y1 = std::min(nb1, by + R + 1);
            for (std::size_t bx = 0; bx < nb0; ++bx) {
              const std::size_t box = by * nb0 + bx;
              if (filled(box) == 0) continue;
              const std::size_t x0 = bx > R ? bx - R : 0, x1 = std::min(nb0, bx + R + 1);
              const bool halo_box = !core[box];
              // a core box reads the halo boxes of its near field (if any)
              bool any = halo_box;
              for (std::size_t ry = y0; ry < y1 && !any; ++ry) {
                for (std::size_t rx = x0; rx < x1 && !any; ++rx) {
                  const std::size_t o = ry * nb0 + rx;
                  any = !core[o] && filled(o) > 0;
                }
              }
              if (!any) continue;
              for (std::size_t s = start[box]; s < start[box + 1]; ++s) {
                const double xi = X[s], yi = Yy != nullptr ? Yy[s] : 0.0;
                double acc[3] = {0.0, 0.0, 0.0};
                for (std::size_t ry = y0; ry < y1; ++ry) {
                  if (halo_box) {
                    run_but(s, xi, yi, X, Yy, start[ry * nb0 + x0], start[ry * nb0 + x1], energy,
                            acc);
                    continue;
                  }
                  for (std::size_t rx = x0; rx < x1; ++rx) {
                    const std::size_t o = ry * nb0 + rx;
                    if (core[o] || filled(o) == 0) continue;
                    kernels_->near_run(prob_, xi, yi, X, Yy, start[o], start[o + 1], energy, acc);
                  }
                }
                const std::size_t i = order[s];
                for (std::size_t c = 0; c <= d; ++c) near_[c * n + i] = acc[c == d ? 2 : c];
              }
            }
          }
        },
        1);

    // core points: their own sums plus the halo's; halo points: everything
    std::vector<std::size_t>& slot = member_slot_;
    slot.assign(n, n);
    for (std::size_t k = 0; k < m; ++k) slot[members_[k]] = k;
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            const std::size_t k = slot[i];
            const std::size_t set = k == n ? 1 : 0;
            for (std::size_t c = 0; c < d; ++c) {
              const double own = k == n ? 0.0 : sub_f_[c * m + k];
              F[c * stride + i] = own + phi_[(2 * c + set) * n + i] + near_[c * n + i];
            }
            if (energy) {
              const double own = k == n ? 0.0 : sub_e_[k];
              E[i] = own + phi_[(2 * d + set) * n + i] + near_[d * n + i];
            }
          }
        },
        4096);
    return true;
  }

  // The components of at most kDirect points: their pairs summed directly,
  // one task per component.
  template <typename Executor>
  void direct_components(const double* Y, std::size_t d, std::size_t stride, double* F,
                         bool energy, double* E, Executor& executor) {
    small_.clear();
    const std::size_t nc = mstart_.size() - 1;
    for (std::size_t c = 0; c < nc; ++c) {
      if (mstart_[c + 1] - mstart_[c] <= kDirect) small_.push_back(c);
    }
    if (small_.empty()) return;
    executor.parallel_for(
        0, small_.size(),
        [&](std::size_t t0, std::size_t t1) {
          double x[kDirect], y[kDirect];
          for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t c = small_[t], m = mstart_[c + 1] - mstart_[c];
            const std::size_t* idx = members_.data() + mstart_[c];
            for (std::size_t k = 0; k < m; ++k) {
              x[k] = Y[idx[k]];
              y[k] = d == 2 ? Y[stride + idx[k]] : 0.0;
            }
            for (std::size_t k = 0; k < m; ++k) {
              double acc[3] = {0.0, 0.0, 0.0};
              const double* yy = d == 2 ? y : nullptr;
              kernels_->near_run(prob_, x[k], y[k], x, yy, 0, k, energy, acc);
              kernels_->near_run(prob_, x[k], y[k], x, yy, k + 1, m, energy, acc);
              const std::size_t i = idx[k];
              F[i] += acc[0];
              if (d == 2) F[stride + i] += acc[1];
              if (energy) E[i] += acc[2];
            }
          }
        },
        1);
  }

  // The near field, exactly: near_[c * n + i] = sum_j c_ij (y_i - y_j)
  // and near_[d * n + i] = sum_j e_ij over the other points j of the
  // neighbouring boxes (in 2-D the three boxes of a row are consecutive in
  // the sorted order: one run per row).
  template <typename Executor>
  void near(const double* Y, std::size_t n, std::size_t d, std::size_t stride, bool energy,
            Executor& executor) {
    const std::vector<std::size_t>& order = grid_.order();
    const std::vector<std::size_t>& start = grid_.box_start();
    const std::size_t nb0 = grid_.boxes(0), nb1 = d == 2 ? grid_.boxes(1) : 1;
    const std::size_t R = grid_.near_boxes();
    gather_sorted(order, Y, n, d, stride);
    const double* X = sx_.data();
    const double* Yy = d == 2 ? sy_.data() : nullptr;
    // one task per row of boxes (any split gives the same sums)
    executor.parallel_for(
        0, nb1,
        [&](std::size_t r0, std::size_t r1) {
          for (std::size_t by = r0; by < r1; ++by) {
            const std::size_t y0 = d == 2 && by > R ? by - R : 0;
            const std::size_t y1 = d == 2 ? std::min(nb1, by + R + 1) : 1;
            for (std::size_t bx = 0; bx < nb0; ++bx) {
              const std::size_t box = by * nb0 + bx;
              const std::size_t x0 = bx > R ? bx - R : 0, x1 = std::min(nb0, bx + R + 1);
              for (std::size_t s = start[box]; s < start[box + 1]; ++s) {
                const double xi = X[s], yi = Yy != nullptr ? Yy[s] : 0.0;
                double acc[3] = {0.0, 0.0, 0.0};
                for (std::size_t ry = y0; ry < y1; ++ry) {
                  run_but(s, xi, yi, X, Yy, start[ry * nb0 + x0], start[ry * nb0 + x1], energy,
                          acc);
                }
                const double fx = acc[0], fy = acc[1], en = acc[2];
                const std::size_t i = order[s];
                near_[i] = fx;
                if (d == 2) near_[n + i] = fy;
                near_[d * n + i] = en;
              }
            }
          }
        },
        1);
  }

  // The outputs of two charge sets on a coarse grid: output 2 c + set is
  // kernel c (the d force kernels, then the energy when wanted) on `set`.
  static void two_set_outputs(std::size_t d, bool energy, std::vector<std::size_t>& ks,
                              std::vector<std::size_t>& cs) {
    for (std::size_t c = 0; c <= d; ++c) {
      if (c == d && !energy) break;
      for (std::size_t set = 0; set < 2; ++set) {
        ks.push_back(c);
        cs.push_back(set);
      }
    }
  }

  // The coordinates in a grid's box order (sx_, sy_; `order` from the
  // grid), and near_ zeroed for the near fields.
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
  void run_but(std::size_t s, double xi, double yi, const double* X, const double* Yy,
               std::size_t lo, std::size_t hi, bool energy, double* acc) const {
    if (s >= lo && s < hi) {
      kernels_->near_run(prob_, xi, yi, X, Yy, lo, s, energy, acc);
      kernels_->near_run(prob_, xi, yi, X, Yy, s + 1, hi, energy, acc);
    } else {
      kernels_->near_run(prob_, xi, yi, X, Yy, lo, hi, energy, acc);
    }
  }

  GridSettings gs_;
  const CostKernels* kernels_ = nullptr;
  int depth_ = 0, peels_ = 0;
  int idle_whole_ = 0, idle_split_ = 0;  // evaluations since each path ran
  // shared by this grid's children (interpolation.h)
  std::shared_ptr<SpectrumCache> cache_;
  std::shared_ptr<GridWorkspace> work_;
  PairProblem prob_ = {};
  InterpolationGrid grid_, coarse_;
  std::vector<double> phi_, near_, sx_, sy_;
  // by components: their points, the grids of the larger ones, scratch
  std::vector<std::size_t> mstart_, members_, small_, out_, member_slot_;
  std::vector<unsigned char> core_box_;
  std::vector<GridRepulsion> children_;
  std::size_t used_children_ = 0;  // by the last split
  int unused_ = 0;                 // evaluations since this grid last ran
  std::vector<double> sub_y_, sub_f_, sub_e_, out_y_;
};

// The all-pairs terms that fixed points (a reference layout) exert on any
// position x: F(x) = sum_j c(|x - r_j|^2) (x - r_j) and E(x) = sum_j e(...)
// over the reference points r_j (t-SNE: E is x's Z over the reference; the
// others: its all-pairs cost). Used to place new points in an embedding
// whose points do not move: the reference's part of the grid (its charges,
// the FFTs, the node potentials) is computed once, so each later position
// costs one interpolation plus its exact near field, whatever the
// reference's size.
//
// With `approximate` (1 or 2 dimensions) the grid of GridRepulsion is laid
// over the reference and a margin around it; a position outside the grid is
// summed exactly over every reference point. Otherwise every position is
// summed exactly (in any dimension).
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

  std::size_t dimensions() const { return d_; }

  // F (d values) and E at position x (d coordinates); E only when
  // `energy` (t-SNE always needs it: it is Z).
  void at(const double* x, bool energy, double* F, double& E) const {
    double acc[3] = {0.0, 0.0, 0.0};
    std::size_t box = 0;
    if (grid_mode_ && grid_.box_at(x, box)) {
      double phi[3] = {0.0, 0.0, 0.0};
      grid_.potentials_at(x, box, d_ + (energy ? 1 : 0), phi);
      if (grid_.near_field()) near(x, box, energy, acc);
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
  void build_grid(const double* R, GridSettings gs, Executor& executor) {
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
    const std::size_t n = n_;
    grid_.layout(pts_.data(), m, d_, m, gs, executor);
    grid_.spread(1, [n](std::size_t, std::size_t i) { return i < n ? 1.0 : 0.0; }, executor);
    const std::size_t d = d_;
    model_kernels(grid_, prob_.params, d, true, executor);
    std::vector<std::size_t> ks, cs;
    for (std::size_t c = 0; c <= d; ++c) {
      ks.push_back(c);
      cs.push_back(0);
    }
    std::vector<double> phi((d + 1) * m);
    grid_.potentials(ks, cs, phi.data(), executor);
    // the reference points in box order, each box's run of them, for the
    // near field and for the exact sums off the grid
    const std::vector<std::size_t>& order = grid_.order();
    const std::vector<std::size_t>& start = grid_.box_start();
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
    const std::size_t nb0 = grid_.boxes(0), nb1 = d_ == 2 ? grid_.boxes(1) : 1;
    const std::size_t R = grid_.near_boxes();
    const std::size_t bx = box % nb0, by = box / nb0;
    const std::size_t y0 = d_ == 2 && by > R ? by - R : 0;
    const std::size_t y1 = d_ == 2 ? std::min(nb1, by + R + 1) : 1;
    const std::size_t x0 = bx > R ? bx - R : 0, x1 = std::min(nb0, bx + R + 1);
    for (std::size_t ry = y0; ry < y1; ++ry) {
      const std::size_t lo = src_start_[ry * nb0 + x0], hi = src_start_[ry * nb0 + x1];
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
  InterpolationGrid grid_;
  std::vector<double> pts_;         // the grid's points (reference, two corners)
  std::vector<double> sx_, sy_;     // reference coordinates (in box order on a grid)
  std::vector<std::size_t> src_start_;
  std::vector<double> rows_;        // the reference, for the exact sums beyond 2-D
};

}  // namespace lsnn

#endif  // LSNN_FFT_REPULSION_H
