// The far-field plan: which regions of a layout are summed how, computed
// from the coordinates and the settings before any FFT runs (FarFieldPlanner).
//
// A uniform grid over a wide layout of dense clusters is dear either way:
// fine boxes make FFTs over mostly empty space, coarse boxes a near field
// that sums whole clusters. So the planner splits the layout into regions:
//  - shed: a sparse halo around dense clusters (the points of thinly filled
//    boxes of a coarse grid, away from the well filled ones) is summed on
//    the coarse grid, the dense core is a region of its own extent;
//  - peel: a few outlying points (every component but the largest, at most
//    FarFieldTuning::peel_points) are summed directly against every point,
//    the largest component is a region of its own extent;
//  - components: on a coarse grid (n / 16 to n nodes, boxes at least
//    FarFieldTuning::coarse_width wide) the filled boxes fall into
//    components at least two boxes apart; the coarse grid sums the pairs of
//    points in different components (far pairs, at the accuracy of the
//    default grids), each component's own pairs are a region of their own
//    (or summed directly when it has at most direct_points points);
//  - grid: one grid over the region, its shape chosen by shape_plan.h.
// The region tree is at most max_depth component levels and max_peels sheds
// and peels deep. An evaluation thus costs about what the grids over the
// clusters themselves cost, plus O(n), however far apart the clusters are.
// The executors are far_field.h (regions) and box_grid.h, convolution.h,
// near_field.h (each grid); describe_plan() prints the plan.
#ifndef LSNN_FARFIELD_PLAN_H
#define LSNN_FARFIELD_PLAN_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <vector>

#include "box_grid.h"
#include "convolution.h"
#include "settings.h"
#include "shape_plan.h"

namespace lsnn {

enum class RegionKind { grid, shed, peel, components };

// Why a region is split as it is (or not split): the numbers the decisions
// compared.
struct SplitReport {
  // why the region is one grid (kind grid), else empty
  const char* whole_reason = "";
  // the halo test, on a coarse grid of shed_nodes_per_point
  bool shed_tested = false;
  GridShape shed_grid;
  std::size_t fullest = 0, well = 0, halo = 0, components_all = 0, components_core = 0;
  double area_all = 0.0, area_core = 0.0;
  const char* shed_outcome = "";
  // the component test: the coarse grids tried and their components
  std::size_t tries = 0;
  double tried_nodes_per_point[3] = {0.0, 0.0, 0.0};
  std::size_t tried_components[3] = {0, 0, 0};
  std::size_t largest_points = 0, other_points = 0;
  // the node pairs that taking off the components' own sums costs, and the
  // most it may cost
  double removal_work = 0.0, removal_budget = 0.0;
};

struct FarFieldRegion {
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  RegionKind kind = RegionKind::grid;
  // the parent region and which of its children this is (its slot)
  std::size_t parent = none, slot = 0;
  int depth = 0, peels = 0;
  // the region's points: coordinate c of point k at coords[c * stride + k];
  // point k is point points[k] of the parent (null for the whole layout)
  std::size_t n = 0, stride = 0;
  const double* coords = nullptr;
  const std::size_t* points = nullptr;
  std::vector<double> own_coords;
  // kind grid: the grid's shape and how it was chosen
  GridShape grid;
  ShapeReport shape_report;
  // the other kinds: the coarse grid over the region and its components
  BoxGrid coarse;
  BoxComponents components;
  // shed: the coarse boxes of the core, and the core's points in box order
  std::vector<unsigned char> core_box;
  std::vector<std::size_t> core_points;
  // components and peel: the components' points, component c's at
  // component_points[component_start[c] ..), and the largest component
  std::vector<std::size_t> component_points, component_start;
  std::size_t largest = 0;
  // peel: the points of every other component
  std::vector<std::size_t> outliers;
  // components: the components summed directly, and the removal of the
  // components' own sums from the coarse grid
  std::vector<std::size_t> direct_components;
  ComponentRemoval removal;
  // the child regions, in the order they run
  std::vector<std::size_t> children;
  SplitReport report;
};

class FarFieldPlan {
 public:
  std::size_t size() const { return count_; }
  const FarFieldRegion& region(std::size_t k) const { return regions_[k]; }
  FarFieldRegion& region(std::size_t k) { return regions_[k]; }
  const GridSettings& settings() const { return settings_; }
  std::size_t dims() const { return dims_; }

