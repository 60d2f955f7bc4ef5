// The shape of a grid over a set of points (plan_grid_shape()): the boxes
// the settings ask for, then, for a grid with a near field and a pair
// weight, the shape chosen by cost (GridShapeChooser), then a wider box on
// the width ladder when that width's spectra are cached. Deterministic: a
// function of the coordinates, the settings and which spectra are cached.
// No FFT is run here.
#ifndef LSNN_FARFIELD_SHAPE_PLAN_H
#define LSNN_FARFIELD_SHAPE_PLAN_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "grid_shape.h"
#include "settings.h"

namespace lsnn {

// Which kernel spectra the cache will hold when a grid of the plan runs
// (the planner runs before any of them): those cached now, and those that
// the grids planned before it will add.
class SpectraAhead {
 public:
  virtual ~SpectraAhead() = default;
  bool available(const GridKernelKey& key) const {
    if (cached(key)) return true;
    for (const GridKernelKey& k : pending_) {
      if (k == key) return true;
    }
    return false;
  }
  // The grid of region `region` (its coarse grid when `coarse`) will run
  // with `key`: unless it holds those spectra already, it adds them.
  void will_run(std::size_t region, bool coarse, const GridKernelKey& key) {
    if (!held(region, coarse, key)) pending_.push_back(key);
  }
  void clear() { pending_.clear(); }

 protected:
  virtual bool cached(const GridKernelKey& key) const = 0;
  virtual bool held(std::size_t region, bool coarse, const GridKernelKey& key) const = 0;

