// The sums within the components of a separated coarse grid (plan.h's
// components regions): the coarse grid sums every pair of nodes, so the
// node sums within each component but the largest are taken off its
// potentials again, with the kernel values of its convolution; the
// components' own pairs are the regions' (whose grids resolve them).
#ifndef LSNN_FARFIELD_COMPONENT_SUMS_H
#define LSNN_FARFIELD_COMPONENT_SUMS_H

#include <complex>
#include <cstddef>
#include <vector>

#include "box_grid.h"
#include "fft2.h"

namespace lsnn {

// Which node sums a separated coarse grid takes off charge set 0: those
// within each component but `skip`, by direct node sums over
// `direct_boxes` or by an FFT over the component's extent for the
// components in `fft_components` (planned by plan.h).
struct ComponentRemoval {
  const BoxComponents* components = nullptr;
  std::size_t skip = 0;
  std::vector<std::size_t> direct_boxes, fft_components;
};

class ComponentSums {
 public:
  typedef std::complex<double> cplx;

  // Takes off charge set 0's potentials (pot, nout node grids), at the
  // nodes of every component but removal.skip, the part that comes from the
  // nodes of the same component (charges: set 0's node charges), with the
  // kernel values of the convolution (spatial[slot]). One task per target
  // box; fixed order (the large components by FFT: remove_by_fft()).
  template <typename Executor>
  void remove(const BoxGrid& grid, const ComponentRemoval& removal,
              const std::vector<std::vector<double>>& spatial, const double* charges, double* pot,
              const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
              Executor& executor) {
    grid_ = &grid;
    removal_ = &removal;
    spatial_ = &spatial;
    charges_ = charges;
    pot_ = pot;
    if (!removal.fft_components.empty()) remove_by_fft(kslot, cslot, executor);
    const GridShape& sh = grid.shape();
    const BoxComponents& comps = *removal.components;
    const std::vector<std::size_t>& boxes = removal.direct_boxes;
    const std::size_t nout = kslot.size(), nodes = sh.node_count(), p = sh.nodes_per_box;
    const std::size_t M0 = sh.nodes[0], L0 = sh.padded[0], L1 = sh.padded[1], nb0 = sh.boxes[0];
    const std::size_t py = sh.dims == 2 ? p : 1;
    const double* g = charges;  // charge set 0
    executor.parallel_for(
        0, boxes.size(),
        [&](std::size_t t0, std::size_t t1) {
          for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t box = boxes[t], c = comps.of_box(box);
            const std::size_t bx = box % nb0, by = box / nb0;
            for (std::size_t ky = 0; ky < py; ++ky) {
              const std::size_t ay = by * py + ky;
              for (std::size_t kx = 0; kx < p; ++kx) {
                const std::size_t ax = bx * p + kx;
                for (std::size_t o = 0; o < nout; ++o) {
                  if (cslot[o] != 0) continue;
                  const double* K = spatial[kslot[o]].data();
                  double acc = 0.0;
                  for (std::size_t k = comps.start()[c]; k < comps.start()[c + 1]; ++k) {
                    const std::size_t sb = comps.boxes()[k];
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

  void release() { std::vector<ComponentWork>().swap(component_work_); }

 private:
  // remove() for the components in removal_->fft_components: the
  // component's own node charges (set 0, its boxes only) convolved with the
  // kernel by FFT over its own extent, zero-padded so that nothing wraps.
  // The same sums as the direct ones, in O(m log m) for m nodes of extent
  // instead of O(m^2). One task per component; fixed order.
  template <typename Executor>
  void remove_by_fft(const std::vector<std::size_t>& kslot, const std::vector<std::size_t>& cslot,
                     Executor& executor) {
    const std::vector<std::size_t>& fft_components = removal_->fft_components;
    // one set of buffers per component, kept from one evaluation to the next
    if (component_work_.size() < fft_components.size()) {
      component_work_.resize(fft_components.size());
    }
    executor.parallel_for(
        0, fft_components.size(),
        [&](std::size_t t0, std::size_t t1) {
          for (std::size_t t = t0; t < t1; ++t) {
            remove_one_component(fft_components[t], component_work_[t], kslot, cslot);
          }
        },
        1);
  }

  struct ComponentWork {
    Fft2::Worker fft;
    std::vector<cplx> q, k;
  };

  // Component c's part of remove_by_fft().
  void remove_one_component(std::size_t c, ComponentWork& cw, const std::vector<std::size_t>& kslot,
                            const std::vector<std::size_t>& cslot) {
    const GridShape& sh = grid_->shape();
    const std::size_t nodes = sh.node_count(), L0 = sh.padded[0], L1 = sh.padded[1];
    std::size_t w, h, x0, y0;
    removal_->components->extent(sh, c, w, h, x0, y0);
    const std::size_t lw = fft_size(2 * w), lh = sh.dims == 2 ? fft_size(2 * h) : 1;
    std::vector<cplx>&q = cw.q, &k = cw.k;
    q.assign(lw * lh, cplx(0.0, 0.0));
    for_component_nodes(c, [&](std::size_t ax, std::size_t ay) {
      q[(ay - y0) * lw + ax - x0] = charges_[ay * sh.nodes[0] + ax];
    });
    Fft2::complex(cw.fft, q.data(), lw, lh, Fft2::Direction::forward);
    const std::ptrdiff_t W = static_cast<std::ptrdiff_t>(w), H = static_cast<std::ptrdiff_t>(h);
    const auto wrap = [](std::ptrdiff_t v, std::size_t L) {
      return static_cast<std::size_t>((v + static_cast<std::ptrdiff_t>(L)) %
                                      static_cast<std::ptrdiff_t>(L));
    };
    for (std::size_t o = 0; o < kslot.size(); ++o) {
      if (cslot[o] != 0) continue;
      // the kernel at offsets (target - source) within the extent
      const double* K = (*spatial_)[kslot[o]].data();
      k.assign(lw * lh, cplx(0.0, 0.0));
      for (std::ptrdiff_t dy = -(H - 1); dy < H; ++dy) {
        const std::size_t gy = wrap(dy, L1), ky = wrap(dy, lh);
        for (std::ptrdiff_t dx = -(W - 1); dx < W; ++dx) {
          k[ky * lw + wrap(dx, lw)] = K[gy * L0 + wrap(dx, L0)];
        }
      }
      Fft2::complex(cw.fft, k.data(), lw, lh, Fft2::Direction::forward);
      for (std::size_t e = 0; e < k.size(); ++e) k[e] *= q[e];
      Fft2::complex(cw.fft, k.data(), lw, lh, Fft2::Direction::inverse);
      double* pot = pot_ + o * nodes;
      for_component_nodes(c, [&](std::size_t ax, std::size_t ay) {
        pot[ay * sh.nodes[0] + ax] -= k[(ay - y0) * lw + ax - x0].real();
      });
    }
  }

  // f(ax, ay) for every node of component c, box by box.
  template <typename F>
  void for_component_nodes(std::size_t c, F&& f) const {
    const GridShape& sh = grid_->shape();
    const BoxComponents& comps = *removal_->components;
    const std::size_t nb0 = sh.boxes[0], p = sh.nodes_per_box, py = sh.dims == 2 ? p : 1;
    for (std::size_t b = comps.start()[c]; b < comps.start()[c + 1]; ++b) {
      const std::size_t box = comps.boxes()[b];
      const std::size_t ax0 = (box % nb0) * p, ay0 = (box / nb0) * py;
      for (std::size_t ay = ay0; ay < ay0 + py; ++ay) {
        for (std::size_t ax = ax0; ax < ax0 + p; ++ax) f(ax, ay);
      }
    }
  }

  // the arguments of the current remove()
  const BoxGrid* grid_ = nullptr;
  const ComponentRemoval* removal_ = nullptr;
  const std::vector<std::vector<double>>* spatial_ = nullptr;
  const double* charges_ = nullptr;
  double* pot_ = nullptr;
  std::vector<ComponentWork> component_work_;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_COMPONENT_SUMS_H
