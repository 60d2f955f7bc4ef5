// The far field's settings: the knobs of a grid (GridSettings, one set per
// cost, and what options(lsnn.grid) changes) and the tuning constants of
// the planner (FarFieldTuning), each with the reason for its value. The
// measurements behind the values are in bench/README.md.
#ifndef LSNN_FARFIELD_SETTINGS_H
#define LSNN_FARFIELD_SETTINGS_H

#include <cmath>
#include <cstddef>

#include "../embed/cost_models.h"

namespace lsnn {

// How fine a grid is and what it leaves to the near field.
struct GridSettings {
  // interpolation nodes per box and dimension
  int nodes{3};
  // the widest box (in the units of the coordinates; HUGE_VAL: the boxes
  // follow the points)
  double box_width{1.0};
  // the fewest boxes per dimension
  int min_boxes{1};
  // Near field: the grid sums only the pairs of points whose boxes are not
  // neighbours, the pairs of neighbouring boxes are summed exactly.
  bool near_field{false};
  // the near field's reach: boxes at most this many boxes apart (in both
  // coordinates) are neighbours
  int near_boxes{1};
  // with a near field: at least (n / points_per_box)^(1/d) boxes per
  // dimension (0: no such bound), so that the exact sums stay short
  double points_per_box{0.0};
  // widen the boxes of a layout that would need more than
  // FarFieldTuning::max_nodes_per_dim nodes per dimension, instead of
  // failing (the kernels are scale-free beyond their core)
  bool widen{false};
  // with a near field: the time of one near pair in units of one FFT
  // element-level; when positive the grid's shape is chosen by cost
  // (plan_grid_shape()), otherwise it is taken as set
  double pair_weight{0.0};
  // boxes at most this wide need no near field: the grid alone resolves
  // the kernel (0: never)
  double smooth_width{0.0};
  // boxes at most this wide take a near field one box deep instead of
  // near_boxes (0: never)
  double shallow_width{0.0};
  // the shapes with fine_nodes nodes per box (0: none): no near field up
  // to fine_smooth_width, one box deep beyond (higher-order interpolation
  // resolves the kernel over wider boxes)
  int fine_nodes{0};
  double fine_smooth_width{0.0};
  // whether a layout of separate clusters may be summed by regions (shed
  // halo, peeled outliers, components: plan.h)
  bool by_components{true};
  // The memory the far field may hold, in MB: a grid shape chosen by cost
  // must fit in it (GridShape::memory_bytes()), and the spectrum cache keeps
  // spectra for later evaluations only within what the grids in use leave
  // of it. Larger budgets let the cost model take shapes it rates cheaper
  // that run no faster and hold more memory (bench/README.md, "How the
  // defaults were chosen": "The far field's memory budget").
  double memory_mb{256.0};
};

// The planner's constants. Each bounds a cost or keeps an accuracy; the
// measurements that set them are in bench/README.md.
struct FarFieldTuning {
  // Grid limits.
  static constexpr std::size_t
      // Lagrange weights live in fixed arrays of this many nodes per box
      max_nodes_per_box = 32,
      // a grid never has more nodes per dimension (its padded grid then
      // holds up to 144 million values); a wider layout has diverged
      max_nodes_per_dim = 6000;
  static constexpr double
      // refinement makes grids finer only up to this many nodes per
      // dimension, so that a refined grid's transforms stay within memory
      // and time
      max_refined_nodes_per_dim = 2048.0,
      // refinement costs grids 2, 4, ... up to this many times finer
      max_refine_factor = 16.0,
      // the time of one node weight of one point for one vector (spreading
      // or interpolating) in units of one FFT element-level
      interpolation_weight = 1.0;
  // a grid takes boxes up to this many steps of the width ladder wider
  // when that width's spectra are cached (a layout at a step of the ladder
  // would otherwise make its spectra again at every other evaluation)
  static constexpr int wider_steps = 2;

  // Regions.
  static constexpr std::size_t
      // layouts of fewer points are one grid: splitting cannot pay for itself
      min_split = 512,
      // components of at most this many points are summed directly
      direct_points = 256,
      // when every component but the largest holds at most this many points
      // in all, they are summed directly against every point (no coarse
      // grid)
      peel_points = 64,
      // a box is thinly filled when it holds fewer points than its nodes or
      // than 1 / thin_share of the fullest box's
      thin_share = 64;
  static constexpr int
      // component regions below the whole layout, at most (each level adds
      // a coarse grid)
      max_depth = 3,
      // halos shed and outliers peeled, at most, along one branch
      max_peels = 8,
      // the coarse grids' nodes per box and near field depth: far pairs at
      // the accuracy of the default grids (under a plain grid with fewer
      // nodes, that grid's nodes: lay_coarse() of plan.h)
      coarse_nodes = 5, coarse_near_boxes = 2;