  // Starts a new plan (the regions' buffers are kept for reuse).
  void reset(const GridSettings& gs, std::size_t d) {
    settings_ = gs;
    dims_ = d;
    count_ = 0;
  }
  // A new region (index returned); references to regions stay valid.
  std::size_t add() {
    if (count_ == regions_.size()) regions_.emplace_back();
    FarFieldRegion& r = regions_[count_];
    r.kind = RegionKind::grid;
    r.parent = FarFieldRegion::none;
    r.slot = 0;
    r.points = nullptr;
    r.children.clear();
    r.report = SplitReport();
    return count_++;
  }

 private:
  GridSettings settings_;
  std::size_t dims_ = 1;
  std::size_t count_ = 0;
  std::deque<FarFieldRegion> regions_;
};

namespace detail {

// The coarse grid of about n * nodes_per_point nodes (at least
// coarse_min_nodes), boxes at least coarse_width wide, laid over the
// region and its points sorted; false when the extent is not finite.
// Its boxes are those of coarse_nodes nodes each; under a plain grid (no
// near field: the early exaggeration's, FIt-SNE's accuracy) the boxes
// take that grid's nodes when fewer, since finer interpolation of the far
// pairs would not make the sums more accurate than the region's own grid.
template <typename Executor>
bool lay_coarse(const FarFieldPlan& plan, FarFieldRegion& r, double nodes_per_point,
                Executor& executor) {
  const std::size_t d = plan.dims();
  const GridSettings& gs = plan.settings();
  GridSettings cs;
  cs.nodes = FarFieldTuning::coarse_nodes;
  cs.near_field = true;
  cs.near_boxes = FarFieldTuning::coarse_near_boxes;
  cs.widen = true;
  double span = 0.0;
  for (std::size_t c = 0; c < d; ++c) {
    const double* y = r.coords + c * r.stride;
    const auto mm = std::minmax_element(y, y + r.n);
    span = std::max(span, *mm.second - *mm.first);
  }
  const double total = std::max(static_cast<double>(r.n) * nodes_per_point, FarFieldTuning::coarse_min_nodes);
  const double nodes = d == 2 ? std::sqrt(total) : total;
  const double boxes = std::max(1.0, std::floor(nodes / cs.nodes));
  cs.box_width = ladder_width(std::max(FarFieldTuning::coarse_width, span / boxes));
  if (!std::isfinite(cs.box_width)) return false;
  if (!gs.near_field) cs.nodes = std::min(cs.nodes, gs.nodes);
  ShapeReport unused;
  const GridShape shape = plan_grid_shape(r.coords, r.n, d, r.stride, cs, nullptr, unused);
  r.coarse.assign(shape, r.coords, r.n, r.stride, executor);
  return true;
}

// A new region of the m points idx[0 .. m) of region k (their coordinates
// gathered), as child `slot` of k.
inline std::size_t add_child(FarFieldPlan& plan, std::size_t k, const std::size_t* idx, std::size_t m,
                             int depth, int peels, std::size_t slot) {
  const std::size_t c = plan.add();
  const FarFieldRegion& parent = plan.region(k);
  FarFieldRegion& r = plan.region(c);
  r.parent = k;
  r.slot = slot;
  r.depth = depth;
  r.peels = peels;
  r.n = m;
  r.stride = m;
  r.points = idx;
  const std::size_t d = plan.dims();
  r.own_coords.resize(d * m);
  for (std::size_t cc = 0; cc < d; ++cc) {
    for (std::size_t j = 0; j < m; ++j) {
      r.own_coords[cc * m + j] = parent.coords[cc * parent.stride + idx[j]];
    }
  }
  r.coords = r.own_coords.data();
  plan.region(k).children.push_back(c);
  return c;
}

// The halo's size and the extents (in boxes) of the core and of the
// region, into the report.
inline void measure_core(FarFieldRegion& r) {
  const BoxGrid& coarse = r.coarse;
  const GridShape& sh = coarse.shape();
  const std::size_t nb0 = sh.boxes[0], nb1 = sh.boxes[1], nboxes = sh.box_count();
  std::size_t halo = 0;
  std::size_t lo_all[2] = {nb0, nb1}, hi_all[2] = {0, 0}, lo_core[2] = {nb0, nb1},
              hi_core[2] = {0, 0};
  for (std::size_t b = 0; b < nboxes; ++b) {
    if (coarse.filled(b) == 0) continue;
    const std::size_t at[2] = {b % nb0, b / nb0};
    for (std::size_t c = 0; c < 2; ++c) {
      lo_all[c] = std::min(lo_all[c], at[c]);
      hi_all[c] = std::max(hi_all[c], at[c]);
      if (r.core_box[b]) {
        lo_core[c] = std::min(lo_core[c], at[c]);
        hi_core[c] = std::max(hi_core[c], at[c]);
      }
    }
    if (!r.core_box[b]) halo += coarse.filled(b);
  }
  r.report.halo = halo;
  if (halo == 0) return;
  r.report.area_all = static_cast<double>(hi_all[0] - lo_all[0] + 1) *
                      static_cast<double>(hi_all[1] - lo_all[1] + 1);
  r.report.area_core = static_cast<double>(hi_core[0] - lo_core[0] + 1) *
                       static_cast<double>(hi_core[1] - lo_core[1] + 1);
}

// The components' points in box order, and the largest component.
inline void list_components(FarFieldRegion& r, std::size_t nc) {
  const std::vector<std::size_t>& cstart = r.components.start();
  const std::vector<std::size_t>& cboxes = r.components.boxes();
  const std::vector<std::size_t>& start = r.coarse.box_start();
  const std::vector<std::size_t>& order = r.coarse.order();
  r.component_start.assign(nc + 1, 0);
  r.component_points.clear();
  for (std::size_t c = 0; c < nc; ++c) {
    for (std::size_t k = cstart[c]; k < cstart[c + 1]; ++k) {
      const std::size_t b = cboxes[k];
      r.component_points.insert(r.component_points.end(), order.begin() + start[b],
                                order.begin() + start[b + 1]);
    }
    r.component_start[c + 1] = r.component_points.size();
  }
  std::size_t big = 0;
  for (std::size_t c = 1; c < nc; ++c) {
    if (r.component_start[c + 1] - r.component_start[c] >
        r.component_start[big + 1] - r.component_start[big]) {
      big = c;
    }
  }
  r.largest = big;
}

// Whether taking off the coarse grid's sums within each component but the
// largest (by direct node sums, or by an FFT over the component's extent
// where that costs less: a component of m nodes costs m^2 directly) stays
// within removal_work node pairs per coarse node; plans the removal.
inline bool separate(const FarFieldPlan& plan, FarFieldRegion& r) {
  const GridShape& sh = r.coarse.shape();
  const BoxComponents& comps = r.components;
  ComponentRemoval& rm = r.removal;
  const std::size_t pd = sh.box_nodes();
  double work = 0.0;
  rm.components = &r.components;
  rm.skip = r.largest;
  rm.direct_boxes.clear();
  rm.fft_components.clear();
  for (std::size_t c = 0; c < comps.count(); ++c) {
    if (c == r.largest) continue;
    const double nodes = static_cast<double>(pd * comps.boxes_in(c));
    const double direct = nodes * nodes;
    std::size_t w, h, x0, y0;
    comps.extent(sh, c, w, h, x0, y0);
    const double lw = static_cast<double>(fft_size(2 * w));
    const double lh = plan.dims() == 2 ? static_cast<double>(fft_size(2 * h)) : 1.0;
    const double fft = FarFieldTuning::component_fft_work * lw * lh * std::log2(std::max(2.0, lw * lh));
    if (fft < direct) {
      work += fft;
      rm.fft_components.push_back(c);
      continue;
    }
    work += direct;
    for (std::size_t b = comps.start()[c]; b < comps.start()[c + 1]; ++b) {
      rm.direct_boxes.push_back(comps.boxes()[b]);
    }
  }
  r.report.removal_work = work;
  r.report.removal_budget = FarFieldTuning::removal_work * static_cast<double>(sh.node_count());
  return work <= r.report.removal_budget;
}

}  // namespace detail

// Makes the plan of the points Y (coordinate c of point i at
// Y[c * stride + i], d = 1 or 2) under settings gs. `ahead` says which
// spectra the cache will hold (null: no cache). The coarse grids are laid
// and their points sorted here (the executors use them as they are).
class FarFieldPlanner {
 public:
  template <typename Executor>
  void plan(FarFieldPlan& plan, const double* Y, std::size_t n, std::size_t d, std::size_t stride,
            const GridSettings& gs, SpectraAhead* ahead, Executor& executor) {
    plan.reset(gs, d);
    if (ahead != nullptr) ahead->clear();
    const std::size_t root = plan.add();
    FarFieldRegion& r = plan.region(root);
    r.n = n;
    r.stride = stride;
    r.coords = Y;
    r.depth = 0;
    r.peels = 0;
    plan_region(plan, root, ahead, executor);
  }

