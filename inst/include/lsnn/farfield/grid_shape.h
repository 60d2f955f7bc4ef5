// The shape of one interpolation grid: its boxes (number, width, origin per
// dimension), the interpolation nodes per box, the near field's reach, and
// the padded sizes of its transforms. A GridShape is what the planner
// (plan.h) decides and what the executors (box_grid.h, convolution.h) run;
// the walk over a box's neighbourhood (window()) is defined here once.
#ifndef LSNN_FARFIELD_GRID_SHAPE_H
#define LSNN_FARFIELD_GRID_SHAPE_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace lsnn {

// The padded length of a transform of at least m values: the smallest
// 4 * 2^a * b >= m with b one of 1, 3, 5, 9, 15 (kissfft is fastest on
// small prime factors, the real transform wants 4 | L). The lengths are at
// most 25 % apart, so that a grid growing with its layout keeps its padded
// size, and its kernels' spectra, over many steps.
inline std::size_t fft_size(std::size_t m) {
  std::size_t best = std::numeric_limits<std::size_t>::max();
  for (std::size_t b : {1, 3, 5, 9, 15}) {
    std::size_t L = 4 * b;
    while (L < m) L *= 2;
    best = std::min(best, L);
  }
  return best;
}

// The box width actually used for a wanted width w: the next of the widths
// 2^(k / 8). A layout's extent changes a little at every step of an
// optimisation; boxes on this ladder keep their width (and so the kernels'
// spectra, which cost three transforms and many kernel values) until it has
// changed by about 9 %.
inline double ladder_width(double w) {
  if (!(w > 0.0) || !std::isfinite(w)) return w;
  const double k = std::ceil(8.0 * std::log2(w) - 1e-9);
  const double q = std::exp2(k / 8.0);
  return q >= w ? q : std::exp2((k + 1.0) / 8.0);
}

// What a kernel's spectrum depends on besides the kernel: the padded grid's
// size, the node spacing and which offsets are left to the near field (the
// nodes per box and the near field's reach in boxes) or to the components'
// own sums (separated); not the number of nodes: the kernel fills the whole
// padded grid.
struct GridKernelKey {
  std::size_t L0 = 0, L1 = 0, nodes = 0, reach = 0;
  double s0 = 0.0, s1 = 0.0;
  bool near = false, separated = false;
  bool operator==(const GridKernelKey& o) const {
    return L0 == o.L0 && L1 == o.L1 && nodes == o.nodes && reach == o.reach && s0 == o.s0 &&
           s1 == o.s1 && near == o.near && separated == o.separated;
  }
};

// The boxes [x0, x1) x [y0, y1) around a box.
struct BoxWindow {
  std::size_t x0, x1, y0, y1;
};

struct GridShape {
  std::size_t dims = 1;
  // interpolation nodes per box and dimension
  std::size_t nodes_per_box = 3;
  // whether the pairs of neighbouring boxes are left to an exact near
  // field, and how many boxes away a neighbour may be
  bool near_field = false;
  std::size_t near_depth = 1;
  std::size_t boxes[2] = {1, 1};
  double box_width[2] = {1.0, 1.0};
  // the lower corner of box 0
  double origin[2] = {0.0, 0.0};
  // nodes per dimension (boxes x nodes_per_box) and the padded transform
  // lengths (at least twice that, so that the convolution does not wrap)
  std::size_t nodes[2] = {1, 1};
  std::size_t padded[2] = {4, 1};
  // the widest boxes at which this shape keeps the accuracy (the planner's
  // bound when it widens boxes to reuse cached spectra)
  double max_width = HUGE_VAL;

  // Sets nodes and padded from the boxes.
  void finish() {
    for (std::size_t c = 0; c < 2; ++c) {
      nodes[c] = c < dims ? boxes[c] * nodes_per_box : 1;
      padded[c] = c < dims ? fft_size(2 * nodes[c]) : 1;
    }
  }
  std::size_t box_count() const { return boxes[0] * boxes[1]; }
  std::size_t node_count() const { return nodes[0] * nodes[1]; }
  // the columns of a half spectrum (real transform along x) and its size
  std::size_t spectrum_columns() const { return padded[0] / 2 + 1; }
  std::size_t spectrum_size() const { return spectrum_columns() * padded[1]; }
  // The bytes a grid of this shape holds while it sums one charge set with
  // dims + 1 kernels into dims + 1 outputs (t-SNE's, the most of any cost):
  // the kernels' spectra and the charges' spectrum, the kernel's values
  // while a spectrum is made, the inverse transform's buffer
  // (GridConvolution::inverse()), the node charges and potentials.
  double memory_bytes() const {
    const double k = static_cast<double>(dims + 1);
    const double kept = dims == 2 ? static_cast<double>(spectrum_columns() * nodes[1])
                                  : static_cast<double>(spectrum_size());
    return 16.0 * (k + 1.0) * static_cast<double>(spectrum_size()) +
           8.0 * static_cast<double>(padded[0] * padded[1]) + 16.0 * kept +
           8.0 * (1.0 + k) * static_cast<double>(node_count());
  }
  // the nodes of one box (nodes_per_box^dims)
  std::size_t box_nodes() const { return dims == 2 ? nodes_per_box * nodes_per_box : nodes_per_box; }
  double node_spacing(std::size_t c) const {
    return box_width[c] / static_cast<double>(nodes_per_box);
  }
  // the origin of `boxes` boxes `width` wide centred on `mid`
  static double centred_origin(double mid, double width, std::size_t boxes) {
    return mid - 0.5 * width * static_cast<double>(boxes);
  }

  // The box of point i (coordinate c at Y[c * stride + i]); points on or
  // beyond the edges go to the outer boxes.
  std::size_t box_of(const double* Y, std::size_t stride, std::size_t i) const {
    std::size_t b[2] = {0, 0};
    for (std::size_t c = 0; c < dims; ++c) {
      const double u = (Y[c * stride + i] - origin[c]) / box_width[c];
      std::size_t k = u > 0.0 ? static_cast<std::size_t>(u) : 0;
      b[c] = std::min(k, boxes[c] - 1);
    }
    return b[1] * boxes[0] + b[0];
  }

  // The boxes at most `reach` boxes from box (bx, by) in both coordinates:
  // every walk over a box's neighbours (near fields, components, the
  // near-field corrections of the grid, the planner's pair counts) uses it.
  BoxWindow window(std::size_t bx, std::size_t by, std::size_t reach) const {
    return window_in(boxes[0], boxes[1], bx, by, reach);
  }
  BoxWindow window(std::size_t box, std::size_t reach) const {
    return window(box % boxes[0], box / boxes[0], reach);
  }
  static BoxWindow window_in(std::size_t nb0, std::size_t nb1, std::size_t bx, std::size_t by,
                             std::size_t reach) {
    return {bx > reach ? bx - reach : 0, std::min(nb0, bx + reach + 1),
            by > reach ? by - reach : 0, std::min(nb1, by + reach + 1)};
  }

  // The key of this shape's kernel spectra with boxes w0 x w1 wide.
  GridKernelKey kernel_key(double w0, double w1, bool separated) const {
    const double p = static_cast<double>(nodes_per_box);
    return {padded[0], padded[1], nodes_per_box, near_depth, w0 / p, dims == 2 ? w1 / p : 0.0,
            near_field, separated};
  }
  GridKernelKey kernel_key(bool separated) const {
    return kernel_key(box_width[0], box_width[1], separated);
  }
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_GRID_SHAPE_H