 private:
  std::vector<GridKernelKey> pending_;
};

// An empty cache and no grids yet: a fresh evaluator's first evaluation.
class NothingCached : public SpectraAhead {
 protected:
  bool cached(const GridKernelKey&) const override { return false; }
  bool held(std::size_t, bool, const GridKernelKey&) const override { return false; }
};

// One shape costed by GridShapeChooser.
struct ShapeCandidate {
  double scale;  // boxes `scale` times finer than the settings' (< 1: coarser)
  std::size_t nodes_per_box, near_depth;
  bool near_field;
  double cost;  // estimated time of one evaluation, in FFT element-levels
  double bytes;  // GridShape::memory_bytes()
};

// How plan_grid_shape() came to its shape.
struct ShapeReport {
  // the boxes per dimension at the settings' width (or the fewest boxes)
  std::size_t base_boxes[2] = {1, 1};
  // the fewest boxes per dimension (min_boxes, points_per_box)
  std::size_t floor_boxes[2] = {1, 1};
  // boxes widened to keep within FarFieldTuning::max_nodes_per_dim
  bool widened = false;
  // shape chosen by cost among `costed` (chosen: its index, or none when no
  // candidate fitted and the settings' shape was kept)
  bool by_cost = false;
  std::vector<ShapeCandidate> costed;
  std::size_t chosen = std::numeric_limits<std::size_t>::max();
  // the settings' memory budget (bytes), and how many shapes cheaper than
  // the chosen one it ruled out
  double budget = 0.0;
  std::size_t over_budget = 0;
  // ladder steps taken per dimension to reuse cached spectra
  int wider_steps[2] = {0, 0};
};

// The points' centre and padded range per dimension.
struct PointExtent {
  double mid[2] = {0.0, 0.0}, span[2] = {1.0, 1.0};
};

// The boxes along dimension c as the settings ask: exactly box_width wide
// while there are at least the floor of boxes (the kernel's spectrum then
// changes only when the grid grows), else the floor of boxes over the
// range, on the width ladder; a little room on both sides so that no point
// sits on the outer edge.
inline void lay_boxes(const double* Y, std::size_t n, std::size_t stride, std::size_t c,
                      const GridSettings& gs, GridShape& shape, PointExtent& extent,
                      ShapeReport& report) {
  const double* y = Y + c * stride;
  double lo = y[0], hi = y[0];
  for (std::size_t i = 1; i < n; ++i) {
    lo = std::min(lo, y[i]);
    hi = std::max(hi, y[i]);
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    throw std::runtime_error("the coordinates are not finite");
  }
  const double range = hi - lo;
  const double pad = 1e-9 * std::max(range, std::max(std::fabs(lo), std::fabs(hi))) +
                     std::numeric_limits<double>::min();
  double boxes = std::ceil((range + 2.0 * pad) / gs.box_width);
  double minbd = std::max(gs.min_boxes, 1);
  if (gs.near_field && gs.points_per_box > 0.0) {
    const double per_dim =
        shape.dims == 2 ? std::sqrt(n / gs.points_per_box) : n / gs.points_per_box;
    minbd = std::max(minbd, std::floor(per_dim));
  }
  const double max_boxes =
      std::floor(static_cast<double>(FarFieldTuning::max_nodes_per_dim) / gs.nodes);
  minbd = std::min(minbd, max_boxes);
  report.floor_boxes[c] = static_cast<std::size_t>(minbd);
  if (!(boxes <= max_boxes)) {
    if (!gs.widen || !std::isfinite(range)) {
      throw std::length_error(
          "the layout is too wide for the interpolation grid (over 6,000 nodes per "
          "dimension); the optimisation has probably diverged (try a smaller step size)");
    }
    report.widened = true;
    boxes = 0.0;  // the most boxes over the range below
    minbd = max_boxes;
  }
  const std::size_t minb = static_cast<std::size_t>(minbd);
  if (boxes >= static_cast<double>(minb)) {
    shape.boxes[c] = static_cast<std::size_t>(boxes);
    shape.box_width[c] = gs.box_width;
  } else {
    shape.boxes[c] = minb;
    shape.box_width[c] = ladder_width((range + 2.0 * pad) / static_cast<double>(minb));
  }
  shape.origin[c] = GridShape::centred_origin(0.5 * (lo + hi), shape.box_width[c], shape.boxes[c]);
  extent.mid[c] = 0.5 * (lo + hi);
  extent.span[c] = range + 2.0 * pad;
  report.base_boxes[c] = shape.boxes[c];
}

// The grid's resolution, chosen by cost. A fixed box width is dear in two
// ways: the near field's exact sums grow as the square of the points per
// box (points crowded into a few boxes), and the FFTs grow with the
// layout's area, not with n (a wide layout). So grids 2, 4, 8 and 16 times
// finer and, while the grid has more nodes than there are points, 2, 4, 8,
// ... times coarser (down to the floor of boxes) are costed, near pairs
// against FFT and interpolation work, each with the shapes that keep the
// accuracy at its box width (nodes per box and near-field depth), and the
// cheapest is taken. Coarser boxes keep the accuracy: the far pairs stay at
// least near_boxes boxes apart, where the kernels are power laws
// (scale-free: the interpolation error depends on the nodes per box, not on
// the width). So an evaluation costs at most about what a grid of n nodes
// with its near field costs, whatever the layout's width.
class GridShapeChooser {
 public:
  GridShapeChooser(const double* Y, std::size_t n, std::size_t stride, const GridSettings& gs,
                   const GridShape& base, const PointExtent& extent, ShapeReport& report)
      : Y_(Y), n_(n), stride_(stride), gs_(gs), base_(base), extent_(extent), report_(report),
        d_(base.dims), deep_(base.near_depth) {
    list_shapes();
  }