  // Coarse grids.
  static constexpr double
      // the narrowest coarse box, in units of the kernels' length scale: far
      // pairs are then at least 8 apart, where every cost's kernel is smooth
      coarse_width = 4.0,
      // the fewest coarse nodes, so that small layouts still find their
      // components
      coarse_min_nodes = 4096.0,
      // the most node pairs per coarse node that taking off the components'
      // own sums may cost
      removal_work = 64.0,
      // the cost of one component's own sums by FFT, in node pairs per padded
      // node and level: a forward and inverse complex transform of each of
      // the charges and up to three kernels
      component_fft_work = 7.0 * 4.0;
  // the coarse grids tried for components, in nodes per point, coarsest
  // first: finer grids separate clusters that are closer together
  static constexpr double coarse_nodes_per_point[3] = {1.0 / 16.0, 0.25, 1.0};
  static constexpr double
      // the halo test's grid, in nodes per point (the finest coarse grid
      // tells thinly filled boxes from well filled ones best)
      shed_nodes_per_point = 0.25,
      // a halo is shed when the core's extent is at most this share of the
      // layout's (in area), or when the core splits into more components
      shed_area_share = 0.5;
};

// The default grid of each cost: the accuracy of the gradient (relative
// error below 1e-3 for t-SNE, 1e-2 for the others, on converged layouts)
// at the least time (bench/README.md).
//  - t-SNE: 5 nodes per box, boxes at most 4 wide, a near field 2 boxes
//    deep: the far pairs are then at least 2 boxes apart, where the kernel
//    varies on the scale of the distance, so the error depends on the nodes
//    much more than on the box width and wide boxes keep the FFTs small.
//    The shape is then chosen by cost (a near pair costs about one FFT
//    element-level with the vector near field): the kernel varies on the
//    scale of 1, so narrow boxes need a shallower near field (none up to
//    0.3 wide, one box deep up to 0.45), or 7 nodes per box (none up to
//    0.6, one box deep beyond). At least 64 points per box: fewer make
//    grids of several nodes per point whose FFTs dominate.
//  - LargeVis, UMAP, t-UMAP: power laws beyond their core, so the boxes only
//    follow the points (at least (n / 4)^(1/d) per dimension); 3 nodes (4
//    for LargeVis's Cauchy kernel, whose small gamma makes the far field
//    larger), a near field one box deep; a near pair costs about 8 (20 for
//    UMAP's std::pow) FFT element-levels.
//  - LargeVis with exp weights: a Gaussian-like kernel of width 1, not
//    scale-free: 5 nodes in boxes at most 1.5 wide, 2 boxes deep.
inline GridSettings default_grid(CostMethod m) {
  GridSettings g;
  g.near_field = true;
  g.points_per_box = m == CostMethod::tsne ? 64.0 : 4.0;
  g.min_boxes = 1;
  g.pair_weight = m == CostMethod::tsne ? 1.0 : m == CostMethod::umap ? 20.0 : 8.0;
  g.widen = true;
  if (m == CostMethod::tsne) {
    g.nodes = 5;
    g.box_width = 4.0;
    g.near_boxes = 2;
    g.smooth_width = 0.3;
    g.shallow_width = 0.45;
    g.fine_nodes = 7;
    g.fine_smooth_width = 0.6;
  } else if (m == CostMethod::largevis_exp) {
    g.nodes = 5;
    g.box_width = 1.5;
    g.near_boxes = 2;
  } else {
    g.nodes = m == CostMethod::largevis ? 4 : 3;
    g.near_boxes = 1;
    g.box_width = HUGE_VAL;
  }
  return g;
}

// The grid while P is exaggerated (t-SNE's first iterations): the
// attraction of the exaggerated P dominates and the clusters only need to
// form, so t-SNE takes 3 nodes in boxes 1 wide, at least 50 boxes per
// dimension and no near field (a gradient error of a few 1e-2, at a
// fraction of the default grid's time on the crowded early layouts). The
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

// An optimisation of more points than this keeps exaggeration_grid() after
// the exaggeration (CostEvaluator::set_exaggeration()). The default grid's
// accuracy costs little on small layouts, but on wide layouts of dense
// clusters its near field sums thousands of pairs a point, for a cost hardly
// lower and the same neighbours (bench/README.md, "How the defaults were
// chosen": "t-SNE's grid after the exaggeration, by layout size").
// cost_gradient() keeps the default grid at every size.
constexpr std::size_t large_layout_points = 200000;

inline bool same_grid(const GridSettings& a, const GridSettings& b) {
  return a.nodes == b.nodes && a.box_width == b.box_width && a.min_boxes == b.min_boxes &&
         a.near_field == b.near_field && a.near_boxes == b.near_boxes &&
         a.points_per_box == b.points_per_box && a.widen == b.widen &&
         a.pair_weight == b.pair_weight && a.smooth_width == b.smooth_width &&
         a.shallow_width == b.shallow_width && a.fine_nodes == b.fine_nodes &&
         a.fine_smooth_width == b.fine_smooth_width && a.by_components == b.by_components &&
         a.memory_mb == b.memory_mb;
}

}  // namespace lsnn

#endif  // LSNN_FARFIELD_SETTINGS_H