 private:
  typedef FarFieldTuning T;

  template <typename Executor>
  void plan_region(FarFieldPlan& plan, std::size_t k, SpectraAhead* ahead, Executor& executor) {
    FarFieldRegion& r = plan.region(k);
    const GridSettings& gs = plan.settings();
    const char* why = "";
    if (!gs.by_components) {
      why = "splitting is off";
    } else if (r.n < T::min_split) {
      why = "too few points to split";
    } else if (r.depth >= T::max_depth && r.peels >= T::max_peels) {
      why = "the most levels";
    } else if (split(plan, k, ahead, executor)) {
      return;
    } else {
      why = r.report.whole_reason;
    }
    r.kind = RegionKind::grid;
    r.report.whole_reason = why;
    r.grid = plan_grid_shape(r.coords, r.n, plan.dims(), r.stride, gs, ahead, r.shape_report);
    if (ahead != nullptr) ahead->will_run(k, false, r.grid.kernel_key(false));
  }

  // Shed, peel or components; false (whole_reason set) when the region is
  // not split.
  template <typename Executor>
  bool split(FarFieldPlan& plan, std::size_t k, SpectraAhead* ahead, Executor& executor) {
    FarFieldRegion& r = plan.region(k);
    SplitReport& rep = r.report;
    std::size_t nc = 0;
    if (r.peels < T::max_peels) {
      if (!detail::lay_coarse(plan, r, T::shed_nodes_per_point, executor)) {
        rep.whole_reason = "the layout's extent is not finite";
        return false;
      }
      nc = r.components.label(r.coarse);
      if (shed(plan, k, nc, ahead, executor)) return true;
    }
    for (const double per_point : T::coarse_nodes_per_point) {
      if (!detail::lay_coarse(plan, r, per_point, executor)) {
        rep.whole_reason = "the layout's extent is not finite";
        return false;
      }
      nc = r.components.label(r.coarse);
      rep.tried_nodes_per_point[rep.tries] = per_point;
      rep.tried_components[rep.tries++] = nc;
      if (nc >= 2 || r.coarse.shape().box_width[0] <= T::coarse_width) break;
    }
    if (nc < 2) {
      rep.whole_reason = "one component";
      return false;
    }
    detail::list_components(r, nc);
    const std::size_t n_big = r.component_start[r.largest + 1] - r.component_start[r.largest];
    rep.largest_points = n_big;
    rep.other_points = r.n - n_big;
    if (r.n - n_big <= T::peel_points && r.peels < T::max_peels) {
      peel(plan, k, ahead, executor);
      return true;
    }
    if (r.depth >= T::max_depth) {
      rep.whole_reason = "the most component levels";
      return false;
    }
    if (!detail::separate(plan, r)) {
      rep.whole_reason = "separating the components costs too much";
      return false;
    }
    by_components(plan, k, ahead, executor);
    return true;
  }