  // The chosen shape (boxes, nodes per box, near field, max_width): the
  // cheapest that fits the memory budget, else the one needing the least
  // memory.
  GridShape choose() {
    double best = HUGE_VAL;
    bool found = false;
    report_.by_cost = true;
    report_.costed.clear();
    report_.budget = gs_.memory_mb * 1048576.0;
    std::vector<Shape> shape_of;
    for (const double scale : scales()) {
      if (fft_cost(scale, p_min_) >= best) continue;
      const GridShape placed = place(scale);
      double hmax = placed.box_width[0];
      if (d_ == 2) hmax = std::max(hmax, placed.box_width[1]);
      bool counted = false;
      for (const Shape& sh : shapes_) {
        if (hmax > sh.max_width || fft_cost(scale, sh.p) >= best) continue;
        bool fits = true;
        for (std::size_t c = 0; c < d_; ++c) {
          fits = fits && placed.boxes[c] * sh.p <= FarFieldTuning::max_nodes_per_dim;
        }
        if (!fits) continue;
        if (sh.near && !counted) {
          count_boxes(placed);
          counted = true;
        }
        const double t = cost(scale, sh);
        const double bytes = memory_bytes(placed, sh.p);
        report_.costed.push_back({scale, sh.p, sh.R, sh.near, t, bytes});
        shape_of.push_back(sh);
        if (t < best && bytes <= report_.budget) {
          best = t;
          found = true;
          report_.chosen = report_.costed.size() - 1;
        }
      }
    }
    const std::vector<ShapeCandidate>& costed = report_.costed;
    if (!found) {
      for (std::size_t k = 0; k < costed.size(); ++k) {
        if (report_.chosen >= costed.size() || costed[k].bytes < costed[report_.chosen].bytes) {
          report_.chosen = k;
        }
      }
    }
    report_.over_budget = 0;
    for (const ShapeCandidate& c : costed) {
      report_.over_budget += found && c.bytes > report_.budget && c.cost < best;
    }
    if (report_.chosen >= costed.size()) {
      // nothing costed: the settings' boxes and depth
      GridShape chosen = place(1.0);
      chosen.near_depth = deep_;
      return chosen;
    }
    const ShapeCandidate& c = costed[report_.chosen];
    const Shape& sh = shape_of[report_.chosen];
    GridShape chosen = place(c.scale);
    chosen.nodes_per_box = sh.p;
    chosen.max_width = sh.max_width;
    chosen.near_field = sh.near;
    chosen.near_depth = sh.near ? sh.R : deep_;
    return chosen;
  }

 private:
  // A shape a grid may take: nodes per box, near field and its depth, and
  // the widest boxes at which it keeps the accuracy.
  struct Shape {
    std::size_t p, R;
    bool near;
    double max_width;
  };

  // no near field where the boxes are narrower than the width at which the
  // grid alone resolves the kernel, one box deep below shallow_width, the
  // settings' depth beyond; the same with fine_nodes nodes
  void list_shapes() {
    const std::size_t p0 = base_.nodes_per_box;
    if (gs_.smooth_width > 0.0) shapes_.push_back({p0, 0, false, gs_.smooth_width});
    if (gs_.shallow_width > 0.0) shapes_.push_back({p0, 1, true, gs_.shallow_width});
    shapes_.push_back({p0, deep_, true, HUGE_VAL});
    p_min_ = p0;
    if (gs_.fine_nodes > 0) {
      const std::size_t pf = static_cast<std::size_t>(gs_.fine_nodes);
      if (gs_.fine_smooth_width > 0.0) shapes_.push_back({pf, 0, false, gs_.fine_smooth_width});
      shapes_.push_back({pf, 1, true, HUGE_VAL});
      p_min_ = std::min(p_min_, pf);
    }
  }

  // The refinements costed, coarsest first: coarser only while the grid
  // outnumbers the points and never below the floor of boxes; finer up to
  // max_refine_factor and max_refined_nodes_per_dim.
  std::vector<double> scales() const {
    const double p0 = static_cast<double>(base_.nodes_per_box);
    std::vector<double> scales;
    for (double scale = 0.5;; scale *= 0.5) {
      std::size_t nodes = 1;
      bool above_floor = true;
      for (std::size_t c = 0; c < d_; ++c) {
        nodes *= static_cast<std::size_t>(std::ceil(static_cast<double>(base_.boxes[c]) * scale * 2.0)) *
                 base_.nodes_per_box;
        above_floor = above_floor && std::ceil(static_cast<double>(base_.boxes[c]) * scale) >=
                                         static_cast<double>(report_.floor_boxes[c]);
      }
      if (nodes <= n_ || !above_floor) break;
      scales.insert(scales.begin(), scale);
    }
    scales.push_back(1.0);
    for (double scale = 2.0; scale <= FarFieldTuning::max_refine_factor; scale *= 2.0) {
      bool fits = true;
      for (std::size_t c = 0; c < d_; ++c) {
        fits = fits && static_cast<double>(base_.boxes[c]) * scale * p0 <=
                           FarFieldTuning::max_refined_nodes_per_dim;
      }
      if (!fits) break;
      scales.push_back(scale);
    }
    return scales;
  }

