// Kernel sums over all points of a grid by interpolation and FFT
// convolution (Linderman et al. 2019, "Fast interpolation-based t-SNE"),
// for 1- and 2-dimensional point sets:
//
//   phi_o(i) = sum_j K_o(y_i - y_j) q_o(j)      (j = i included)
//
// for a few translation-invariant kernels K (even or odd, such as
// (y_i - y_j) w_ij^2) and charge vectors q. A point's charge is spread to
// the p^d nodes of its own box with its Lagrange weights (box_grid.h); the
// node-to-node kernel sums are a discrete convolution, done by FFT on a
// zero-padded grid (fft2.h); the potentials are interpolated back to the
// points with the same weights. The work is O(n p^d) plus the FFTs of
// O(M log M) for M grid nodes; the error is that of degree p - 1
// interpolation of K over one box.
//
// Two corrections take node sums off the potentials again, with the same
// kernel values as the convolution:
//  - the near field: the sums between nodes of neighbouring boxes, which
//    the caller sums exactly between the points (remove_near());
//  - separated components: the sums within each component but the largest
//    (remove_component()), whose own pairs the caller sums by grids of
//    their own.
//
// Determinism: every node is written by the one task that owns its row of
// boxes, in the sorted order, and every FFT line is transformed on its own;
// nothing depends on the number of threads or on how a range is split.
#ifndef LSNN_FARFIELD_CONVOLUTION_H
#define LSNN_FARFIELD_CONVOLUTION_H

#include <algorithm>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "box_grid.h"
#include "component_sums.h"
#include "fft2.h"
#include "spectrum_cache.h"

namespace lsnn {

namespace detail {

// The kernel's values at every offset of the padded grid, into `values`.
// Offsets wrap around the padded length: k < L / 2 is the offset k,
// k > L / 2 the offset k - L. The nodes' own offsets are at most
// M - 1 < L / 2; the kernel fills the rest too, so that it does not
// depend on M. With a near field, offsets of at most R p nodes in every
// dimension join only neighbouring boxes, whose sums are taken off again:
// those values are zero (the kernel may be singular at 0).
template <typename Executor, typename Kernel>
const double* kernel_values(const GridShape& sh, Kernel& K, large_vector<double>& values, Executor& executor) {
  const std::size_t L0 = sh.padded[0], L1 = sh.padded[1];
  const bool two = sh.dims == 2, near = sh.near_field;
  const double s0 = sh.node_spacing(0), s1 = two ? sh.node_spacing(1) : 0.0;
  assign_discarding(values, L0 * L1, 0.0);
  double* kg = values.data();
  auto offset = [](std::size_t k, std::size_t L, double s, bool& live) {
    live = true;
    if (2 * k < L) return static_cast<double>(k) * s;
    if (2 * k > L) return -static_cast<double>(L - k) * s;
    live = false;
    return 0.0;
  };
  const std::size_t rp = sh.near_depth * sh.nodes_per_box;
  auto inner = [rp](std::size_t k, std::size_t L) { return k <= rp || k >= L - rp; };
  executor.parallel_for(
      0, L1,
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t ky = r0; ky < r1; ++ky) {
          bool live_y = true;
          const double dy = two ? offset(ky, L1, s1, live_y) : 0.0;
          if (!live_y) continue;
          const bool inner_y = !two || inner(ky, L1);
          for (std::size_t kx = 0; kx < L0; ++kx) {
            bool live_x;
            const double dx = offset(kx, L0, s0, live_x);
            if (!live_x || (near && inner_y && inner(kx, L0))) continue;
            kg[ky * L0 + kx] = K(dx, dy);
          }
        }
      },
      16);
  return kg;
}

