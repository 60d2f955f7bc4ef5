// The geometry of one grid over a set of points: the points sorted by box
// (a stable counting sort, so every box's points are one run in a fixed
// order), the Lagrange interpolation weights of each point in its box, and
// the components of the filled boxes (BoxComponents).
//
// Each box holds p interpolation nodes per dimension, at the midpoints of p
// equal sub-intervals, so the nodes of all boxes form one equispaced grid
// and no node is shared by two boxes.
#ifndef LSNN_FARFIELD_BOX_GRID_H
#define LSNN_FARFIELD_BOX_GRID_H

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "grid_shape.h"
#include "settings.h"

namespace lsnn {

class BoxGrid {
 public:
  // Lays `shape` over the points Y (coordinate c of point i at
  // Y[c * stride + i]) and sorts them by box.
  template <typename Executor>
  void assign(const GridShape& shape, const double* Y, std::size_t n, std::size_t stride,
              Executor& executor) {
    shape_ = shape;
    Y_ = Y;
    n_ = n;
    stride_ = stride;
    set_lagrange_denominators();
    sort_points_by_box(executor);
  }

  const GridShape& shape() const { return shape_; }
  std::size_t points() const { return n_; }
  // the points in box order, and each box's run [start[b], start[b + 1])
  const std::vector<std::size_t>& order() const { return order_; }
  const std::vector<std::size_t>& box_start() const { return start_; }
  std::size_t box_of_point(std::size_t i) const { return box_[i]; }
  std::size_t filled(std::size_t box) const { return start_[box + 1] - start_[box]; }
  BoxWindow window(std::size_t box, std::size_t reach) const { return shape_.window(box, reach); }

  // The box holding position `pos` (d coordinates); false when `pos` lies
  // outside the grid.
  bool box_at(const double* pos, std::size_t& box) const {
    std::size_t b[2] = {0, 0};
    for (std::size_t c = 0; c < shape_.dims; ++c) {
      const double u = (pos[c] - shape_.origin[c]) / shape_.box_width[c];
      if (!(u >= 0.0 && u < static_cast<double>(shape_.boxes[c]))) return false;
      b[c] = std::min(static_cast<std::size_t>(u), shape_.boxes[c] - 1);
    }
    box = b[1] * shape_.boxes[0] + b[0];
    return true;
  }

  // Lagrange weights of point i in its box: wx (and wy), and their products
  // w[ky * p + kx].
  void weights(std::size_t i, double* wx, double* wy, double* w) const {
    const std::size_t p = shape_.nodes_per_box, box = box_[i];
    const std::size_t bx = box % shape_.boxes[0], by = box / shape_.boxes[0];
    lagrange((Y_[i] - shape_.origin[0]) / shape_.box_width[0] - static_cast<double>(bx), wx);
    if (shape_.dims == 2) {
      lagrange((Y_[stride_ + i] - shape_.origin[1]) / shape_.box_width[1] - static_cast<double>(by),
               wy);
      for (std::size_t ky = 0; ky < p; ++ky) {
        for (std::size_t kx = 0; kx < p; ++kx) w[ky * p + kx] = wy[ky] * wx[kx];
      }
    } else {
      for (std::size_t kx = 0; kx < p; ++kx) w[kx] = wx[kx];
    }
  }

  // The Lagrange weights of the box's nodes at t (in units of the box).
  void lagrange(double t, double* l) const {
    const std::size_t p = shape_.nodes_per_box;
    for (std::size_t k = 0; k < p; ++k) {
      double num = 1.0;
      for (std::size_t m = 0; m < p; ++m) {
        if (m != k) num *= t - t_[m];
      }
      l[k] = num * denom_[k];
    }
  }

 private:
  // Lagrange denominators for the nodes t_k = (k + 1/2) / p in [0, 1).
  void set_lagrange_denominators() {
    const std::size_t p = shape_.nodes_per_box;
    t_.resize(p);
    denom_.resize(p);
    for (std::size_t k = 0; k < p; ++k) t_[k] = (static_cast<double>(k) + 0.5) / p;
    for (std::size_t k = 0; k < p; ++k) {
      double den = 1.0;
      for (std::size_t m = 0; m < p; ++m) {
        if (m != k) den *= t_[k] - t_[m];
      }
      denom_[k] = 1.0 / den;
    }
  }