  // boxes `scale` times finer (scale > 1) or 1 / scale times coarser
  GridShape place(double scale) const {
    GridShape g = base_;
    for (std::size_t c = 0; c < d_; ++c) {
      const double boxes = std::ceil(static_cast<double>(base_.boxes[c]) * scale);
      g.boxes[c] = static_cast<std::size_t>(std::max(1.0, boxes));
      g.box_width[c] = scale == 1.0
                           ? base_.box_width[c]
                           : ladder_width(extent_.span[c] / static_cast<double>(g.boxes[c]));
      g.origin[c] = GridShape::centred_origin(extent_.mid[c], g.box_width[c], g.boxes[c]);
    }
    return g;
  }

  // the FFTs' share of the time (a lower bound of the whole), with p nodes
  // per box: 2d + 3 transforms (d + 1 kernels and their inverses, the
  // charges)
  double fft_cost(double scale, std::size_t p) const {
    double fft = 1.0;
    for (std::size_t c = 0; c < d_; ++c) {
      const double boxes = std::max(1.0, std::ceil(static_cast<double>(base_.boxes[c]) * scale));
      fft *= static_cast<double>(fft_size(2 * static_cast<std::size_t>(boxes) * p));
    }
    return fft * std::log2(fft) * static_cast<double>(2 * d_ + 3);
  }

  static double memory_bytes(GridShape g, std::size_t p) {
    g.nodes_per_box = p;
    g.finish();
    return g.memory_bytes();
  }

  // estimated time of one evaluation with the boxes `scale` times finer and
  // the grid shaped `sh` (boxes counted by count_boxes())
  double cost(double scale, const Shape& sh) {
    const double pd = d_ == 2 ? static_cast<double>(sh.p * sh.p) : static_cast<double>(sh.p);
    // spreading the charges and interpolating the potentials: the 2d + 3
    // transforms' vectors at pd nodes per point
    const double fft = fft_cost(scale, sh.p) + FarFieldTuning::interpolation_weight *
                                                   static_cast<double>(n_) * pd *
                                                   static_cast<double>(2 * d_ + 3);
    if (!sh.near) return fft;
    const double pairs = near_pairs(sh.R);
    // and the grid's own near sums taken off again (remove_near): every
    // node of a filled box against the nodes of its neighbourhood, for
    // d + 1 kernels
    const double reach = static_cast<double>((2 * sh.R + 1) * sh.p);
    const double table = d_ == 2 ? reach * reach : reach;
    return fft + gs_.pair_weight * pairs + filled_ * pd * table * static_cast<double>(d_ + 1);
  }

  // the points per box of `placed`, as 2-D prefix sums (row 0 and column 0
  // stay 0), for near_pairs()
  void count_boxes(const GridShape& placed) {
    counted_ = placed;
    const std::size_t nx = placed.boxes[0], ny = d_ == 2 ? placed.boxes[1] : 1;
    count_.assign((nx + 1) * (ny + 1), 0);
    for (std::size_t i = 0; i < n_; ++i) {
      const std::size_t b = placed.box_of(Y_, stride_, i);
      ++count_[(b / nx + 1) * (nx + 1) + b % nx + 1];
    }
    for (std::size_t y = 1; y <= ny; ++y) {
      for (std::size_t x = 1; x <= nx; ++x) {
        count_[y * (nx + 1) + x] += count_[y * (nx + 1) + x - 1] + count_[(y - 1) * (nx + 1) + x] -
                                    count_[(y - 1) * (nx + 1) + x - 1];
      }
    }
    pairs_at_.assign(deep_ + 1, -1.0);
    filled_ = -1.0;
  }

  // near pairs of the counted boxes: over the filled boxes, the box's count
  // times that of its neighbourhood R boxes deep; filled_ the boxes holding
  // points
  double near_pairs(std::size_t R) {
    if (pairs_at_[R] >= 0.0) return pairs_at_[R];
    const std::size_t nx = counted_.boxes[0], ny = d_ == 2 ? counted_.boxes[1] : 1;
    auto rect = [&](std::size_t x0, std::size_t x1, std::size_t y0, std::size_t y1) {
      return static_cast<double>(count_[y1 * (nx + 1) + x1] - count_[y0 * (nx + 1) + x1] -
                                 count_[y1 * (nx + 1) + x0] + count_[y0 * (nx + 1) + x0]);
    };
    double pairs = 0.0, boxes = 0.0;
    for (std::size_t y = 0; y < ny; ++y) {
      for (std::size_t x = 0; x < nx; ++x) {
        const double own = rect(x, x + 1, y, y + 1);
        if (own == 0.0) continue;
        boxes += 1.0;
        const BoxWindow w = GridShape::window_in(nx, ny, x, y, R);
        pairs += own * rect(w.x0, w.x1, w.y0, w.y1);
      }
    }
    filled_ = boxes;
    return pairs_at_[R] = pairs;
  }