// The node-to-node kernel between neighbouring boxes, read off the
// kernel's values kg, offsets up to off = (R + 1) p - 1 nodes:
// t[(oy + off) * (2 off + 1) + ox + off] = K(-ox, -oy) (reversed:
// remove_near() then runs forwards over the sources).
inline void near_table(const GridShape& sh, const double* kg, std::vector<double>& t) {
  const std::size_t L0 = sh.padded[0], L1 = sh.padded[1];
  const std::size_t off = (sh.near_depth + 1) * sh.nodes_per_box - 1, w = 2 * off + 1;
  const std::size_t h = sh.dims == 2 ? w : 1;
  t.assign(w * h, 0.0);
  for (std::size_t a = 0; a < h; ++a) {
    const std::size_t ky = sh.dims == 2 ? (L1 + off - a) % L1 : 0;
    for (std::size_t b = 0; b < w; ++b) {
      const std::size_t kx = (L0 + off - b) % L0;
      t[a * w + b] = kg[ky * L0 + kx];
    }
  }
}

// Takes off every node's potential the part that comes from the nodes of
// its own and the neighbouring boxes (near field), with the same kernel
// values as the convolution. One task per row of boxes; fixed order.
template <typename Executor>
void remove_near(const BoxGrid& grid, const std::vector<std::vector<double>>& near_tables,
                 const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
                 const double* charges, double* const pot, Executor& executor) {
  const GridShape& sh = grid.shape();
  const std::size_t nout = kslot.size(), nodes = sh.node_count(), p = sh.nodes_per_box;
  const std::size_t R = sh.near_depth, M0 = sh.nodes[0], nb0 = sh.boxes[0];
  const std::size_t off = (R + 1) * p - 1, w = 2 * off + 1, rp = R * p;
  const bool two = sh.dims == 2;
  const std::vector<std::size_t>& start = grid.box_start();
  executor.parallel_for(
      0, sh.boxes[1],
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t by = r0; by < r1; ++by) {
          for (std::size_t bx = 0; bx < nb0; ++bx) {
            // only the nodes of boxes with points are ever read
            const std::size_t box = by * nb0 + bx;
            if (start[box] == start[box + 1]) continue;
            const BoxWindow win = sh.window(bx, by, R);
            // node rows and columns of the neighbourhood
            const std::size_t cx0 = win.x0 * p, cx1 = win.x1 * p;
            const std::size_t cy0 = two ? win.y0 * p : 0, cy1 = two ? win.y1 * p : 1;
            for (std::size_t ky = 0; ky < (two ? p : 1); ++ky) {
              const std::size_t ay = two ? by * p + ky : 0;
              for (std::size_t kx = 0; kx < p; ++kx) {
                const std::size_t ax = bx * p + kx;
                // the table is zero within rp nodes in both coordinates
                const std::size_t zx0 = std::max(cx0, ax > rp ? ax - rp : 0);
                const std::size_t zx1 = std::min(cx1, ax + rp + 1);
                for (std::size_t o = 0; o < nout; ++o) {
                  const double* t = near_tables[kslot[o]].data();
                  const double* g = charges + cslot[o] * nodes;
                  double acc = 0.0;
                  for (std::size_t cy = cy0; cy < cy1; ++cy) {
                    // tb + cx (unsigned, wrapping) is the table index of source cx
                    const std::size_t tb = (two ? (cy + off - ay) * w : 0) + off - ax;
                    const double* grow = g + cy * M0;
                    const bool zrow = !two || (cy + rp >= ay && cy <= ay + rp);
                    if (zrow) {
                      for (std::size_t cx = cx0; cx < zx0; ++cx) acc += t[tb + cx] * grow[cx];
                      for (std::size_t cx = zx1; cx < cx1; ++cx) acc += t[tb + cx] * grow[cx];
                    } else {
                      for (std::size_t cx = cx0; cx < cx1; ++cx) acc += t[tb + cx] * grow[cx];
                    }
                  }
                  pot[o * nodes + ay * M0 + ax] -= acc;
                }
              }
            }
          }
        }
      },
      1);
}

}  // namespace detail

class GridConvolution {
 public:
  typedef std::complex<double> cplx;

