// The all-pairs (repulsive) part of the embedding costs of costs.h in O(n)
// per evaluation, for 1- and 2-dimensional embeddings: the plan of plan.h,
// run region by region.
//
// Every cost's all-pairs part is a radial kernel sum: with s = d_ij^2,
//   F_i = sum_j c(s) (y_i - y_j)     (the repulsion; t-SNE: c = w^2)
//   E_i = sum_j e(s)                 (t-SNE: w, for Z; others: the cost)
// The forces are sums of the odd kernels c(s) (y_i - y_j)_c with charge 1
// (not y_i sum c - sum c y_j, which cancels badly away from the origin once
// the near field is exact), so one charge set and d + 1 kernels.
//
// Kernel split. The kernels of LargeVis and UMAP have a sharp core
// (1 / (s + eps), s^b) that polynomial interpolation over a box resolves
// poorly, and t-SNE's gradient at a converged layout is a small difference
// of large attraction and repulsion, so that a plain grid's error is of the
// order of the gradient itself. So the sums are split by boxes: the pairs in
// the same or neighbouring boxes (the near field) are summed exactly
// (near_field.h); the grid sums the rest (convolution.h). A far pair is at
// least one box width apart, where these kernels are smooth on the scale of
// a box: the interpolation error falls geometrically with the nodes per box
// and does not depend on the box width for the power-law kernels.
#ifndef LSNN_FARFIELD_FAR_FIELD_H
#define LSNN_FARFIELD_FAR_FIELD_H

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../embed/cost_kernels.h"
#include "../base/parallel.h"
#include "box_grid.h"
#include "convolution.h"
#include "describe.h"
#include "near_field.h"
#include "plan.h"
#include "settings.h"

