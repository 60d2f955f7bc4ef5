// Kernel sums over all points by interpolation on a regular grid and FFT
// convolution (Linderman et al. 2019, "Fast interpolation-based t-SNE"),
// for 1- and 2-dimensional point sets:
//
//   phi_o(i) = sum_j K_o(y_i - y_j) q_o(j)      (j = i included)
//
// for a few translation-invariant kernels K (even or odd, such as
// (y_i - y_j) w_ij^2) and charge vectors q.
//
// The bounding box of the points is cut into equal boxes; each box holds p
// Lagrange interpolation nodes per dimension, at the midpoints of p equal
// sub-intervals, so the nodes of all boxes form one equispaced grid and no
// node is shared by two boxes. A point's charge is spread to the p^d nodes
// of its own box with the Lagrange weights of its position; the node-to-
// node kernel sums are a discrete convolution, done by FFT on a zero-padded
// grid (Eigen's FFT module, kissfft backend); the potentials are
// interpolated back to the points with the same weights. The work is
// O(n p^d) plus the FFTs of O(M log M) for M grid nodes; the error is that
// of degree p - 1 interpolation of K over one box (the node spacing h / p
// against the kernel's length scale).
//
// Determinism: the points are sorted by box (a stable counting sort), every
// node is written by the one task that owns its row of boxes, in the sorted
// order, and every FFT line is transformed on its own; nothing depends on
// the number of threads or on how a range is split.
#ifndef LSNN_INTERPOLATION_H
#define LSNN_INTERPOLATION_H

#include <unsupported/Eigen/FFT>

#include "large_buffer.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace lsnn {

// How fine the grid is: p nodes per box and dimension, boxes at most
// `box_width` wide (in the units of the coordinates), at least `min_boxes`
// per dimension.
struct GridSettings {
  int nodes = 3;
  double box_width = 1.0;
  int min_boxes = 1;
  // Near field: the grid sums only the pairs of points whose boxes are not
  // neighbours (the node-to-node sums between neighbouring boxes are taken
  // off the potentials), the caller sums the neighbouring pairs itself.
  bool near_field = false;
  // The near field's reach: the boxes at most near_boxes away (in both
  // coordinates) are neighbours.
  int near_boxes = 1;
  // With a near field: at least (n / points_per_box)^(1/d) boxes per
  // dimension (0: no such bound), so that the direct sums stay short.
  double points_per_box = 0.0;
  // Widen the boxes when the layout would need over 6,000 nodes per
  // dimension (scale-free kernels) instead of failing.
  bool widen = false;
  // With a near field: the time of one near pair in units of one FFT
  // element-level (0: the boxes are never refined for crowding), and the
  // box width below which the grid alone resolves the kernel (0: never).
  double pair_weight = 0.0;
  double smooth_width = 0.0;
  // With a near field: boxes at most this wide take a near field one box
  // deep instead of near_boxes (0: never).
  double shallow_width = 0.0;
  // With a near field and pair_weight: refine() may also take fine_nodes
  // nodes per box (0: never), with no near field for boxes at most
  // fine_smooth_width wide and one box deep beyond. Higher-order
  // interpolation resolves the kernel over wider boxes, so a shallower near
  // field keeps the accuracy.
  int fine_nodes = 0;
  double fine_smooth_width = 0.0;
  // Whether a layout of separate clusters may be summed by components
  // (fft_repulsion.h); off for a plain grid set by the caller.
  bool by_components = true;
};

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

// What a kernel's spectrum depends on besides the kernel: the padded grid's
// size, the node spacing and which offsets are left to the near field (the
// nodes per box and the near field's reach in boxes); not the number of
// nodes: the kernel fills the whole padded grid.
struct GridKernelKey {
  std::size_t L0 = 0, L1 = 0, nodes = 0, reach = 0;
  double s0 = 0.0, s1 = 0.0;
  bool near = false, separated = false;
  bool operator==(const GridKernelKey& o) const {
    return L0 == o.L0 && L1 == o.L1 && nodes == o.nodes && reach == o.reach && s0 == o.s0 &&
           s1 == o.s1 && near == o.near && separated == o.separated;
  }
};

// A kernel's spectrum, shared by the grids (and the cache) that use it.
typedef std::shared_ptr<const large_vector<std::complex<double>>> SharedSpectrum;
typedef std::shared_ptr<large_vector<std::complex<double>>> SpectrumBuffer;

// Kernel spectra (and near-field tables) kept for the grids of one
// evaluator: fft_repulsion.h lays a grid per component of the layout, and
// the grid object that sums a part of the layout can change from one
// evaluation to the next while its size and spacing do not (at 1e6 points
// the layout's core moved between levels of the halo's shedding, and its
// grid's three spectra, 50 MB each, took 2.5 s to make again). Grids hold
// the spectra themselves, not copies. Entries unused for a whole
// evaluation are dropped (next_generation(), once per evaluation). Used
// from the calling thread only.
class SpectrumCache {
 public:
  struct Entry {
    std::size_t slot;
    GridKernelKey key;
    SpectrumBuffer spectrum;
    std::vector<double> near;
    std::size_t used;
  };
  bool contains(std::size_t slot, const GridKernelKey& key) const {
    return index_of(slot, key) < entries_.size();
  }
  // the entry (marked as used in this evaluation), or null
  const Entry* find(std::size_t slot, const GridKernelKey& key) {
    const std::size_t k = index_of(slot, key);
    if (k == entries_.size()) return nullptr;
    entries_[k].used = generation_;
    return &entries_[k];
  }
  void add(std::size_t slot, const GridKernelKey& key, SpectrumBuffer spectrum,
           const std::vector<double>& near) {
    entries_.push_back({slot, key, std::move(spectrum), near, generation_});
  }
  std::size_t index_of(std::size_t slot, const GridKernelKey& key) const {
    std::size_t k = 0;
    while (k < entries_.size() && !(entries_[k].slot == slot && entries_[k].key == key)) ++k;
    return k;
  }
  // Called once per evaluation. Entries unused for kKeep evaluations are
  // dropped, and of those unused in the last one, the least recently used
  // beyond twice the bytes of those used in it: a layout whose grid flips
  // between two or three sizes and shapes (its extent at a step of the
  // ladder) finds each in the cache.
  void next_generation() {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.used > b.used; });
    double used = 0.0, kept = 0.0;
    std::size_t k = 0;
    for (; k < entries_.size(); ++k) {
      const double bytes = static_cast<double>(entries_[k].spectrum->size()) * 16.0 +
                           static_cast<double>(entries_[k].near.size()) * 8.0;
      if (entries_[k].used == generation_) {
        used += bytes;
      } else {
        kept += bytes;
        if (kept > 2.0 * used || entries_[k].used + kKeep < generation_) break;
      }
    }
    // the spectra of the dropped entries that no grid holds are kept for
    // reuse, at most as many bytes as those in use
    for (std::size_t e = k; e < entries_.size(); ++e) {
      if (entries_[e].spectrum.use_count() == 1) spare_.push_back(std::move(entries_[e].spectrum));
    }
    entries_.resize(k);
    double spare_bytes = 0.0;
    std::size_t s = 0;
    for (; s < spare_.size(); ++s) {
      spare_bytes += static_cast<double>(spare_[s]->capacity()) * 16.0;
      if (spare_bytes > used) break;
    }
    spare_.resize(s);
    ++generation_;
  }
  // Storage for a spectrum of `size` values: a spare one if any is large
  // enough (memory new to the process costs a page fault per 4 KB: 0.5 s
  // for one spectrum of a 3,840 x 3,840 grid here, four times its
  // transform), else new.
  SpectrumBuffer storage(std::size_t size) {
    std::size_t best = spare_.size();
    for (std::size_t s = 0; s < spare_.size(); ++s) {
      if (spare_[s]->capacity() >= size &&
          (best == spare_.size() || spare_[s]->capacity() < spare_[best]->capacity())) {
        best = s;
      }
    }
    if (best == spare_.size()) return std::make_shared<large_vector<std::complex<double>>>(size);
    SpectrumBuffer b = std::move(spare_[best]);
    spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(best));
    b->resize(size);
    return b;
  }
  static constexpr std::size_t kKeep = 8;

 private:
  std::vector<Entry> entries_;
  std::vector<SpectrumBuffer> spare_;
  std::size_t generation_ = 0;
};

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