  // Kernel spectra are looked up in, and added to, `cache`; the scratch
  // buffers are `work` (either may be null: the grid's own).
  void share(SpectrumCache* cache, GridWorkspace* work) {
    cache_ = cache;
    work_ = work;
  }

  // The grid (and, for a separated coarse grid, the removal of its
  // components' own sums) of the coming spread(), kernel() and
  // potentials(); both must outlive them.
  void bind(const BoxGrid& grid, const ComponentRemoval* removal = nullptr) {
    grid_ = &grid;
    removal_ = removal;
  }
  const BoxGrid& grid() const { return *grid_; }

  // Whether kernel slot 0 already holds the spectra of `key` (then its
  // kernel() adds nothing to the cache).
  bool holds(const GridKernelKey& key) const {
    return !keys_.empty() && keys_[0] == key && !kernels_.empty() && kernels_[0];
  }

  // Gives back the memory of the grid's nodes and transforms: the next
  // evaluation allocates what it needs again.
  void release() {
    own_work_ = GridWorkspace();
    std::vector<SharedSpectrum>().swap(kernels_);
    components_.release();
    std::vector<std::vector<double>>().swap(spatial_);
    std::vector<GridKernelKey>().swap(keys_);
    fft_.release();
  }

  // Spreads m charge vectors onto the grid and takes their spectra:
  // charge(o, i) is the charge of point i in set o.
  template <typename Executor, typename Charge>
  void spread(std::size_t m, Charge&& charge, Executor& executor) {
    const GridShape& sh = grid_->shape();
    const std::size_t nodes = sh.node_count(), p = sh.nodes_per_box;
    const std::size_t pd = sh.box_nodes(), M0 = sh.nodes[0], nb0 = sh.boxes[0];
    const bool two = sh.dims == 2;
    const std::vector<std::size_t>& start = grid_->box_start();
    const std::vector<std::size_t>& order = grid_->order();
    large_vector<double>& charges = work().charges;
    assign_discarding(charges, m * nodes, 0.0);
    // one task per row of boxes: the rows' nodes are disjoint
    executor.parallel_for(
        0, sh.boxes[1],
        [&](std::size_t r0, std::size_t r1) {
          std::vector<double> wx(p), wy(p), w(pd), q(m);
          for (std::size_t by = r0; by < r1; ++by) {
            for (std::size_t bx = 0; bx < nb0; ++bx) {
              const std::size_t box = by * nb0 + bx;
              for (std::size_t s = start[box]; s < start[box + 1]; ++s) {
                const std::size_t i = order[s];
                grid_->weights(i, wx.data(), wy.data(), w.data());
                for (std::size_t o = 0; o < m; ++o) q[o] = charge(o, i);
                for (std::size_t ky = 0; ky < (two ? p : 1); ++ky) {
                  const std::size_t row = (by * p + ky) * M0 + bx * p;
                  for (std::size_t kx = 0; kx < p; ++kx) {
                    const double wk = w[ky * p + kx];
                    for (std::size_t o = 0; o < m; ++o) charges[o * nodes + row + kx] += wk * q[o];
                  }
                }
              }
            }
          }
        },
        1);
    large_vector<cplx>& spectra = work().charge_spectra;
    const std::size_t S = sh.spectrum_size();
    grow_discarding(spectra, m * S);
    fft_.forward(plane(), charges.data(), m, nodes, sh.nodes[1], M0, spectra.data(), executor);
  }