namespace lsnn {

// The kernels of a cost's all-pairs part on `grid`: slot c < d the
// repulsion times the offset's coordinate c (odd), slot d (with `energy`)
// the energy. Returns the energy of a point with itself (the grid's own
// self term, which the caller takes off when it has no near field).
template <typename Executor>
double model_kernels(GridConvolution& grid, const CostParams& params, std::size_t d, bool energy,
                     Executor& executor) {
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

// The outputs of one charge set: output c is kernel c (the d force kernels,
// then the energy when wanted) on set 0.
inline void one_set_outputs(std::size_t d, bool energy, std::vector<std::size_t>& ks,
                            std::vector<std::size_t>& cs) {
  for (std::size_t c = 0; c <= d; ++c) {
    if (c == d && !energy) break;
    ks.push_back(c);
    cs.push_back(0);
  }
}
// The outputs of two charge sets: output 2 c + set is kernel c on `set`.
inline void two_set_outputs(std::size_t d, bool energy, std::vector<std::size_t>& ks,
                            std::vector<std::size_t>& cs) {
  for (std::size_t c = 0; c <= d; ++c) {
    if (c == d && !energy) break;
    for (std::size_t set = 0; set < 2; ++set) {
      ks.push_back(c);
      cs.push_back(set);
    }
  }
}

// What runs one region of the plan and keeps, from one evaluation to the
// next, what its grids hold (spectra, buffers) and the runners of its child
// regions. A runner whose region took another kind, or whose child is gone,
// keeps those grids for one more evaluation (a layout's regions change from
// one evaluation to the next, and grids made afresh fault in their memory
// again), then gives their memory back.
class RegionRunner {
 public:
  // The runner of child `slot`, or null.
  const RegionRunner* child(std::size_t slot) const {
    return slot < children_.size() ? &children_[slot] : nullptr;
  }
  bool holds(bool coarse, const GridKernelKey& key) const {
    return (coarse ? coarse_ : grid_).holds(key);
  }

  // Writes F[c * stride + i] and (energy) E[i] of region k's points.
  template <typename Executor>
  void run(const FarFieldPlan& plan, std::size_t k, const CostKernels& kernels,
           const PairProblem& prob, SpectrumCache* cache, GridWorkspace* work, double* F,
           bool energy, double* E, Executor& executor) {
    Context<Executor> cx{plan, plan.region(k), kernels, prob, cache, work, energy, executor};
    grid_.share(cache, work);
    coarse_.share(cache, work);
    if (cx.r.kind == RegionKind::grid) {
      run_grid(cx, F, E);
      idle_whole_ = 0;
      if (++idle_split_ == 2) {
        coarse_.release();
        children_.clear();
      }
      return;
    }
    if (cx.r.kind == RegionKind::shed) run_shed(cx, F, E);
    if (cx.r.kind == RegionKind::peel) run_peel(cx, F, E);
    if (cx.r.kind == RegionKind::components) run_components(cx, F, E);
    idle_split_ = 0;
    if (++idle_whole_ == 2) grid_.release();
    for (std::size_t c = cx.r.children.size(); c < children_.size(); ++c) {
      if (++children_[c].unused_ == 2) children_[c].release_all();
    }
  }

 private:
  template <typename Executor>
  struct Context {
    const FarFieldPlan& plan;
    const FarFieldRegion& r;
    const CostKernels& kernels;
    const PairProblem& prob;
    SpectrumCache* cache;
    GridWorkspace* work;
    bool energy;
    Executor& executor;
  };

  void release_all() {
    grid_.release();
    coarse_.release();
    children_.clear();
    near_.release();
    for (auto* v : {&phi_, &sub_f_, &sub_e_}) std::vector<double>().swap(*v);
  }

  // One grid over the region, with its exact near field when it has one.
  template <typename Cx>
  void run_grid(Cx& cx, double* F, double* E) {
    const FarFieldRegion& r = cx.r;
    const std::size_t n = r.n, d = cx.plan.dims(), stride = r.stride;
    geometry_.assign(r.grid, r.coords, n, stride, cx.executor);
    grid_.bind(geometry_);
    grid_.spread(1, [](std::size_t, std::size_t) { return 1.0; }, cx.executor);
    // (without a near field the grid's own self term is taken off the energy)
    const double self = model_kernels(grid_, cx.prob.params, d, cx.energy, cx.executor);
    std::vector<std::size_t> ks, cs;
    one_set_outputs(d, cx.energy, ks, cs);
    phi_.resize(ks.size() * n);
    grid_.potentials(ks, cs, phi_.data(), cx.executor);
    checkpoint(cx.executor);
    const bool nf = r.grid.near_field;
    if (nf) near_.all_neighbours(cx.kernels, cx.prob, geometry_, r.coords, d, stride, cx.energy,
                                 cx.executor);
    const double* near = near_.sums().data();
    const bool energy = cx.energy;
    cx.executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d; ++c) {
            const double* ph = phi_.data() + c * n;
            double* f = F + c * stride;
            for (std::size_t i = b; i < e; ++i) f[i] = ph[i] + (nf ? near[c * n + i] : 0.0);
          }
          if (energy) {
            const double* ph = phi_.data() + d * n;
            for (std::size_t i = b; i < e; ++i) E[i] = ph[i] + (nf ? near[d * n + i] : -self);
          }
        },
        4096);
  }

  // Child region `slot` (the plan's child k) into sub_f_ and sub_e_.
  template <typename Cx>
  const FarFieldRegion& run_child(Cx& cx, std::size_t slot) {
    const std::size_t k = cx.r.children[slot];
    const FarFieldRegion& sub = cx.plan.region(k);
    while (children_.size() <= slot) children_.emplace_back();
    RegionRunner& runner = children_[slot];
    runner.unused_ = 0;
    const std::size_t d = cx.plan.dims();
    sub_f_.resize(d * sub.n);
    sub_e_.resize(sub.n);
    runner.run(cx.plan, k, cx.kernels, cx.prob, cx.cache, cx.work, sub_f_.data(), cx.energy,
               sub_e_.data(), cx.executor);
    return sub;
  }

  // The core by its region; the halo on the coarse grid: charge set 0 the
  // halo's points (read by core targets), set 1 every point (read by halo
  // targets); then the halo's near fields directly.
  template <typename Cx>
  void run_shed(Cx& cx, double* F, double* E) {
    const FarFieldRegion& r = cx.r;
    const std::size_t n = r.n, d = cx.plan.dims(), stride = r.stride;
    const FarFieldRegion& core_region = run_child(cx, 0);
    const BoxGrid& grid = r.coarse;
    const std::vector<unsigned char>& core = r.core_box;
    coarse_.bind(grid);
    coarse_.spread(
        2,
        [&grid, &core](std::size_t o, std::size_t i) {
          return o == 1 || !core[grid.box_of_point(i)] ? 1.0 : 0.0;
        },
        cx.executor);
    model_kernels(coarse_, cx.prob.params, d, cx.energy, cx.executor);
    std::vector<std::size_t> ks, cs;
    two_set_outputs(d, cx.energy, ks, cs);
    phi_.resize(ks.size() * n);
    // (core targets read set 0, halo targets set 1: outputs alternate sets)
    coarse_.potentials(
        ks, cs, phi_.data(),
        [&grid, &core](std::size_t o, std::size_t i) {
          return (o % 2 == 1) == !core[grid.box_of_point(i)];
        },
        cx.executor);
    checkpoint(cx.executor);
    near_.halo(cx.kernels, cx.prob, grid, core, r.coords, d, stride, cx.energy, cx.executor);
    // core points: their own sums plus the halo's; halo points: everything
    std::vector<std::size_t>& slot = member_slot_;
    slot.assign(n, n);
    for (std::size_t k = 0; k < core_region.n; ++k) slot[core_region.points[k]] = k;
    const double* near = near_.sums().data();
    const std::size_t m = core_region.n;
    const bool energy = cx.energy;
    cx.executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            const std::size_t k = slot[i];
            const std::size_t set = k == n ? 1 : 0;
            for (std::size_t c = 0; c < d; ++c) {
              const double own = k == n ? 0.0 : sub_f_[c * m + k];
              F[c * stride + i] = own + phi_[(2 * c + set) * n + i] + near[c * n + i];
            }
            if (energy) {
              const double own = k == n ? 0.0 : sub_e_[k];
              E[i] = own + phi_[(2 * d + set) * n + i] + near[d * n + i];
            }
          }
        },
        4096);
  }

  // The largest component by its region, the outliers directly.
  template <typename Cx>
  void run_peel(Cx& cx, double* F, double* E) {
    const FarFieldRegion& inner = run_child(cx, 0);
    near_.peel(cx.kernels, cx.prob, cx.r, inner, sub_f_.data(), sub_e_.data(), cx.plan.dims(), F,
               cx.energy, E, cx.executor);
  }

  // The pairs of different components on the coarse grid: charge set 0
  // holds every point, set 1 every point but the largest component's (read
  // by its points); then each component's own pairs.
  template <typename Cx>
  void run_components(Cx& cx, double* F, double* E) {
    const FarFieldRegion& r = cx.r;
    const std::size_t n = r.n, d = cx.plan.dims(), stride = r.stride, big = r.largest;
    const BoxGrid& grid = r.coarse;
    const BoxComponents& comps = r.components;
    coarse_.bind(grid, &r.removal);
    coarse_.spread(
        2,
        [&grid, &comps, big](std::size_t o, std::size_t i) {
          return o == 0 || comps.of_box(grid.box_of_point(i)) != big ? 1.0 : 0.0;
        },
        cx.executor);
    model_kernels(coarse_, cx.prob.params, d, cx.energy, cx.executor);
    std::vector<std::size_t> ks, cs;
    two_set_outputs(d, cx.energy, ks, cs);
    phi_.resize(ks.size() * n);
    coarse_.potentials(ks, cs, phi_.data(), cx.executor);
    checkpoint(cx.executor);
    const bool energy = cx.energy;
    cx.executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            const std::size_t set = comps.of_box(grid.box_of_point(i)) == big ? 1 : 0;
            for (std::size_t c = 0; c < d; ++c) F[c * stride + i] = phi_[(2 * c + set) * n + i];
            if (energy) E[i] = phi_[(2 * d + set) * n + i];
          }
        },
        4096);
    NearField::small_components(cx.kernels, cx.prob, r, d, F, energy, E, cx.executor);
    for (std::size_t slot = 0; slot < r.children.size(); ++slot) {
      const FarFieldRegion& sub = run_child(cx, slot);
      const std::size_t m = sub.n;
      for (std::size_t c = 0; c < d; ++c) {
        for (std::size_t k = 0; k < m; ++k) F[c * stride + sub.points[k]] += sub_f_[c * m + k];
      }
      if (energy) {
        for (std::size_t k = 0; k < m; ++k) E[sub.points[k]] += sub_e_[k];
      }
    }
  }

  // the region's own grid (kind grid) and its geometry; the coarse grid
  // (the other kinds; its geometry is the plan's)
  BoxGrid geometry_;
  GridConvolution grid_, coarse_;
  NearField near_;
  std::vector<double> phi_, sub_f_, sub_e_;
  std::vector<std::size_t> member_slot_;
  std::vector<RegionRunner> children_;
  // evaluations since this region was last one grid, last split, and (as a
  // child) last run
  int idle_whole_ = 0, idle_split_ = 0, unused_ = 0;
};