  const double* Y_;
  std::size_t n_, stride_;
  const GridSettings& gs_;
  const GridShape& base_;
  const PointExtent& extent_;
  ShapeReport& report_;
  std::size_t d_, deep_, p_min_ = 1;
  std::vector<Shape> shapes_;
  GridShape counted_;
  std::vector<std::size_t> count_;
  std::vector<double> pairs_at_;
  double filled_ = -1.0;
};

// A grid may take boxes a step or two of the ladder wider (in either
// dimension) when the kernel spectra of that width will be in the cache:
// the padded grid is the same and the boxes still cover the points; the
// accuracy is that of the wider boxes, so they stay within the widest at
// which the grid's shape keeps it (max_width), and a near field sums at
// most twice the pairs.
inline void prefer_cached_width(GridShape& shape, const PointExtent& extent,
                                const SpectraAhead& ahead, ShapeReport& report) {
  const int wide = FarFieldTuning::wider_steps;
  const std::size_t d = shape.dims;
  const int steps1 = d == 2 ? wide : 0;
  for (int total = 1; total <= wide + steps1; ++total) {
    for (int s1 = std::min(total, steps1); s1 >= 0 && total - s1 <= wide; --s1) {
      const int steps[2] = {total - s1, s1};
      double h[2] = {shape.box_width[0], shape.box_width[1]};
      bool fits = true;
      for (std::size_t c = 0; c < d; ++c) {
        for (int k = 0; k < steps[c]; ++k) h[c] = ladder_width(h[c] * 1.01);
        fits = fits && h[c] <= shape.max_width;
      }
      if (!fits || !ahead.available(shape.kernel_key(h[0], h[1], false))) continue;
      for (std::size_t c = 0; c < d; ++c) {
        shape.box_width[c] = h[c];
        shape.origin[c] = GridShape::centred_origin(extent.mid[c], h[c], shape.boxes[c]);
        report.wider_steps[c] = steps[c];
      }
      return;
    }
  }
}

// The shape of a grid over the points Y (coordinate c of point i at
// Y[c * stride + i], d = 1 or 2) with settings gs. `ahead`: the spectra the
// cache will hold (null: the grid has no cache).
inline GridShape plan_grid_shape(const double* Y, std::size_t n, std::size_t d,
                                 std::size_t stride, const GridSettings& gs,
                                 const SpectraAhead* ahead, ShapeReport& report) {
  if (d < 1 || d > 2) throw std::invalid_argument("grid interpolation needs 1 or 2 dimensions");
  const int most = static_cast<int>(FarFieldTuning::max_nodes_per_box);
  if (gs.nodes < 1 || gs.nodes > most || !(gs.box_width > 0.0) || gs.fine_nodes < 0 ||
      gs.fine_nodes > most) {
    throw std::invalid_argument("grid interpolation needs 1 to 32 nodes and box_width > 0");
  }
  report = ShapeReport();
  GridShape shape;
  shape.dims = d;
  shape.nodes_per_box = static_cast<std::size_t>(gs.nodes);
  shape.near_field = gs.near_field;
  shape.near_depth = static_cast<std::size_t>(std::max(gs.near_boxes, 1));
  PointExtent extent;
  for (std::size_t c = 0; c < d; ++c) lay_boxes(Y, n, stride, c, gs, shape, extent, report);
  const bool refined = gs.near_field && gs.pair_weight > 0.0;
  if (refined) shape = GridShapeChooser(Y, n, stride, gs, shape, extent, report).choose();
  shape.finish();
  if (refined && ahead != nullptr) prefer_cached_width(shape, extent, *ahead, report);
  return shape;
}

}  // namespace lsnn

#endif  // LSNN_FARFIELD_SHAPE_PLAN_H