  // The spectrum of kernel K(dx, dy) (dy = 0 in 1-D) on the padded grid,
  // stored as kernel number `slot`. A slot must always hold the same
  // kernel: its spectrum is kept while the grid keeps its key.
  template <typename Executor, typename Kernel>
  void kernel(std::size_t slot, Kernel&& K, Executor& executor) {
    const GridShape& sh = grid_->shape();
    const GridKernelKey key = sh.kernel_key(separated());
    if (keys_.size() <= slot) keys_.resize(slot + 1);
    if (kernels_.size() <= slot) kernels_.resize(slot + 1);
    const bool shared = cache_ != nullptr && !separated();
    if (keys_[slot] == key && kernels_[slot]) {
      // (marked as used, so that the cache keeps it while the grid does)
      if (shared) cache_->find(slot, key);
      return;
    }
    keys_[slot] = key;
    if (sh.near_field && near_tables_.size() <= slot) near_tables_.resize(slot + 1);
    if (shared) {
      if (const SpectrumCache::Entry* e = cache_->find(slot, key)) {
        kernels_[slot] = e->spectrum;
        if (sh.near_field) near_tables_[slot] = e->near;
        return;
      }
    }
    // (the slot's old spectrum is let go first, so that the cache may give
    // its memory to the new one)
    kernels_[slot].reset();
    const double* kg = detail::kernel_values(sh, K, work().kernel_values, executor);
    if (sh.near_field) detail::near_table(sh, kg, near_tables_[slot]);
    if (separated()) {
      // the components' own sums read the kernel at any node offset
      if (spatial_.size() <= slot) spatial_.resize(slot + 1);
      spatial_[slot].assign(kg, kg + sh.padded[0] * sh.padded[1]);
    }
    SpectrumBuffer spectrum = shared ? cache_->storage(sh.spectrum_size())
                                     : std::make_shared<large_vector<cplx>>(sh.spectrum_size());
    fft_.forward(plane(), kg, 1, 0, sh.padded[1], sh.padded[0], spectrum->data(), executor);
    kernels_[slot] = spectrum;
    if (shared) {
      cache_->add(slot, key, spectrum,
                  sh.near_field ? near_tables_[slot] : std::vector<double>());
    }
  }