// The far field of one evaluator: plans each evaluation, then runs the
// plan, with the kernel spectra and scratch buffers shared by all its grids.
class FarField {
 public:
  FarField() = default;
  // `kernels` (its near_run) sums the near fields, four pairs at a time
  FarField(const CostParams& params, const GridSettings& gs, const CostKernels* kernels)
      : gs_(gs), kernels_(kernels) {
    prob_.params = params;
  }

  // Takes these settings from the next evaluation on.
  void set_grid(const GridSettings& gs) {
    if (!same_grid(gs, gs_)) describe_next_ = true;
    gs_ = gs;
  }

  // Y: coordinate c of point i at Y[c * stride + i] (d = 1 or 2). Writes
  // F[c * stride + i] = sum_j c_ij (y_i - y_j) and, when `energy`,
  // E[i] = sum_{j != i} e_ij. The first evaluation, and the first after the
  // settings change, describe their plan (executor.phase_note()).
  template <typename Executor>
  void evaluate(const double* Y, std::size_t n, std::size_t d, std::size_t stride, double* F,
                bool energy, double* E, Executor& executor) {
    if (!cache_) cache_ = std::make_shared<SpectrumCache>();
    if (!work_) work_ = std::make_shared<GridWorkspace>();
    // (the kernel's values are needed only while a spectrum is made: within
    // the budget they stay, so that their memory is not faulted in again)
    const double budget = gs_.memory_mb * 1048576.0;
    cache_->next_generation(budget, work_->bytes());
    if (work_->bytes() + cache_->bytes() > budget) {
      large_vector<double>().swap(work_->kernel_values);
    }
    Ahead ahead(*this);
    planner_.plan(plan_, Y, n, d, stride, gs_, &ahead, executor);
    if (describe_next_) {
      executor.phase_note(describe_plan(plan_));
      describe_next_ = false;
    }
    root_.run(plan_, 0, *kernels_, prob_, cache_.get(), work_.get(), F, energy, E, executor);
  }