  // The halo test (see the top): the core is the well filled boxes and the
  // filled boxes within the near field's reach of them, so that a halo
  // point's near field holds only thinly filled boxes and the core's points
  // meet halo points in their near field only in those boxes. Shed when
  // the core's extent is at most shed_area_share of the layout's (in area)
  // or the core falls into more components than the layout.
  template <typename Executor>
  bool shed(FarFieldPlan& plan, std::size_t k, std::size_t nc_all, SpectraAhead* ahead,
            Executor& executor) {
    FarFieldRegion& r = plan.region(k);
    SplitReport& rep = r.report;
    const BoxGrid& coarse = r.coarse;
    const GridShape& sh = coarse.shape();
    const std::size_t nboxes = sh.box_count(), R = sh.near_depth;
    rep.shed_tested = true;
    rep.shed_grid = sh;
    rep.components_all = nc_all;
    std::size_t fullest = 0;
    for (std::size_t b = 0; b < nboxes; ++b) fullest = std::max(fullest, coarse.filled(b));
    const std::size_t well = std::max(sh.box_nodes(), fullest / T::thin_share);
    rep.fullest = fullest;
    rep.well = well;
    if (fullest < well) return shed_refused(rep, "no box is well filled");
    std::vector<unsigned char>& core = r.core_box;
    core.assign(nboxes, 0);
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (coarse.filled(b) < well) continue;
      const BoxWindow w = sh.window(b, R);
      for (std::size_t y = w.y0; y < w.y1; ++y) {
        for (std::size_t x = w.x0; x < w.x1; ++x) core[y * sh.boxes[0] + x] = 1;
      }
    }
    detail::measure_core(r);
    if (rep.halo == 0) return shed_refused(rep, "no halo");
    bool worth = rep.area_core <= T::shed_area_share * rep.area_all;
    if (!worth) {
      rep.components_core = shed_components_.label(coarse, &core);
      worth = rep.components_core > std::max<std::size_t>(nc_all, 1);
    }
    if (!worth) return shed_refused(rep, "the core is neither smaller nor more split");
    rep.shed_outcome = "shed";
    r.kind = RegionKind::shed;
    r.core_points.clear();
    const std::vector<std::size_t>& start = coarse.box_start();
    const std::vector<std::size_t>& order = coarse.order();
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (!core[b]) continue;
      r.core_points.insert(r.core_points.end(), order.begin() + start[b],
                           order.begin() + start[b + 1]);
    }
    const std::size_t child = detail::add_child(plan, k, r.core_points.data(), r.core_points.size(),
                                        r.depth, r.peels + 1, 0);
    plan_region(plan, child, ahead, executor);
    // the coarse grid runs after the core, with its spectra shared
    if (ahead != nullptr) ahead->will_run(k, true, sh.kernel_key(false));
    return true;
  }
  static bool shed_refused(SplitReport& rep, const char* why) {
    rep.shed_outcome = why;
    return false;
  }

  // The largest component a region, the others outliers.
  template <typename Executor>
  void peel(FarFieldPlan& plan, std::size_t k, SpectraAhead* ahead, Executor& executor) {
    FarFieldRegion& r = plan.region(k);
    r.kind = RegionKind::peel;
    const std::size_t big = r.largest;
    r.outliers.clear();
    for (std::size_t c = 0; c + 1 < r.component_start.size(); ++c) {
      if (c == big) continue;
      r.outliers.insert(r.outliers.end(), r.component_points.begin() + r.component_start[c],
                        r.component_points.begin() + r.component_start[c + 1]);
    }
    const std::size_t m = r.component_start[big + 1] - r.component_start[big];
    const std::size_t child = detail::add_child(plan, k, r.component_points.data() + r.component_start[big],
                                        m, r.depth, r.peels + 1, 0);
    plan_region(plan, child, ahead, executor);
  }

  // The coarse grid for the pairs of different components; a region for
  // each component of more than direct_points points.
  template <typename Executor>
  void by_components(FarFieldPlan& plan, std::size_t k, SpectraAhead* ahead, Executor& executor) {
    FarFieldRegion& r = plan.region(k);
    r.kind = RegionKind::components;
    r.direct_components.clear();
    const std::size_t nc = r.components.count();
    for (std::size_t c = 0; c < nc; ++c) {
      if (r.component_start[c + 1] - r.component_start[c] <= T::direct_points) {
        r.direct_components.push_back(c);
      }
    }
    std::size_t slot = 0;
    for (std::size_t c = 0; c < nc; ++c) {
      const std::size_t m = r.component_start[c + 1] - r.component_start[c];
      if (m <= T::direct_points) continue;
      const std::size_t child = detail::add_child(plan, k, r.component_points.data() + r.component_start[c],
                                          m, r.depth + 1, r.peels, slot++);
      plan_region(plan, child, ahead, executor);
    }
  }

  // scratch of the halo test
  BoxComponents shed_components_;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_PLAN_H