  // The box of every point, then a stable counting sort by box.
  template <typename Executor>
  void sort_points_by_box(Executor& executor) {
    box_.resize(n_);
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) box_[i] = shape_.box_of(Y_, stride_, i);
        },
        4096);
    const std::size_t nboxes = shape_.box_count();
    start_.assign(nboxes + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) ++start_[box_[i] + 1];
    for (std::size_t b = 0; b < nboxes; ++b) start_[b + 1] += start_[b];
    order_.resize(n_);
    next_.assign(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < n_; ++i) order_[next_[box_[i]]++] = i;
  }

  GridShape shape_;
  const double* Y_ = nullptr;
  std::size_t n_ = 0, stride_ = 0;
  std::vector<double> t_, denom_;
  // each point's box, the points in box order, the boxes' runs, and the
  // next free place of each box while sorting
  std::vector<std::size_t> box_, order_, start_, next_;
};

// The components of a grid's filled boxes: boxes at most `reach` boxes apart
// in every coordinate are joined, so that any two points of different
// components are far pairs of a grid with a near field that deep. Component
// c holds the boxes boxes()[start()[c] .. start()[c + 1]) in box order,
// numbered by their first box.
class BoxComponents {
 public:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  // Labels the filled boxes of `grid` (with `keep`, only the boxes b with
  // keep[b]); returns the number of components.
  std::size_t label(const BoxGrid& grid, const std::vector<unsigned char>* keep = nullptr) {
    const GridShape& shape = grid.shape();
    const std::size_t nb0 = shape.boxes[0], nboxes = shape.box_count();
    const std::size_t reach = shape.near_depth;
    parent_.assign(nboxes, none);
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (grid.filled(b) != 0 && (keep == nullptr || (*keep)[b])) parent_[b] = b;
    }
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (parent_[b] == none) continue;
      // the neighbours after b in box order
      const std::size_t bx = b % nb0, by = b / nb0;
      const BoxWindow w = shape.window(bx, by, reach);
      for (std::size_t ny = by; ny < w.y1; ++ny) {
        for (std::size_t nx = ny == by ? bx + 1 : w.x0; nx < w.x1; ++nx) {
          const std::size_t o = ny * nb0 + nx;
          if (parent_[o] == none) continue;
          const std::size_t ra = root(b), rb = root(o);
          if (ra != rb) parent_[std::max(ra, rb)] = std::min(ra, rb);
        }
      }
    }
    number_components(nboxes);
    return count_;
  }

  std::size_t count() const { return count_; }
  const std::vector<std::size_t>& start() const { return start_; }
  const std::vector<std::size_t>& boxes() const { return boxes_; }
  std::size_t of_box(std::size_t box) const { return of_box_[box]; }
  std::size_t boxes_in(std::size_t c) const { return start_[c + 1] - start_[c]; }

  // The node extent of component c: first node (x0, y0), w x h nodes.
  void extent(const GridShape& shape, std::size_t c, std::size_t& w, std::size_t& h,
              std::size_t& x0, std::size_t& y0) const {
    const std::size_t nb0 = shape.boxes[0], p = shape.nodes_per_box;
    std::size_t bx0 = nb0, bx1 = 0, by0 = shape.boxes[1], by1 = 0;
    for (std::size_t k = start_[c]; k < start_[c + 1]; ++k) {
      const std::size_t b = boxes_[k], bx = b % nb0, by = b / nb0;
      bx0 = std::min(bx0, bx);
      bx1 = std::max(bx1, bx);
      by0 = std::min(by0, by);
      by1 = std::max(by1, by);
    }
    const std::size_t py = shape.dims == 2 ? p : 1;
    w = (bx1 - bx0 + 1) * p;
    h = (by1 - by0 + 1) * py;
    x0 = bx0 * p;
    y0 = by0 * py;
  }

 private:
  std::size_t root(std::size_t b) {
    while (parent_[b] != b) b = parent_[b] = parent_[parent_[b]];
    return b;
  }

  // number the components by their first box; list their boxes
  void number_components(std::size_t nboxes) {
    of_box_.assign(nboxes, none);
    sizes_.clear();
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (parent_[b] == none) continue;
      const std::size_t r = root(b);
      if (of_box_[r] == none) {
        of_box_[r] = sizes_.size();
        sizes_.push_back(0);
      }
      of_box_[b] = of_box_[r];
      ++sizes_[of_box_[b]];
    }
    count_ = sizes_.size();
    start_.assign(count_ + 1, 0);
    for (std::size_t c = 0; c < count_; ++c) start_[c + 1] = start_[c] + sizes_[c];
    boxes_.resize(start_[count_]);
    sizes_.assign(start_.begin(), start_.end() - 1);  // now the next free place
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (of_box_[b] != none) boxes_[sizes_[of_box_[b]]++] = b;
    }
  }

  // the union-find forest over the boxes (none: not labelled)
  std::vector<std::size_t> parent_;
  std::vector<std::size_t> of_box_, start_, boxes_, sizes_;
  std::size_t count_ = 0;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_BOX_GRID_H