  const FarFieldPlan& plan() const { return plan_; }

 private:
  // The spectra the cache will hold as the plan runs: the cache's, and
  // those of the grids planned before that their runners do not hold yet.
  class Ahead : public SpectraAhead {
   public:
    explicit Ahead(const FarField& ff) : ff_(ff) {}

   protected:
    bool cached(const GridKernelKey& key) const override { return ff_.cache_->contains(0, key); }
    bool held(std::size_t region, bool coarse, const GridKernelKey& key) const override {
      const RegionRunner* runner = ff_.runner_of(region);
      return runner != nullptr && runner->holds(coarse, key);
    }

   private:
    const FarField& ff_;
  };

  // The runner of plan region k as it stands before the plan runs (null if
  // it has none yet).
  const RegionRunner* runner_of(std::size_t k) const {
    path_.clear();
    for (std::size_t r = k; plan_.region(r).parent != FarFieldRegion::none;
         r = plan_.region(r).parent) {
      path_.push_back(plan_.region(r).slot);
    }
    const RegionRunner* runner = &root_;
    for (std::size_t s = path_.size(); s-- > 0 && runner != nullptr;) {
      runner = runner->child(path_[s]);
    }
    return runner;
  }

  GridSettings gs_;
  const CostKernels* kernels_ = nullptr;
  PairProblem prob_ = {};
  std::shared_ptr<SpectrumCache> cache_;
  std::shared_ptr<GridWorkspace> work_;
  FarFieldPlanner planner_;
  FarFieldPlan plan_;
  RegionRunner root_;
  bool describe_next_ = true;
  mutable std::vector<std::size_t> path_;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_FAR_FIELD_H