// The scratch buffers of a grid evaluation (node charges and their spectra,
// the products, the node potentials, the kernel's values), shared by all
// grids of one evaluator: each grid uses them only from spread() to the end
// of its potentials(), and the grids of one evaluation run one after
// another. A layout's grids change from one evaluation to the next (the
// components, the halo's levels), and grids with buffers of their own
// faulted their memory in afresh each time (a tenth of an iteration at 1e5
// points).
struct GridWorkspace {
  large_vector<double> charges, potentials, kernel_values;
  large_vector<std::complex<double>> charge_spectra, products;
};

class InterpolationGrid {
 public:
  typedef std::complex<double> cplx;
  // the most interpolation nodes per box and dimension
  static constexpr std::size_t kMaxNodes = 32;

  // Lays the boxes over the points Y (coordinate c of point i at
  // Y[c * stride + i], d = 1 or 2) and sorts the points by box.
  template <typename Executor>
  void layout(const double* Y, std::size_t n, std::size_t d, std::size_t stride,
              const GridSettings& gs, Executor& executor) {
    if (d < 1 || d > 2) throw std::invalid_argument("grid interpolation needs 1 or 2 dimensions");
    if (gs.nodes < 1 || gs.nodes > static_cast<int>(kMaxNodes) || !(gs.box_width > 0.0) ||
        gs.fine_nodes < 0 || gs.fine_nodes > static_cast<int>(kMaxNodes)) {
      throw std::invalid_argument("grid interpolation needs 1 to 32 nodes and box_width > 0");
    }
    n_ = n;
    d_ = d;
    stride_ = stride;
    near_ = gs.near_field;
    separated_ = false;
    components_ = 0;
    R_ = static_cast<std::size_t>(std::max(gs.near_boxes, 1));
    Y_ = Y;
    p_ = static_cast<std::size_t>(gs.nodes);
    for (std::size_t c = 0; c < 2; ++c) {
      nb_[c] = 1;
      lo_[c] = 0.0;
      h_[c] = 1.0;
      floor_[c] = 1;
    }
    for (std::size_t c = 0; c < d; ++c) lay_boxes(c, gs);
    const bool refined = near_ && gs.pair_weight > 0.0;
    if (refined) refine(gs);
    for (std::size_t c = 0; c < 2; ++c) {
      M_[c] = c < d ? nb_[c] * p_ : 1;
      L_[c] = c < d ? fft_size(2 * M_[c]) : 1;
    }
    if (refined) prefer_cached_width();
    H0_ = L_[0] / 2 + 1;
    set_lagrange_denominators();
    sort_points_by_box(executor);
  }

  std::size_t nodes_total() const { return M_[0] * M_[1]; }
  // Kernel spectra are looked up in, and added to, `cache`; the scratch
  // buffers are `work` (either may be null: the grid's own).
  void share(SpectrumCache* cache, GridWorkspace* work) {
    cache_ = cache;
    work_ = work;
  }

  // Gives back the memory of the grid's nodes and transforms (a grid that
  // once covered a large layout would otherwise keep it): the next
  // evaluation allocates what it needs again.
  void release() {
    own_work_ = GridWorkspace();
    std::vector<SharedSpectrum>().swap(kernels_);
    component_work_.clear();
    std::vector<std::vector<double>>().swap(spatial_);
    std::vector<GridKernelKey>().swap(keys_);
    std::vector<FftWorker>().swap(workers_);
  }
  // whether the caller must sum the near field (refine() may drop it)
  bool near_field() const { return near_; }
  double node_spacing(std::size_t c) const { return h_[c] / p_; }

  // Spreads m charge vectors onto the grid and takes their spectra:
  // charge(o, i) is the charge of point i in set o.
  template <typename Executor, typename Charge>
  void spread(std::size_t m, Charge&& charge, Executor& executor) {
    const std::size_t nodes = nodes_total();
    large_vector<double>& charges = work().charges;
    charges.assign(m * nodes, 0.0);
    const std::size_t pp = p_, pd = d_ == 2 ? p_ * p_ : p_;
    // one task per row of boxes: the rows' nodes are disjoint
    executor.parallel_for(
        0, nb_[1],
        [&](std::size_t r0, std::size_t r1) {
          std::vector<double> wx(pp), wy(pp), w(pd), q(m);
          for (std::size_t by = r0; by < r1; ++by) {
            for (std::size_t bx = 0; bx < nb_[0]; ++bx) {
              const std::size_t box = by * nb_[0] + bx;
              for (std::size_t s = start_[box]; s < start_[box + 1]; ++s) {
                const std::size_t i = order_[s];
                weights(i, wx.data(), wy.data(), w.data());
                for (std::size_t o = 0; o < m; ++o) q[o] = charge(o, i);
                for (std::size_t ky = 0; ky < (d_ == 2 ? pp : 1); ++ky) {
                  const std::size_t row = (by * pp + ky) * M_[0] + bx * pp;
                  for (std::size_t kx = 0; kx < pp; ++kx) {
                    const double wk = w[ky * pp + kx];
                    for (std::size_t o = 0; o < m; ++o) {
                      charges[o * nodes + row + kx] += wk * q[o];
                    }
                  }
                }
              }
            }
          }
        },
        1);
    large_vector<cplx>& spectra = work().charge_spectra;
    if (spectra.size() < m * spectrum_size()) spectra.resize(m * spectrum_size());
    forward(charges.data(), m, nodes, M_[1], M_[0], spectra.data(), executor);
  }