  // Potentials at the points: for each output o, kernel kslot[o] convolved
  // with charge set cslot[o]; out[o * n + i].
  template <typename Executor>
  void potentials(const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
                  double* out, Executor& executor) {
    potentials(kslot, cslot, out, [](std::size_t, std::size_t) { return true; }, executor);
  }
  // The same, interpolated only where wanted(o, i) (the other entries of
  // `out` are left as they are).
  template <typename Wanted, typename Executor>
  void potentials(const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
                  double* out, Wanted&& wanted, Executor& executor) {
    const GridShape& sh = grid_->shape();
    const std::size_t nout = kslot.size(), nodes = sh.node_count(), n = grid_->points();
    large_vector<double>& pot = work().potentials;
    grow_discarding(pot, nout * nodes);
    inverse(kslot, cslot, pot.data(), executor);
    if (separated()) {
      components_.remove(*grid_, *removal_, spatial_, work().charges.data(), pot.data(), kslot,
                         cslot, executor);
    } else if (sh.near_field) {
      detail::remove_near(*grid_, near_tables_, kslot, cslot, work().charges.data(), pot.data(), executor);
    }
    const std::size_t p = sh.nodes_per_box, pd = sh.box_nodes(), nb0 = sh.boxes[0];
    const std::size_t M0 = sh.nodes[0];
    const bool two = sh.dims == 2;
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          std::vector<double> wx(p), wy(p), w(pd);
          for (std::size_t i = b; i < e; ++i) {
            grid_->weights(i, wx.data(), wy.data(), w.data());
            const std::size_t box = grid_->box_of_point(i);
            const std::size_t bx = box % nb0, by = box / nb0;
            for (std::size_t o = 0; o < nout; ++o) {
              if (!wanted(o, i)) continue;
              const double* g = pot.data() + o * nodes;
              double acc = 0.0;
              for (std::size_t ky = 0; ky < (two ? p : 1); ++ky) {
                const std::size_t row = (by * p + ky) * M0 + bx * p;
                for (std::size_t kx = 0; kx < p; ++kx) acc += w[ky * p + kx] * g[row + kx];
              }
              out[o * n + i] = acc;
            }
          }
        },
        1024);
  }

  // After potentials(): its first `nout` outputs interpolated at a position
  // `pos` of box `box` (from BoxGrid::box_at()), which need not be one of
  // the points: the node potentials stay until the next potentials() of a
  // grid with the same workspace.
  void potentials_at(const double* pos, std::size_t box, std::size_t nout, double* out) const {
    const GridShape& sh = grid_->shape();
    const std::size_t p = sh.nodes_per_box, nodes = sh.node_count(), nb0 = sh.boxes[0];
    const std::size_t bx = box % nb0, by = box / nb0;
    double wx[FarFieldTuning::max_nodes_per_box], wy[FarFieldTuning::max_nodes_per_box];
    grid_->lagrange((pos[0] - sh.origin[0]) / sh.box_width[0] - static_cast<double>(bx), wx);
    if (sh.dims == 2) {
      grid_->lagrange((pos[1] - sh.origin[1]) / sh.box_width[1] - static_cast<double>(by), wy);
    } else {
      wy[0] = 1.0;
    }
    const double* pot = work().potentials.data();
    for (std::size_t o = 0; o < nout; ++o) {
      const double* g = pot + o * nodes;
      double acc = 0.0;
      for (std::size_t ky = 0; ky < (sh.dims == 2 ? p : 1); ++ky) {
        const std::size_t row = (by * p + ky) * sh.nodes[0] + bx * p;
        double line = 0.0;
        for (std::size_t kx = 0; kx < p; ++kx) line += wx[kx] * g[row + kx];
        acc += wy[ky] * line;
      }
      out[o] = acc;
    }
  }

 private:
  bool separated() const { return removal_ != nullptr; }
  Fft2::Plane plane() const { return {grid_->shape().padded[0], grid_->shape().padded[1]}; }

  // For each output o, the inverse transform of kernel kslot[o]'s spectrum
  // times charge set cslot[o]'s; the M0 x M1 node values go to
  // out + o * node_count(). One output at a time (each plane's transform is
  // its own, so the values do not change), through a buffer of the rows
  // the column transforms keep (M1 of the padded L1): a buffer of every
  // output's whole product spectrum would be the far field's largest (4
  // spectra for t-SNE in 2-D, 0.8 GB on a padded grid of 5,120 x 5,120
  // nodes; this one is 0.1 GB).
  template <typename Executor>
  void inverse(const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
               double* out, Executor& executor) {
    const GridShape& sh = grid_->shape();
    const std::size_t S = sh.spectrum_size(), nout = kslot.size();
    const std::size_t kept = sh.dims == 2 ? sh.spectrum_columns() * sh.nodes[1] : S;
    large_vector<cplx>& products = work().products;
    grow_discarding(products, kept);
    const cplx* ch = work().charge_spectra.data();
    for (std::size_t o = 0; o < nout; ++o) {
      const cplx* kh = kernels_[kslot[o]]->data();
      const cplx* co = ch + cslot[o] * S;
      const auto product = [kh, co](std::size_t, std::size_t e) { return kh[e] * co[e]; };
      fft_.inverse(plane(), 1, product, sh.nodes[0], sh.nodes[1], products.data(),
                   out + o * sh.node_count(), sh.node_count(), executor);
    }
  }

  GridWorkspace& work() { return work_ != nullptr ? *work_ : own_work_; }
  const GridWorkspace& work() const { return work_ != nullptr ? *work_ : own_work_; }

  const BoxGrid* grid_ = nullptr;
  const ComponentRemoval* removal_ = nullptr;
  SpectrumCache* cache_ = nullptr;
  GridWorkspace own_work_;
  GridWorkspace* work_ = nullptr;
  Fft2 fft_;
  // by kernel slot: the key of its spectra, the spectrum, the near-field
  // table and (separated) the kernel's values
  std::vector<GridKernelKey> keys_;
  std::vector<SharedSpectrum> kernels_;
  std::vector<std::vector<double>> near_tables_;
  std::vector<std::vector<double>> spatial_;
  // the spectrum of each output of inverse()
  ComponentSums components_;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_CONVOLUTION_H