  // The spectrum of kernel K(dx, dy) (dy = 0 in 1-D) on the padded grid,
  // stored as kernel number `slot`.
  // A slot must always hold the same kernel: its spectrum is kept while the
  // grid keeps its size and spacing.
  template <typename Executor, typename Kernel>
  void kernel(std::size_t slot, Kernel&& K, Executor& executor) {
    const std::size_t L0 = L_[0], L1 = L_[1];
    const double s0 = node_spacing(0), s1 = d_ == 2 ? node_spacing(1) : 0.0;
    const GridKernelKey key = kernel_key(h_[0], h_[1]);
    if (keys_.size() <= slot) keys_.resize(slot + 1);
    if (kernels_.size() <= slot) kernels_.resize(slot + 1);
    const bool shared = cache_ != nullptr && !separated_;
    if (keys_[slot] == key && kernels_[slot]) {
      // (marked as used, so that the cache keeps it while the grid does)
      if (shared) cache_->find(slot, key);
      return;
    }
    keys_[slot] = key;
    if (near_ && near_tables_.size() <= slot) near_tables_.resize(slot + 1);
    if (shared) {
      if (const SpectrumCache::Entry* e = cache_->find(slot, key)) {
        kernels_[slot] = e->spectrum;
        if (near_) near_tables_[slot] = e->near;
        return;
      }
    }
    large_vector<double>& values = work().kernel_values;
    values.assign(L0 * L1, 0.0);
    double* kg = values.data();
    // Grid offsets wrap around the padded length: k < L / 2 is the offset k,
    // k > L / 2 the offset k - L. The nodes' own offsets are at most M - 1 <
    // L / 2; the kernel fills the rest too, so that it does not depend on M.
    auto offset = [](std::size_t k, std::size_t L, double s, bool& live) {
      live = true;
      if (2 * k < L) return static_cast<double>(k) * s;
      if (2 * k > L) return -static_cast<double>(L - k) * s;
      live = false;
      return 0.0;
    };
    // With a near field, node offsets of at most R p nodes in every
    // dimension join only neighbouring boxes, whose sums are taken off
    // again: those values are zero (the kernel may be singular at 0).
    const std::size_t p = p_, rp = R_ * p_;
    const bool near = near_;
    auto inner = [rp](std::size_t k, std::size_t L) { return k <= rp || k >= L - rp; };
    executor.parallel_for(
        0, L1,
        [&](std::size_t r0, std::size_t r1) {
          for (std::size_t ky = r0; ky < r1; ++ky) {
            bool live_y = true;
            const double dy = d_ == 2 ? offset(ky, L1, s1, live_y) : 0.0;
            if (!live_y) continue;
            const bool inner_y = d_ == 1 || inner(ky, L1);
            for (std::size_t kx = 0; kx < L0; ++kx) {
              bool live_x;
              const double dx = offset(kx, L0, s0, live_x);
              if (!live_x || (near && inner_y && inner(kx, L0))) continue;
              kg[ky * L0 + kx] = K(dx, dy);
            }
          }
        },
        16);
    if (near) {
      // the node-to-node kernel between neighbouring boxes, read off the
      // grid above, offsets up to off = (R + 1) p - 1 nodes:
      // t[(oy + off) * (2 off + 1) + ox + off] = K(-ox, -oy) (reversed:
      // remove_near() then runs forwards over the sources)
      const std::size_t off = (R_ + 1) * p - 1, w = 2 * off + 1, h = d_ == 2 ? w : 1;
      std::vector<double>& t = near_tables_[slot];
      t.assign(w * h, 0.0);
      for (std::size_t a = 0; a < h; ++a) {
        const std::size_t ky = d_ == 2 ? (L1 + off - a) % L1 : 0;
        for (std::size_t b = 0; b < w; ++b) {
          const std::size_t kx = (L0 + off - b) % L0;
          t[a * w + b] = kg[ky * L0 + kx];
        }
      }
    }
    if (separated_) {
      // remove_component() reads the kernel at any node offset
      if (spatial_.size() <= slot) spatial_.resize(slot + 1);
      spatial_[slot].assign(values.begin(), values.end());
    }
    SpectrumBuffer spectrum = shared ? cache_->storage(spectrum_size())
                                     : std::make_shared<large_vector<cplx>>(spectrum_size());
    forward(kg, 1, 0, L1, L0, spectrum->data(), executor);
    kernels_[slot] = spectrum;
    if (shared) cache_->add(slot, key, spectrum, near_ ? near_tables_[slot] : std::vector<double>());
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
    const std::size_t nout = kslot.size(), nodes = nodes_total();
    large_vector<double>& pot = work().potentials;
    if (pot.size() < nout * nodes) pot.resize(nout * nodes);
    inverse(kslot, cslot, pot.data(), executor);
    if (separated_) {
      remove_component(kslot, cslot, executor);
    } else if (near_) {
      remove_near(kslot, cslot, executor);
    }
    const std::size_t pp = p_, pd = d_ == 2 ? p_ * p_ : p_;
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          std::vector<double> wx(pp), wy(pp), w(pd);
          for (std::size_t i = b; i < e; ++i) {
            weights(i, wx.data(), wy.data(), w.data());
            const std::size_t box = box_[i];
            const std::size_t bx = box % nb_[0], by = box / nb_[0];
            for (std::size_t o = 0; o < nout; ++o) {
              if (!wanted(o, i)) continue;
              const double* g = pot.data() + o * nodes;
              double acc = 0.0;
              for (std::size_t ky = 0; ky < (d_ == 2 ? pp : 1); ++ky) {
                const std::size_t row = (by * pp + ky) * M_[0] + bx * pp;
                for (std::size_t kx = 0; kx < pp; ++kx) acc += w[ky * pp + kx] * g[row + kx];
              }
              out[o * n_ + i] = acc;
            }
          }
        },
        1024);
  }

  // The box holding position `pos` (d coordinates); false when `pos` lies
  // outside the grid.
  bool box_at(const double* pos, std::size_t& box) const {
    std::size_t b[2] = {0, 0};
    for (std::size_t c = 0; c < d_; ++c) {
      const double u = (pos[c] - lo_[c]) / h_[c];
      if (!(u >= 0.0 && u < static_cast<double>(nb_[c]))) return false;
      b[c] = std::min(static_cast<std::size_t>(u), nb_[c] - 1);
    }
    box = b[1] * nb_[0] + b[0];
    return true;
  }

  // After potentials(): its first `nout` outputs interpolated at a position
  // `pos` of box `box` (from box_at()), which need not be one of the points:
  // the node potentials stay until the next potentials() of a grid
  // with the same workspace.
  void potentials_at(const double* pos, std::size_t box, std::size_t nout, double* out) const {
    const std::size_t pp = p_, nodes = nodes_total();
    const std::size_t bx = box % nb_[0], by = box / nb_[0];
    double wx[kMaxNodes], wy[kMaxNodes];
    lagrange((pos[0] - lo_[0]) / h_[0] - static_cast<double>(bx), wx);
    if (d_ == 2) {
      lagrange((pos[1] - lo_[1]) / h_[1] - static_cast<double>(by), wy);
    } else {
      wy[0] = 1.0;
    }
    const double* pot = work().potentials.data();
    for (std::size_t o = 0; o < nout; ++o) {
      const double* g = pot + o * nodes;
      double acc = 0.0;
      for (std::size_t ky = 0; ky < (d_ == 2 ? pp : 1); ++ky) {
        const std::size_t row = (by * pp + ky) * M_[0] + bx * pp;
        double line = 0.0;
        for (std::size_t kx = 0; kx < pp; ++kx) line += wx[kx] * g[row + kx];
        acc += wy[ky] * line;
      }
      out[o] = acc;
    }
  }

  // Components (with a near field): the filled boxes, joined when they are
  // at most near_boxes apart in every coordinate, so that any two points of
  // different components are far pairs of the grid. Returns their number;
  // component c holds the boxes component_boxes()[component_start()[c] ..
  // component_start()[c + 1]) in box order, numbered by their first box.
  // With `keep`, only the filled boxes b with keep[b] count.
  std::size_t label_components(const std::vector<unsigned char>* keep = nullptr) {
    separated_ = false;
    components_ = 0;
    if (!near_) return 0;
    const std::size_t nb0 = nb_[0], nb1 = nb_[1], nboxes = nb0 * nb1, R = R_;
    const std::size_t none = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t>& parent = fill_;  // scratch until the next layout
    parent.assign(nboxes, none);
    auto root = [&parent](std::size_t b) {
      while (parent[b] != b) b = parent[b] = parent[parent[b]];
      return b;
    };
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (start_[b] != start_[b + 1] && (keep == nullptr || (*keep)[b])) parent[b] = b;
    }
    for (std::size_t by = 0; by < nb1; ++by) {
      for (std::size_t bx = 0; bx < nb0; ++bx) {
        const std::size_t b = by * nb0 + bx;
        if (parent[b] == none) continue;
        // the neighbours after b in box order
        for (std::size_t ny = by; ny < std::min(nb1, by + R + 1); ++ny) {
          const std::size_t x0 = ny == by ? bx + 1 : (bx > R ? bx - R : 0);
          for (std::size_t nx = x0; nx < std::min(nb0, bx + R + 1); ++nx) {
            const std::size_t o = ny * nb0 + nx;
            if (parent[o] == none) continue;
            const std::size_t ra = root(b), rb = root(o);
            if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
          }
        }
      }
    }
    // number the components by their first box; list their boxes
    comp_of_box_.assign(nboxes, none);
    std::vector<std::size_t> count;
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (parent[b] == none) continue;
      const std::size_t r = root(b);
      if (comp_of_box_[r] == none) {
        comp_of_box_[r] = count.size();
        count.push_back(0);
      }
      comp_of_box_[b] = comp_of_box_[r];
      ++count[comp_of_box_[b]];
    }
    components_ = count.size();
    comp_start_.assign(components_ + 1, 0);
    for (std::size_t c = 0; c < components_; ++c) comp_start_[c + 1] = comp_start_[c] + count[c];
    comp_boxes_.resize(comp_start_[components_]);
    std::vector<std::size_t> at(comp_start_.begin(), comp_start_.end() - 1);
    for (std::size_t b = 0; b < nboxes; ++b) {
      if (comp_of_box_[b] != none) comp_boxes_[at[comp_of_box_[b]]++] = b;
    }
    return components_;
  }
  const std::vector<std::size_t>& component_start() const { return comp_start_; }
  const std::vector<std::size_t>& component_boxes() const { return comp_boxes_; }
  std::size_t component_of_point(std::size_t i) const { return comp_of_box_[box_[i]]; }
  std::size_t box_of_point(std::size_t i) const { return box_[i]; }

  // From now until the next layout, potentials() leaves out of charge set 0
  // the sums within each component but `skip` (by direct node sums, or by
  // an FFT over the component's extent where that costs less: a component
  // of m nodes costs m^2 directly; the caller handles `skip` with a charge
  // set that leaves it out), instead of the near field. False, and nothing
  // changes, when those sums would cost more than `budget` node pairs.
  bool separate(std::size_t skip, double budget) {
    if (components_ < 2) return false;
    const std::size_t pd = d_ == 2 ? p_ * p_ : p_;
    double work = 0.0;
    removal_boxes_.clear();
    fft_components_.clear();
    for (std::size_t c = 0; c < components_; ++c) {
      if (c == skip) continue;
      // node sums directly, or by an FFT over the component's own extent
      // (what a large component costs)
      const double nodes = static_cast<double>(pd * (comp_start_[c + 1] - comp_start_[c]));
      const double direct = nodes * nodes;
      std::size_t w, h;
      component_extent(c, w, h);
      const double lw = static_cast<double>(fft_size(2 * w)), lh = d_ == 2 ? fft_size(2 * h) : 1.0;
      const double fft = 7.0 * 4.0 * lw * lh * std::log2(std::max(2.0, lw * lh));
      if (fft < direct) {
        work += fft;
        fft_components_.push_back(c);
        continue;
      }
      work += direct;
      for (std::size_t k = comp_start_[c]; k < comp_start_[c + 1]; ++k) {
        removal_boxes_.push_back(comp_boxes_[k]);
      }
    }
    if (work > budget) return false;
    separated_ = true;
    return true;
  }

  // Points sorted by box, and the boxes' ranges in that order (for near-
  // field corrections).
  const std::vector<std::size_t>& order() const { return order_; }
  const std::vector<std::size_t>& box_start() const { return start_; }
  std::size_t boxes(std::size_t c) const { return nb_[c]; }
  std::size_t near_boxes() const { return R_; }

 private:
  // The boxes along dimension c: their number, width and origin.
  void lay_boxes(std::size_t c, const GridSettings& gs) {
    const double* y = Y_ + c * stride_;
    double lo = y[0], hi = y[0];
    for (std::size_t i = 1; i < n_; ++i) {
      lo = std::min(lo, y[i]);
      hi = std::max(hi, y[i]);
    }
    if (!std::isfinite(lo) || !std::isfinite(hi)) {
      throw std::runtime_error("the coordinates are not finite");
    }
    const double range = hi - lo;
    // Boxes exactly box_width wide while there are at least min_boxes of
    // them (the kernel's spectrum then changes only when the grid grows),
    // else min_boxes boxes over the range; a little room on both sides so
    // that no point sits on the outer edge.
    const double pad = 1e-9 * std::max(range, std::max(std::fabs(lo), std::fabs(hi))) +
                       std::numeric_limits<double>::min();
    double boxes = std::ceil((range + 2.0 * pad) / gs.box_width);
    double minbd = std::max(gs.min_boxes, 1);
    if (gs.near_field && gs.points_per_box > 0.0) {
      const double per_dim = d_ == 2 ? std::sqrt(n_ / gs.points_per_box) : n_ / gs.points_per_box;
      minbd = std::max(minbd, std::floor(per_dim));
    }
    // at most kMaxNodesPerDim nodes per dimension: a wider layout has
    // diverged, or (widen) the boxes grow
    const double max_boxes = std::floor(static_cast<double>(kMaxNodesPerDim) / gs.nodes);
    minbd = std::min(minbd, max_boxes);
    // refine() coarsens no further than this
    floor_[c] = static_cast<std::size_t>(minbd);
    if (!(boxes <= max_boxes)) {
      if (!gs.widen || !std::isfinite(range)) {
        throw std::length_error(
            "the layout is too wide for the interpolation grid (over 6,000 nodes per "
            "dimension); the optimisation has probably diverged (try a smaller step size)");
      }
      boxes = 0.0;  // min boxes over the range below
      minbd = max_boxes;
    }
    const std::size_t minb = static_cast<std::size_t>(minbd);
    if (boxes >= static_cast<double>(minb)) {
      nb_[c] = static_cast<std::size_t>(boxes);
      h_[c] = gs.box_width;
    } else {
      nb_[c] = minb;
      h_[c] = ladder_width((range + 2.0 * pad) / static_cast<double>(minb));
    }
    lo_[c] = 0.5 * (lo + hi) - 0.5 * h_[c] * static_cast<double>(nb_[c]);
    mid_[c] = 0.5 * (lo + hi);
    span_[c] = range + 2.0 * pad;
  }

  // Lagrange denominators for the nodes t_k = (k + 1/2) / p in [0, 1).
  void set_lagrange_denominators() {
    t_.resize(p_);
    denom_.resize(p_);
    for (std::size_t k = 0; k < p_; ++k) t_[k] = (static_cast<double>(k) + 0.5) / p_;
    for (std::size_t k = 0; k < p_; ++k) {
      double den = 1.0;
      for (std::size_t m = 0; m < p_; ++m) {
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
          for (std::size_t i = b; i < e; ++i) box_[i] = box_of(i);
        },
        4096);
    const std::size_t nboxes = nb_[0] * nb_[1];
    start_.assign(nboxes + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) ++start_[box_[i] + 1];
    for (std::size_t b = 0; b < nboxes; ++b) start_[b + 1] += start_[b];
    order_.resize(n_);
    fill_.assign(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < n_; ++i) order_[fill_[box_[i]]++] = i;
  }

  std::size_t spectrum_size() const { return H0_ * L_[1]; }

  // The grid's resolution, chosen by cost. Two things make a fixed box width
  // dear:
  //  - crowding: the near field's direct sums grow as the square of the
  //    points per box, so points crowded into a few boxes (a spectral start,
  //    clusters under early exaggeration) made one t-SNE evaluation of
  //    70,000 points take 15 s;
  //  - width: the FFTs grow with the layout's area, not with n, so a layout
  //    1,000 units wide made one evaluation of 5,000 points take 45 s.
  // So grids 2, 4, 8 and 16 times finer (up to 2,048 nodes per dimension)
  // and, while the grid has more nodes than there are points, 2, 4, 8, ...
  // times coarser (down to the boxes that points_per_box asks for) are
  // costed, near pairs against FFT and interpolation work, each with the
  // grid's shapes that keep the accuracy at its box width (nodes per box
  // and the near field's depth: no near field where the boxes are narrower
  // than the width at which the grid alone resolves the kernel, one box
  // deep below shallow_width, and the same with fine_nodes nodes), and the
  // cheapest is taken. Coarser boxes keep
  // the accuracy: the far pairs stay at least near_boxes boxes apart, where
  // the kernels beyond their core are power laws (scale-free: the
  // interpolation error depends on the nodes per box, not on the width).
  // So the cost of an evaluation is bounded by that of a grid of about n
  // nodes with its near field, whatever the layout's width.
  // Deterministic: a function of the coordinates alone.
  void refine(const GridSettings& gs) {
    const std::size_t base[2] = {nb_[0], nb_[1]};
    const double h0[2] = {h_[0], h_[1]};
    std::vector<std::size_t> count;
    // boxes `scale` times finer (scale > 1) or 1 / scale times coarser
    auto place = [&](double scale) {
      for (std::size_t c = 0; c < d_; ++c) {
        const double boxes = std::ceil(static_cast<double>(base[c]) * scale);
        nb_[c] = static_cast<std::size_t>(std::max(1.0, boxes));
        h_[c] = scale == 1.0 ? h0[c] : ladder_width(span_[c] / static_cast<double>(nb_[c]));
        lo_[c] = mid_[c] - 0.5 * h_[c] * static_cast<double>(nb_[c]);
      }
    };
    // the FFTs' share of the time below (a lower bound of the whole), with
    // p nodes per box
    auto fft_cost = [&](double scale, std::size_t p) {
      double fft = 1.0;
      for (std::size_t c = 0; c < d_; ++c) {
        const double boxes = std::max(1.0, std::ceil(static_cast<double>(base[c]) * scale));
        fft *= static_cast<double>(fft_size(2 * static_cast<std::size_t>(boxes) * p));
      }
      return fft * std::log2(fft) * static_cast<double>(2 * d_ + 3);
    };
    // The shapes a grid may take: nodes per box, near field and its depth,
    // and the widest boxes at which each keeps the accuracy.
    struct Shape {
      std::size_t p, R;
      bool near;
      double max_width;
    };
    const std::size_t deep = R_, p0 = p_;
    std::vector<Shape> shapes;
    if (gs.smooth_width > 0.0) shapes.push_back({p0, 0, false, gs.smooth_width});
    if (gs.shallow_width > 0.0) shapes.push_back({p0, 1, true, gs.shallow_width});
    shapes.push_back({p0, deep, true, HUGE_VAL});
    std::size_t p_min = p0;
    if (gs.fine_nodes > 0) {
      const std::size_t pf = static_cast<std::size_t>(gs.fine_nodes);
      if (gs.fine_smooth_width > 0.0) shapes.push_back({pf, 0, false, gs.fine_smooth_width});
      shapes.push_back({pf, 1, true, HUGE_VAL});
      p_min = std::min(p_min, pf);
    }
    // near pairs with the boxes placed: sum over boxes of count x count of
    // its neighbourhood R boxes deep; `filled` the boxes holding points
    std::vector<double> pairs_at;
    double filled = 0.0;
    auto count_boxes = [&]() {
      const std::size_t nx = nb_[0], ny = d_ == 2 ? nb_[1] : 1;
      count.assign((nx + 1) * (ny + 1), 0);
      for (std::size_t i = 0; i < n_; ++i) {
        const std::size_t b = box_of(i);
        ++count[(b / nx + 1) * (nx + 1) + b % nx + 1];
      }
      // 2-D prefix sums (row 0 and column 0 stay 0)
      for (std::size_t y = 1; y <= ny; ++y) {
        for (std::size_t x = 1; x <= nx; ++x) {
          count[y * (nx + 1) + x] += count[y * (nx + 1) + x - 1] +
                                     count[(y - 1) * (nx + 1) + x] -
                                     count[(y - 1) * (nx + 1) + x - 1];
        }
      }
      pairs_at.assign(deep + 1, -1.0);
      filled = -1.0;
    };
    auto near_pairs = [&](std::size_t R) {
      if (pairs_at[R] >= 0.0) return pairs_at[R];
      const std::size_t nx = nb_[0], ny = d_ == 2 ? nb_[1] : 1;
      auto rect = [&](std::size_t x0, std::size_t x1, std::size_t y0, std::size_t y1) {
        return static_cast<double>(count[y1 * (nx + 1) + x1] - count[y0 * (nx + 1) + x1] -
                                   count[y1 * (nx + 1) + x0] + count[y0 * (nx + 1) + x0]);
      };
      double pairs = 0.0, boxes = 0.0;
      for (std::size_t y = 0; y < ny; ++y) {
        const std::size_t y0 = d_ == 2 && y > R ? y - R : 0;
        const std::size_t y1 = d_ == 2 ? std::min(ny, y + R + 1) : 1;
        for (std::size_t x = 0; x < nx; ++x) {
          const double own = rect(x, x + 1, y, y + 1);
          if (own == 0.0) continue;
          boxes += 1.0;
          pairs += own * rect(x > R ? x - R : 0, std::min(nx, x + R + 1), y0, y1);
        }
      }
      filled = boxes;
      return pairs_at[R] = pairs;
    };
    // estimated time of one evaluation with the boxes `scale` times finer
    // and the grid shaped `sh` (boxes placed by place(scale))
    auto cost = [&](double scale, const Shape& sh) {
      const double pd = d_ == 2 ? static_cast<double>(sh.p * sh.p) : static_cast<double>(sh.p);
      // spreading the charges and interpolating the potentials: the 2d + 3
      // transforms' vectors at pd nodes per point
      const double fft = fft_cost(scale, sh.p) +
                         kInterpolationWeight * static_cast<double>(n_) * pd *
                             static_cast<double>(2 * d_ + 3);
      if (!sh.near) return fft;
      const double pairs = near_pairs(sh.R);
      // and the grid's own near sums taken off again (remove_near): every
      // node of a filled box against the nodes of its neighbourhood, for
      // d + 1 kernels
      const double reach = static_cast<double>((2 * sh.R + 1) * sh.p);
      const double table = d_ == 2 ? reach * reach : reach;
      return fft + gs.pair_weight * pairs + filled * pd * table * static_cast<double>(d_ + 1);
    };
    // the candidates, coarsest first: a grid whose FFTs alone cost more than
    // the best so far is not counted (counting is O(boxes), and a wide
    // layout's base grid has far more boxes than there are points)
    std::vector<double> scales;
    for (double scale = 0.5;; scale *= 0.5) {
      // coarser only while the grid outnumbers the points, and never below
      // the floor of boxes per dimension
      std::size_t nodes = 1;
      bool above_floor = true;
      for (std::size_t c = 0; c < d_; ++c) {
        nodes *= static_cast<std::size_t>(std::ceil(static_cast<double>(base[c]) * scale * 2.0)) * p0;
        above_floor = above_floor &&
                      std::ceil(static_cast<double>(base[c]) * scale) >= static_cast<double>(floor_[c]);
      }
      if (nodes <= n_ || !above_floor) break;
      scales.insert(scales.begin(), scale);
    }
    scales.push_back(1.0);
    for (double scale = 2.0; scale <= 16.0; scale *= 2.0) {
      bool fits = true;
      for (std::size_t c = 0; c < d_; ++c) {
        fits = fits && static_cast<double>(base[c]) * scale * static_cast<double>(p0) <= 2048.0;
      }
      if (!fits) break;
      scales.push_back(scale);
    }
    double best_scale = 1.0, best = HUGE_VAL;
    Shape best_shape = shapes[0];
    bool found = false;
    for (const double scale : scales) {
      if (fft_cost(scale, p_min) >= best) continue;
      place(scale);
      double hmax = h_[0];
      if (d_ == 2) hmax = std::max(hmax, h_[1]);
      bool counted = false;
      for (const Shape& sh : shapes) {
        if (hmax > sh.max_width || fft_cost(scale, sh.p) >= best) continue;
        bool fits = true;
        for (std::size_t c = 0; c < d_; ++c) fits = fits && nb_[c] * sh.p <= kMaxNodesPerDim;
        if (!fits) continue;
        if (sh.near && !counted) {
          count_boxes();
          counted = true;
        }
        const double t = cost(scale, sh);
        if (t < best) {
          best = t;
          best_scale = scale;
          best_shape = sh;
          found = true;
        }
      }
    }
    place(best_scale);
    if (!found) best_shape = {p0, deep, true, HUGE_VAL};
    p_ = best_shape.p;
    max_width_ = best_shape.max_width;
    near_ = best_shape.near;
    R_ = best_shape.near ? best_shape.R : deep;
  }
  // The time of one node weight of one point for one vector (spreading or
  // interpolating) in units of one FFT element-level.
  static constexpr double kInterpolationWeight = 1.0;
  // The most nodes a grid has per dimension (the padded grid then holds up
  // to 144 million values), as lay_boxes() lays them and refine() reshapes.
  static constexpr std::size_t kMaxNodesPerDim = 6000;

  // A grid may take boxes a step or two of the ladder wider (in either
  // dimension) when the kernel spectra of that width are in the cache: the
  // padded grid is the same and the boxes still cover the points; the
  // accuracy is that of the wider boxes, so they stay within the widest at
  // which the grid's shape keeps it (max_width_), and a near field sums at
  // most twice the pairs. A layout whose extent sits at a step of the
  // ladder (the core of a large layout as the halo around it changes)
  // otherwise makes its spectra again at every other evaluation: 1-2.5 s
  // at 1e6 points.
  void prefer_cached_width() {
    if (cache_ == nullptr) return;
    const int steps1 = d_ == 2 ? kWiderSteps : 0;
    for (int total = 1; total <= kWiderSteps + steps1; ++total) {
      for (int s1 = std::min(total, steps1); s1 >= 0 && total - s1 <= kWiderSteps; --s1) {
        const int steps[2] = {total - s1, s1};
        double h[2] = {h_[0], h_[1]};
        bool fits = true;
        for (std::size_t c = 0; c < d_; ++c) {
          for (int k = 0; k < steps[c]; ++k) h[c] = ladder_width(h[c] * 1.01);
          fits = fits && h[c] <= max_width_;
        }
        if (!fits || !cache_->contains(0, kernel_key(h[0], h[1]))) continue;
        for (std::size_t c = 0; c < d_; ++c) {
          h_[c] = h[c];
          lo_[c] = mid_[c] - 0.5 * h_[c] * static_cast<double>(nb_[c]);
        }
        return;
      }
    }
  }
  // how many steps of the ladder wider prefer_cached_width() looks
  static constexpr int kWiderSteps = 2;

  // The key of this grid's kernel spectra with boxes h0 x h1 wide.
  GridKernelKey kernel_key(double h0, double h1) const {
    const double p = static_cast<double>(p_);
    return {L_[0], L_[1], p_, R_, h0 / p, d_ == 2 ? h1 / p : 0.0, near_, separated_};
  }

  std::size_t box_of(std::size_t i) const {
    std::size_t b[2] = {0, 0};
    for (std::size_t c = 0; c < d_; ++c) {
      const double u = (Y_[c * stride_ + i] - lo_[c]) / h_[c];
      std::size_t k = u > 0.0 ? static_cast<std::size_t>(u) : 0;
      b[c] = std::min(k, nb_[c] - 1);
    }
    return b[1] * nb_[0] + b[0];
  }

  // Lagrange weights of point i in its box: wx (and wy), and their products
  // w[ky * p + kx].
  void weights(std::size_t i, double* wx, double* wy, double* w) const {
    const std::size_t box = box_[i];
    const std::size_t bx = box % nb_[0], by = box / nb_[0];
    lagrange((Y_[i] - lo_[0]) / h_[0] - static_cast<double>(bx), wx);
    if (d_ == 2) {
      lagrange((Y_[stride_ + i] - lo_[1]) / h_[1] - static_cast<double>(by), wy);
      for (std::size_t ky = 0; ky < p_; ++ky) {
        for (std::size_t kx = 0; kx < p_; ++kx) w[ky * p_ + kx] = wy[ky] * wx[kx];
      }
    } else {
      for (std::size_t kx = 0; kx < p_; ++kx) w[kx] = wx[kx];
    }
  }

  void lagrange(double t, double* l) const {
    for (std::size_t k = 0; k < p_; ++k) {
      double num = 1.0;
      for (std::size_t m = 0; m < p_; ++m) {
        if (m != k) num *= t - t_[m];
      }
      l[k] = num * denom_[k];
    }
  }

  // The node extent of component c: first node (x0, y0), w x h nodes.
  void component_extent(std::size_t c, std::size_t& w, std::size_t& h, std::size_t* x0 = nullptr,
                        std::size_t* y0 = nullptr) const {
    std::size_t bx0 = nb_[0], bx1 = 0, by0 = nb_[1], by1 = 0;
    for (std::size_t k = comp_start_[c]; k < comp_start_[c + 1]; ++k) {
      const std::size_t b = comp_boxes_[k], bx = b % nb_[0], by = b / nb_[0];
      bx0 = std::min(bx0, bx);
      bx1 = std::max(bx1, bx);
      by0 = std::min(by0, by);
      by1 = std::max(by1, by);
    }
    const std::size_t py = d_ == 2 ? p_ : 1;
    w = (bx1 - bx0 + 1) * p_;
    h = (by1 - by0 + 1) * py;
    if (x0 != nullptr) *x0 = bx0 * p_;
    if (y0 != nullptr) *y0 = by0 * py;
  }

  // remove_component() for the components listed in fft_components_: the
  // component's own node charges (set 0, its boxes only) convolved with the
  // kernel by FFT over its own extent, zero-padded so that nothing wraps.
  // The same sums as the direct ones, in O(m log m) for m nodes of extent
  // instead of O(m^2). One task per component; fixed order.
  template <typename Executor>
  void remove_component_fft(const std::vector<std::size_t>& kslot,
                            const std::vector<std::size_t>& cslot, Executor& executor) {
    const std::size_t nout = kslot.size(), nodes = nodes_total(), M0 = M_[0], L0 = L_[0],
                      L1 = L_[1], nb0 = nb_[0], p = p_, py = d_ == 2 ? p_ : 1;
    const double* g = work().charges.data();  // charge set 0
    double* const potentials = work().potentials.data();
    // one set of buffers per component, kept from one evaluation to the next
    if (component_work_.size() < fft_components_.size()) {
      component_work_.resize(fft_components_.size());
    }
    executor.parallel_for(
        0, fft_components_.size(),
        [&](std::size_t t0, std::size_t t1) {
          for (std::size_t t = t0; t < t1; ++t) {
            ComponentWork& cw = component_work_[t];
            Eigen::FFT<double>& fft = cw.fft;
            std::vector<cplx>&q = cw.q, &k = cw.k, &line = cw.line, &out = cw.out;
            const std::size_t c = fft_components_[t];
            std::size_t w, h, x0, y0;
            component_extent(c, w, h, &x0, &y0);
            const std::size_t lw = fft_size(2 * w), lh = d_ == 2 ? fft_size(2 * h) : 1;
            q.assign(lw * lh, cplx(0.0, 0.0));
            for (std::size_t b = comp_start_[c]; b < comp_start_[c + 1]; ++b) {
              const std::size_t box = comp_boxes_[b];
              const std::size_t ax0 = (box % nb0) * p, ay0 = (box / nb0) * py;
              for (std::size_t ay = ay0; ay < ay0 + py; ++ay) {
                for (std::size_t ax = ax0; ax < ax0 + p; ++ax) {
                  q[(ay - y0) * lw + ax - x0] = g[ay * M0 + ax];
                }
              }
            }
            transform2(fft, q, lw, lh, false, line, out);
            for (std::size_t o = 0; o < nout; ++o) {
              if (cslot[o] != 0) continue;
              // the kernel at offsets (target - source) within the extent
              const double* K = spatial_[kslot[o]].data();
              k.assign(lw * lh, cplx(0.0, 0.0));
              const std::ptrdiff_t W = static_cast<std::ptrdiff_t>(w),
                                   H = static_cast<std::ptrdiff_t>(h);
              for (std::ptrdiff_t dy = -(H - 1); dy < H; ++dy) {
                const std::size_t gy = static_cast<std::size_t>((dy + static_cast<std::ptrdiff_t>(L1)) %
                                                                static_cast<std::ptrdiff_t>(L1));
                const std::size_t ky = static_cast<std::size_t>((dy + static_cast<std::ptrdiff_t>(lh)) %
                                                                static_cast<std::ptrdiff_t>(lh));
                for (std::ptrdiff_t dx = -(W - 1); dx < W; ++dx) {
                  const std::size_t gx = static_cast<std::size_t>(
                      (dx + static_cast<std::ptrdiff_t>(L0)) % static_cast<std::ptrdiff_t>(L0));
                  const std::size_t kx = static_cast<std::size_t>(
                      (dx + static_cast<std::ptrdiff_t>(lw)) % static_cast<std::ptrdiff_t>(lw));
                  k[ky * lw + kx] = K[gy * L0 + gx];
                }
              }
              transform2(fft, k, lw, lh, false, line, out);
              for (std::size_t e = 0; e < k.size(); ++e) k[e] *= q[e];
              transform2(fft, k, lw, lh, true, line, out);
              double* pot = potentials + o * nodes;
              for (std::size_t b = comp_start_[c]; b < comp_start_[c + 1]; ++b) {
                const std::size_t box = comp_boxes_[b];
                const std::size_t ax0 = (box % nb0) * p, ay0 = (box / nb0) * py;
                for (std::size_t ay = ay0; ay < ay0 + py; ++ay) {
                  for (std::size_t ax = ax0; ax < ax0 + p; ++ax) {
                    pot[ay * M0 + ax] -= k[(ay - y0) * lw + ax - x0].real();
                  }
                }
              }
            }
          }
        },
        1);
  }

  // In-place 2-D complex transform of a (w x h, rows of w), forward or
  // inverse (scaled).
  static void transform2(Eigen::FFT<double>& fft, std::vector<cplx>& a, std::size_t w,
                         std::size_t h, bool inverse, std::vector<cplx>& line,
                         std::vector<cplx>& out) {
    out.resize(std::max(w, h));
    for (std::size_t r = 0; r < h; ++r) {
      cplx* row = a.data() + r * w;
      if (inverse) {
        fft.inv(out.data(), row, static_cast<Eigen::Index>(w));
      } else {
        fft.fwd(out.data(), row, static_cast<Eigen::Index>(w));
      }
      std::copy(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(w), row);
    }
    if (h == 1) return;
    line.resize(h);
    for (std::size_t col = 0; col < w; ++col) {
      for (std::size_t r = 0; r < h; ++r) line[r] = a[r * w + col];
      if (inverse) {
        fft.inv(out.data(), line.data(), static_cast<Eigen::Index>(h));
      } else {
        fft.fwd(out.data(), line.data(), static_cast<Eigen::Index>(h));
      }
      for (std::size_t r = 0; r < h; ++r) a[r * w + col] = out[r];
    }
  }

  // Takes off charge set 0's potentials, at the nodes of every component
  // listed by separate(), the part that comes from the nodes of the same
  // component, with the kernel values of the convolution (spatial_). One task
  // per target box; fixed order (the large components by FFT:
  // remove_component_fft()).
  template <typename Executor>
  void remove_component(const std::vector<std::size_t>& kslot,
                        const std::vector<std::size_t>& cslot, Executor& executor) {
    if (!fft_components_.empty()) remove_component_fft(kslot, cslot, executor);
    const std::size_t nout = kslot.size(), nodes = nodes_total(), p = p_;
    const std::size_t M0 = M_[0], L0 = L_[0], L1 = L_[1], nb0 = nb_[0];
    const bool two = d_ == 2;
    const std::size_t py = two ? p : 1;
    const double* g = work().charges.data();  // charge set 0
    double* const pot = work().potentials.data();
    executor.parallel_for(
        0, removal_boxes_.size(),
        [&](std::size_t t0, std::size_t t1) {
          for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t box = removal_boxes_[t], c = comp_of_box_[box];
            const std::size_t bx = box % nb0, by = box / nb0;
            for (std::size_t ky = 0; ky < py; ++ky) {
              const std::size_t ay = by * py + ky;
              for (std::size_t kx = 0; kx < p; ++kx) {
                const std::size_t ax = bx * p + kx;
                for (std::size_t o = 0; o < nout; ++o) {
                  if (cslot[o] != 0) continue;
                  const double* K = spatial_[kslot[o]].data();
                  double acc = 0.0;
                  for (std::size_t k = comp_start_[c]; k < comp_start_[c + 1]; ++k) {
                    const std::size_t sb = comp_boxes_[k];
                    const std::size_t sx0 = (sb % nb0) * p, sy0 = (sb / nb0) * py;
                    for (std::size_t sy = sy0; sy < sy0 + py; ++sy) {
                      // the kernel at offset (a - s), wrapped as the FFT's
                      const double* krow = K + ((ay + L1 - sy) % L1) * L0;
                      const double* grow = g + sy * M0;
                      for (std::size_t sx = sx0; sx < sx0 + p; ++sx) {
                        acc += krow[(ax + L0 - sx) % L0] * grow[sx];
                      }
                    }
                  }
                  pot[o * nodes + ay * M0 + ax] -= acc;
                }
              }
            }
          }
        },
        1);
  }

  // Takes off every node's potential the part that comes from the nodes of
  // its own and the neighbouring boxes (near field), with the same kernel
  // values as the convolution. One task per row of boxes; fixed order.
  template <typename Executor>
  void remove_near(const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
                   Executor& executor) {
    const std::size_t nout = kslot.size(), nodes = nodes_total(), p = p_, R = R_;
    const std::size_t off = (R + 1) * p - 1, w = 2 * off + 1, rp = R * p, M0 = M_[0];
    const std::size_t nb0 = nb_[0], nb1 = nb_[1];
    const bool two = d_ == 2;
    const double* charges = work().charges.data();
    double* const pot = work().potentials.data();
    executor.parallel_for(
        0, nb1,
        [&](std::size_t r0, std::size_t r1) {
          for (std::size_t by = r0; by < r1; ++by) {
            const std::size_t y0 = by > R ? by - R : 0, y1 = std::min(nb1, by + R + 1);
            for (std::size_t bx = 0; bx < nb0; ++bx) {
              // only the nodes of boxes with points are ever read
              const std::size_t box = by * nb0 + bx;
              if (start_[box] == start_[box + 1]) continue;
              const std::size_t x0 = bx > R ? bx - R : 0, x1 = std::min(nb0, bx + R + 1);
              // node rows and columns of the neighbourhood
              const std::size_t cx0 = x0 * p, cx1 = x1 * p;
              const std::size_t cy0 = two ? y0 * p : 0, cy1 = two ? y1 * p : 1;
              for (std::size_t ky = 0; ky < (two ? p : 1); ++ky) {
                const std::size_t ay = two ? by * p + ky : 0;
                for (std::size_t kx = 0; kx < p; ++kx) {
                  const std::size_t ax = bx * p + kx;
                  // the table is zero within rp nodes in both coordinates
                  const std::size_t zx0 = std::max(cx0, ax > rp ? ax - rp : 0);
                  const std::size_t zx1 = std::min(cx1, ax + rp + 1);
                  for (std::size_t o = 0; o < nout; ++o) {
                    const double* t = near_tables_[kslot[o]].data();
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

  // Real 2-D transforms of `count` L0 x L1 grids; grid o's first `rows`
  // rows (of `width` values each, the rest zero) start at src + o * sstride,
  // its half spectrum (H0 x L1) goes to dst + o * spectrum_size(): x by real
  // FFT, then y. All grids share each pass, so a pass is one parallel loop.
  template <typename Executor>
  void forward(const double* src, std::size_t count, std::size_t sstride, std::size_t rows,
               std::size_t width, cplx* dst, Executor& executor) {
    const std::size_t L0 = L_[0], L1 = L_[1], H0 = H0_, S = spectrum_size();
    in_slabs(count * rows, executor, [&](FftWorker& wk, std::size_t t0, std::size_t t1) {
      std::vector<double>& line = wk.line;
      line.resize(L0);
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t o = t / rows, r = t % rows;
        const double* row = src + o * sstride + r * width;
        std::copy(row, row + width, line.begin());
        std::fill(line.begin() + width, line.end(), 0.0);
        wk.fft.fwd(dst + o * S + r * H0, line.data(), static_cast<Eigen::Index>(L0));
      }
    });
    if (L1 == 1) return;
    // rows >= `rows` are zero: the column pass pads them itself
    const auto spectrum = [dst, S](std::size_t o, std::size_t e) { return dst[o * S + e]; };
    column_pass(count, Direction::forward, spectrum, rows, L1, dst, executor);
  }

  // For each output o, the inverse transform (scaled) of kernel kslot[o]'s
  // spectrum times charge set cslot[o]'s, the product formed on the fly;
  // the first M0 x M1 values go to out + o * nodes_total().
  template <typename Executor>
  void inverse(const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
               double* out, Executor& executor) {
    const std::size_t L0 = L_[0], L1 = L_[1], H0 = H0_, M0 = M_[0], M1 = M_[1];
    const std::size_t S = spectrum_size(), nout = kslot.size(), nodes = nodes_total();
    large_vector<cplx>& products = work().products;
    if (products.size() < nout * S) products.resize(nout * S);
    cplx* prod = products.data();
    const cplx* ch = work().charge_spectra.data();
    std::vector<const cplx*>& kh = kernel_of_output_;
    kh.resize(nout);
    for (std::size_t o = 0; o < nout; ++o) kh[o] = kernels_[kslot[o]]->data();
    if (L1 > 1) {
      // the product is formed on the gather; only the first M1 rows are kept
      const auto product = [&](std::size_t o, std::size_t e) {
        return kh[o][e] * ch[cslot[o] * S + e];
      };
      column_pass(nout, Direction::inverse, product, L1, M1, prod, executor);
    } else {
      for (std::size_t o = 0; o < nout; ++o) {
        const cplx* c = ch + cslot[o] * S;
        for (std::size_t e = 0; e < S; ++e) prod[o * S + e] = kh[o][e] * c[e];
      }
    }
    in_slabs(nout * M1, executor, [&](FftWorker& wk, std::size_t t0, std::size_t t1) {
      std::vector<double>& line = wk.line;
      line.resize(L0);
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t o = t / M1, r = t % M1;
        wk.fft.inv(line.data(), prod + o * S + r * H0, static_cast<Eigen::Index>(L0));
        std::copy(line.begin(), line.begin() + M0, out + o * nodes + r * M0);
      }
    });
  }

  enum class Direction { forward, inverse };

  // 1-D transforms along y (forward, or inverse and scaled) of every column
  // of `count` half spectra (H0 x L1): column c of grid o is read as
  // src(o, r * H0 + c) for its first `rows` rows, the rest zero, and the
  // first `keep` values of its transform go to row r, column c of
  // dst + o * spectrum_size(). src may read dst: a task gathers its block
  // of columns before it writes it back. The columns go in blocks, so that
  // the gather and the scatter touch whole cache lines; each column is
  // still transformed on its own.
  template <typename Executor, typename Source>
  void column_pass(std::size_t count, Direction dir, Source&& src, std::size_t rows,
                   std::size_t keep, cplx* dst, Executor& executor) {
    const std::size_t L1 = L_[1], H0 = H0_, S = spectrum_size();
    const std::size_t nblocks = (H0 + kColumnBlock - 1) / kColumnBlock;
    in_slabs(count * nblocks, executor, [&](FftWorker& wk, std::size_t t0, std::size_t t1) {
      std::vector<cplx>&a = wk.a, &b = wk.b;
      a.resize(kColumnBlock * L1);
      b.resize(L1);
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t o = t / nblocks, cb = (t % nblocks) * kColumnBlock;
        const std::size_t w = std::min(kColumnBlock, H0 - cb);
        for (std::size_t r = 0; r < rows; ++r) {
          for (std::size_t k = 0; k < w; ++k) a[k * L1 + r] = src(o, r * H0 + cb + k);
        }
        for (std::size_t k = 0; k < w; ++k) {
          cplx* col = a.data() + k * L1;
          std::fill(col + rows, col + L1, cplx(0.0, 0.0));
          if (dir == Direction::forward) {
            wk.fft.fwd(b.data(), col, static_cast<Eigen::Index>(L1));
          } else {
            wk.fft.inv(b.data(), col, static_cast<Eigen::Index>(L1));
          }
          std::copy(b.begin(), b.end(), col);
        }
        cplx* out = dst + o * S;
        for (std::size_t r = 0; r < keep; ++r) {
          for (std::size_t k = 0; k < w; ++k) out[r * H0 + cb + k] = a[k * L1 + r];
        }
      }
    });
  }

  // kissfft builds its plan (factors and twiddles) on an FFT object's first
  // transform of each length; an object per parallel chunk rebuilt the plans
  // and scratch on every pass (their sincos calls alone were 1.2 % of a
  // 70,000-point t-SNE run). So a pass is cut into at most kSlabs slabs, each
  // with a long-lived FFT object and scratch; every line's transform is the
  // same whichever thread runs it.
  struct FftWorker {
    Eigen::FFT<double> fft;
    std::vector<double> line;
    std::vector<cplx> a, b;
    FftWorker() { fft.SetFlag(Eigen::FFT<double>::HalfSpectrum); }
  };

  // body(worker, t0, t1) over [0, count), in slabs run in parallel.
  template <typename Executor, typename Body>
  void in_slabs(std::size_t count, Executor& executor, Body&& body) {
    if (count == 0) return;
    const std::size_t slabs = std::min(count, kSlabs);
    while (workers_.size() < slabs) workers_.emplace_back();
    executor.parallel_for(
        0, slabs,
        [&](std::size_t s0, std::size_t s1) {
          for (std::size_t s = s0; s < s1; ++s) {
            body(workers_[s], count * s / slabs, count * (s + 1) / slabs);
          }
        },
        1);
  }

  struct ComponentWork {
    Eigen::FFT<double> fft;
    std::vector<cplx> q, k, line, out;
  };
  std::vector<ComponentWork> component_work_;

  static constexpr std::size_t kColumnBlock = 8;
  static constexpr std::size_t kSlabs = 16;
  std::vector<FftWorker> workers_;
  std::vector<GridKernelKey> keys_;
  SpectrumCache* cache_ = nullptr;
  bool near_ = false;
  std::size_t R_ = 1;
  // the widest boxes at which the grid's shape (refine()) keeps the accuracy
  double max_width_ = 0.0;
  // components (label_components(), separate())
  bool separated_ = false;
  std::size_t components_ = 0;
  std::vector<std::size_t> comp_of_box_, comp_start_, comp_boxes_, removal_boxes_,
      fft_components_;
  std::vector<std::vector<double>> spatial_;
  std::vector<std::vector<double>> near_tables_;
  std::size_t n_ = 0, d_ = 1, stride_ = 0, p_ = 3;
  const double* Y_ = nullptr;
  std::size_t nb_[2] = {1, 1}, M_[2] = {1, 1}, L_[2] = {4, 1}, H0_ = 3, floor_[2] = {1, 1};
  double mid_[2] = {0.0, 0.0}, span_[2] = {1.0, 1.0};
  double lo_[2] = {0.0, 0.0}, h_[2] = {1.0, 1.0};
  std::vector<double> t_, denom_;
  std::vector<std::size_t> box_, start_, fill_, order_;
  // the kernels' spectra by slot, and each output's (inverse())
  std::vector<SharedSpectrum> kernels_;
  std::vector<const cplx*> kernel_of_output_;
  GridWorkspace own_work_;
  GridWorkspace* work_ = nullptr;
  GridWorkspace& work() { return work_ != nullptr ? *work_ : own_work_; }
  const GridWorkspace& work() const { return work_ != nullptr ? *work_ : own_work_; }
};

}  // namespace lsnn

#endif  // LSNN_INTERPOLATION_H
