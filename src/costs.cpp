// Glue for the embedding costs (inst/include/lsnn/embed/costs.h) and the layout
// engine (layout.h). P arrives as a symmetric dgCMatrix, read in place; the
// settings arrive as one named list per concern (the cost, the layout),
// built by R/costs.R and R/embed.R.
#include <Rcpp.h>

#include <lsnn/embed/costs.h>
#include <lsnn/embed/density.h>
#include <lsnn/farfield/describe.h>
#include <lsnn/embed/layout.h>
#include <lsnn/embed/placement.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernel_choice.h"
#include "r_driver.h"
#include "r_executor.h"
#include "r_inputs.h"

namespace {

using lsnn_r::element;
using lsnn_r::number;
using lsnn_r::whole;
using lsnn_r::word;

lsnn::CostMethod cost_method(const std::string& method) {
  if (method == "tsne") return lsnn::CostMethod::tsne;
  if (method == "largevis") return lsnn::CostMethod::largevis;
  if (method == "largevis_exp") return lsnn::CostMethod::largevis_exp;
  if (method == "umap") return lsnn::CostMethod::umap;
  Rcpp::stop("unknown cost method '%s'", method);
}

// The fields of options(lsnn.grid), as ne_grid_option() (R/embed.R) checks
// them: a grid's settings (farfield/settings.h) but `widen`, which stays
// the method's.
lsnn::GridSettings grid_settings(const Rcpp::List& grid, lsnn::GridSettings g) {
  g.nodes = whole(grid, "nodes");
  g.box_width = number(grid, "box_width");
  g.min_boxes = whole(grid, "min_boxes");
  g.near_field = Rcpp::as<bool>(element(grid, "near_field"));
  g.points_per_box = number(grid, "points_per_box");
  g.near_boxes = whole(grid, "near_boxes");
  g.pair_weight = number(grid, "pair_weight");
  g.smooth_width = number(grid, "smooth_width");
  g.by_components = Rcpp::as<bool>(element(grid, "by_components"));
  g.shallow_width = number(grid, "shallow_width");
  g.fine_nodes = whole(grid, "fine_nodes");
  g.fine_smooth_width = number(grid, "fine_smooth_width");
  g.memory_mb = number(grid, "memory_mb");
  return g;
}

// list(method, gamma, alpha, a, b, eps, gradient = "exact" | "approx",
// grid = NULL or the named list of options(lsnn.grid), every field given,
// in_place_bytes and accurate_grid_points = NULL or a number)
lsnn::CostSettings cost_settings(const Rcpp::List& cost) {
  lsnn::CostSettings s;
  s.params.method = cost_method(word(cost, "method"));
  s.params.gamma = number(cost, "gamma");
  s.params.alpha = number(cost, "alpha");
  s.params.a = number(cost, "a");
  s.params.b = number(cost, "b");
  s.params.eps = number(cost, "eps");
  const std::string gradient = word(cost, "gradient");
  if (gradient == "exact") {
    s.gradient = lsnn::GradientKind::exact;
  } else if (gradient == "approx") {
    s.gradient = lsnn::GradientKind::approx;
  } else {
    Rcpp::stop("unknown gradient '%s'", gradient);
  }
  const SEXP grid = element(cost, "grid");
  if (!Rf_isNull(grid)) {
    s.grid_set = true;
    s.grid = grid_settings(Rcpp::List(grid), lsnn::default_grid(s.params.method));
  }
  if (!Rf_isNull(element(cost, "in_place_bytes"))) s.in_place_bytes = number(cost, "in_place_bytes");
  if (!Rf_isNull(element(cost, "accurate_grid_points"))) {
    s.accurate_grid_points = number(cost, "accurate_grid_points");
  }
  return s;
}

// The density term's settings (density.h) of the cost list's `density`
// element (R/density.R's dens_cost_entry(): NULL, or list(lambda,
// var_shift, start, data_radii), the data's log radii); off when absent.
lsnn::DensitySettings density_settings(const Rcpp::List& cost) {
  lsnn::DensitySettings s;
  if (!cost.containsElementNamed("density")) return s;
  const SEXP entry = cost["density"];
  if (Rf_isNull(entry)) return s;
  const Rcpp::List dens(entry);
  s.lambda = number(dens, "lambda");
  s.var_shift = number(dens, "var_shift");
  s.start = whole(dens, "start");
  const Rcpp::NumericVector radii = element(dens, "data_radii");
  s.data_log_radii.assign(radii.begin(), radii.end());
  return s;
}

// The slots of a symmetric dgCMatrix, read in place (R/costs.R has checked
// it: square, finite, non-negative, symmetric).
lsnn::SparseRows affinity_view(const Rcpp::S4& P) {
  const Rcpp::IntegerVector dim = P.slot("Dim"), ptr = P.slot("p"), col = P.slot("i");
  const Rcpp::NumericVector val = P.slot("x");
  const std::size_t n = static_cast<std::size_t>(dim[0]);
  return lsnn::SparseRows{ptr.begin(), col.begin(), val.begin(), n, n};
}

// Whether the slots of the dgCMatrix P have the lengths its dimensions ask
// for (square; p of n + 1; i and x of one length, *nnz), so that the core
// may read them.
bool affinity_slots_fit(const Rcpp::S4& P, std::size_t* nnz) {
  const Rcpp::IntegerVector dim = P.slot("Dim"), ptr = P.slot("p"), row = P.slot("i");
  const Rcpp::NumericVector val = P.slot("x");
  *nnz = static_cast<std::size_t>(row.size());
  return dim.size() == 2 && dim[0] == dim[1] && dim[0] >= 0 &&
         ptr.size() == static_cast<R_xlen_t>(dim[1]) + 1 && row.size() == val.size();
}

// An AffinityCheck for R (affinity_problem()): c(kind, column, row, value,
// mirror, diagonal, zeros), column and row 1-based, of the entry P[row,
// column].
Rcpp::NumericVector check_vector(const lsnn::AffinityCheck& c) {
  return Rcpp::NumericVector{static_cast<double>(c.kind), static_cast<double>(c.row) + 1.0,
                             static_cast<double>(c.col) + 1.0, c.value, c.mirror,
                             static_cast<double>(c.diagonal), static_cast<double>(c.zeros)};
}

// What affinity_problem() reads for slots that do not fit their dimensions:
// kind 1 (malformed), no column.
Rcpp::NumericVector misfit_slots() { return Rcpp::NumericVector{1, 0, 0, 0, 0, 0, 0}; }

// The layout of a placement (placement.h): the reference rows, then the new
// points' rows; P's rows empty for the reference, then the new points'
// CSR rows (0-based reference columns).
struct PlacementLayout {
  std::size_t n_ref, m, d, n;
  std::vector<double> Y;
  std::vector<int> ptr;
  lsnn::SparseRows P;

  PlacementLayout(const Rcpp::NumericMatrix& Yref, const Rcpp::NumericMatrix& Ynew,
                  const Rcpp::IntegerVector& row_ptr, const Rcpp::IntegerVector& col,
                  const Rcpp::NumericVector& val)
      : n_ref(Yref.nrow()), m(Ynew.nrow()), d(Yref.ncol()), n(n_ref + m),
        Y(n * d), ptr(n + 1, 0), P{nullptr, nullptr, nullptr, 0, 0} {
    if (static_cast<std::size_t>(Ynew.ncol()) != d ||
        static_cast<std::size_t>(row_ptr.size()) != m + 1 || col.size() != val.size() ||
        row_ptr[m] != col.size()) {
      Rcpp::stop("internal: the new points' coordinates or affinities do not match");
    }
    for (std::size_t c = 0; c < d; ++c) {
      std::copy(Yref.begin() + c * n_ref, Yref.begin() + (c + 1) * n_ref, Y.begin() + c * n);
      std::copy(Ynew.begin() + c * m, Ynew.begin() + (c + 1) * m, Y.begin() + c * n + n_ref);
    }
    for (std::size_t i = 0; i < m; ++i) ptr[n_ref + i + 1] = row_ptr[i + 1];
    P = lsnn::SparseRows{ptr.data(), col.begin(), val.begin(), n, n};
  }

  // the new points' rows of an n x d column-major matrix
  Rcpp::NumericMatrix new_rows(const std::vector<double>& X) const {
    Rcpp::NumericMatrix out(m, d);
    for (std::size_t c = 0; c < d; ++c) {
      std::copy(X.begin() + c * n + n_ref, X.begin() + (c + 1) * n, out.begin() + c * m);
    }
    return out;
  }
};

// The plan's regions as columns (farfield/plan.h): for a grid region its
// grid, for the others their coarse grid.
Rcpp::List far_field_plan_list(const lsnn::FarFieldPlan& plan) {
  const std::size_t m = plan.size(), d = plan.dims();
  Rcpp::CharacterVector name(m), kind(m), why(m);
  Rcpp::IntegerVector parent(m), points(m), nodes(m), near(m), depth(m), peels(m);
  Rcpp::NumericVector boxes_x(m), boxes_y(m), width_x(m), width_y(m);
  const char* kinds[] = {"grid", "shed", "peel", "components"};
  for (std::size_t k = 0; k < m; ++k) {
    const lsnn::FarFieldRegion& r = plan.region(k);
    const bool grid = r.kind == lsnn::RegionKind::grid;
    const lsnn::GridShape& g = grid ? r.grid : r.coarse.shape();
    name[k] = lsnn::describe_detail::region_name(plan, k);
    kind[k] = kinds[static_cast<int>(r.kind)];
    why[k] = grid ? r.report.whole_reason : "";
    parent[k] = r.parent == lsnn::FarFieldRegion::none ? NA_INTEGER : static_cast<int>(r.parent) + 1;
    points[k] = static_cast<int>(r.n);
    depth[k] = r.depth;
    peels[k] = r.peels;
    nodes[k] = static_cast<int>(g.nodes_per_box);
    near[k] = g.near_field ? static_cast<int>(g.near_depth) : 0;
    boxes_x[k] = static_cast<double>(g.boxes[0]);
    boxes_y[k] = d == 2 ? static_cast<double>(g.boxes[1]) : NA_REAL;
    width_x[k] = g.box_width[0];
    width_y[k] = d == 2 ? g.box_width[1] : NA_REAL;
  }
  Rcpp::DataFrame regions = Rcpp::DataFrame::create(
      Rcpp::Named("region") = name, Rcpp::Named("parent") = parent, Rcpp::Named("kind") = kind,
      Rcpp::Named("points") = points, Rcpp::Named("depth") = depth, Rcpp::Named("peels") = peels,
      Rcpp::Named("nodes") = nodes, Rcpp::Named("boxes_x") = boxes_x,
      Rcpp::Named("boxes_y") = boxes_y, Rcpp::Named("width_x") = width_x,
      Rcpp::Named("width_y") = width_y, Rcpp::Named("near_boxes") = near,
      Rcpp::Named("why") = why, Rcpp::Named("stringsAsFactors") = false);
  return Rcpp::List::create(Rcpp::Named("regions") = regions,
                            Rcpp::Named("text") = lsnn::describe_plan(plan));
}

}  // namespace

// The cost and gradient at Y under P (a dgCMatrix of Y's size, not yet
// checked): checked in the same pass (lsnn::checked_cost_gradient()).
// Returns the list of cost_gradient_list() and `check` (check_vector()), or
// only `check` when it found a problem.
// [[Rcpp::export(.cost_gradient)]]
Rcpp::List cost_gradient_cpp(Rcpp::NumericMatrix Y, Rcpp::S4 P, Rcpp::List cost, int n_threads,
                             std::string simd, double tol) {
  const std::size_t n = Y.nrow(), d = Y.ncol();
  std::size_t nnz = 0;
  if (!affinity_slots_fit(P, &nnz) || affinity_view(P).n != n) {
    return Rcpp::List::create(Rcpp::Named("check") = misfit_slots());
  }
  lsnn_r::RExecutor ex(n_threads, false);
  Rcpp::NumericMatrix grad(n, d);
  Rcpp::NumericVector pcost(n);
  const lsnn::CostSettings settings = cost_settings(cost);
  const lsnn::DensitySettings dens = density_settings(cost);
  const lsnn::SparseRows affinities = affinity_view(P);
  return lsnn_r::run_core([&]() {
    lsnn::AffinityCheck found;
    double value =
        lsnn::checked_cost_gradient(lsnn_r::cost_kernels(simd), settings, affinities, nnz, tol,
                                    Y.begin(), d, grad.begin(), pcost.begin(), found, ex);
    if (found.kind != lsnn::AffinityCheck::ok) {
      return Rcpp::List::create(Rcpp::Named("check") = check_vector(found));
    }
    // the density term over P, checked above (its value in `cost` only)
    if (dens.on()) {
      lsnn::DensityTerm term(affinities, dens, settings.params, d);
      value += term.add(Y.begin(), grad.begin(), 1.0, ex);
    }
    Rcpp::List out = lsnn_r::cost_gradient_list(value, grad, pcost);
    out["check"] = check_vector(found);
    return out;
  });
}

// `P_access`: "read" (P is the caller's), "renumber" (P is made for this
// run and seen by nothing else meanwhile: the approximation may renumber its
// columns in place, and they are as they were when this returns) or
// "consume" (as "renumber", and P is dropped afterwards: the approximation
// may rewrite P's arrays for good; see lsnn::CostEvaluator).
// [[Rcpp::export(.optimize_layout)]]
Rcpp::List optimize_layout_cpp(Rcpp::NumericMatrix Y0, Rcpp::S4 P, Rcpp::List cost,
                               Rcpp::List layout, int n_threads, bool verbose,
                               std::string simd, std::string P_access) {
  if (P_access != "read" && P_access != "renumber" && P_access != "consume") {
    Rcpp::stop("internal: P_access must be \"read\", \"renumber\" or \"consume\"");
  }
  const std::size_t d = Y0.ncol();
  lsnn_r::RExecutor ex(n_threads, verbose);
  Rcpp::NumericMatrix Y = Rcpp::clone(Y0);
  const lsnn::CostSettings cs = cost_settings(cost);
  lsnn::LayoutSettings ls =
      lsnn_r::layout_settings(layout, static_cast<std::size_t>(Y0.nrow()), d, 0);
  const lsnn::SparseRows affinities = affinity_view(P);
  const lsnn::DensitySettings dens = density_settings(cost);
  // a run is not taken as settled before the density term has started
  if (dens.on() && dens.lambda > 0.0) ls.driver.tol_after = std::max(ls.driver.tol_after, dens.start);
  // (the sampled stepper reads P's columns itself)
  Rcpp::IntegerVector columns = P.slot("i");
  Rcpp::NumericVector values = P.slot("x");
  const bool descent = ls.stepper == lsnn::StepperKind::gradient_descent;
  int* writable = descent && P_access != "read" ? columns.begin() : nullptr;
  double* consumable = descent && P_access == "consume" ? values.begin() : nullptr;
  return lsnn_r::run_core([&]() {
    // (the term copies P's pattern before the evaluator may rewrite it)
    std::unique_ptr<lsnn::DensityTerm> term;
    if (dens.on()) {
      term = std::make_unique<lsnn::DensityTerm>(affinities, dens, cs.params, d);
    }
    lsnn::CostEvaluator objective(lsnn_r::cost_kernels(simd), cs, affinities, d, false, writable,
                                  consumable);
    const lsnn::OptimizerResult res =
        lsnn::optimize_layout(objective, cs.params, affinities, Y.begin(), ls, ex, term.get());
    Rcpp::NumericVector trace(res.cost.begin(), res.cost.end());
    trace.attr("names") = Rcpp::IntegerVector(res.cost_iter.begin(), res.cost_iter.end());
    return Rcpp::List::create(Rcpp::Named("Y") = Y, Rcpp::Named("cost") = trace,
                              Rcpp::Named("iterations") = res.iterations,
                              Rcpp::Named("converged") = res.converged,
                              Rcpp::Named("stopped") = res.stopped);
  });
}

// New points placed in the fixed embedding Yref (placement.h): Ynew0 their
// starting coordinates, their affinities to the reference as CSR slots
// (row_ptr, col 0-based reference rows, val; R has checked them), one row
// per new point. Returns the new points' coordinates and the cost record.
// [[Rcpp::export(.place_points)]]
Rcpp::List place_points_cpp(Rcpp::NumericMatrix Yref, Rcpp::NumericMatrix Ynew0,
                            Rcpp::IntegerVector row_ptr, Rcpp::IntegerVector col,
                            Rcpp::NumericVector val, Rcpp::List cost, Rcpp::List layout,
                            int n_threads, bool verbose, std::string simd) {
  lsnn_r::RExecutor ex(n_threads, verbose);
  const lsnn::CostSettings cs = cost_settings(cost);
  PlacementLayout pl(Yref, Ynew0, row_ptr, col, val);
  const lsnn::LayoutSettings ls = lsnn_r::layout_settings(layout, pl.n, pl.d, pl.n_ref);
  return lsnn_r::run_core([&]() {
    lsnn::PlacementObjective objective(lsnn_r::cost_kernels(simd), cs, pl.P, pl.n_ref, pl.d,
                                       pl.Y.data(), ex);
    const lsnn::OptimizerResult res =
        lsnn::optimize_layout(objective, cs.params, pl.P, pl.Y.data(), ls, ex);
    Rcpp::NumericVector trace(res.cost.begin(), res.cost.end());
    trace.attr("names") = Rcpp::IntegerVector(res.cost_iter.begin(), res.cost_iter.end());
    return Rcpp::List::create(Rcpp::Named("Y") = pl.new_rows(pl.Y), Rcpp::Named("cost") = trace,
                              Rcpp::Named("iterations") = res.iterations,
                              Rcpp::Named("stopped") = res.stopped);
  });
}

// The placement objective's cost and gradient at the new points' Ynew (for
// tests against finite differences).
// [[Rcpp::export(.placement_cost_gradient)]]
Rcpp::List placement_cost_gradient(Rcpp::NumericMatrix Yref, Rcpp::NumericMatrix Ynew,
                                   Rcpp::IntegerVector row_ptr, Rcpp::IntegerVector col,
                                   Rcpp::NumericVector val, Rcpp::List cost, int n_threads,
                                   std::string simd) {
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::CostSettings cs = cost_settings(cost);
  PlacementLayout pl(Yref, Ynew, row_ptr, col, val);
  return lsnn_r::run_core([&]() {
    lsnn::PlacementObjective objective(lsnn_r::cost_kernels(simd), cs, pl.P, pl.n_ref, pl.d,
                                       pl.Y.data(), ex);
    std::vector<double> grad(pl.n * pl.d);
    const double value = objective.evaluate(pl.Y.data(), true, grad.data(), nullptr, ex);
    return Rcpp::List::create(Rcpp::Named("cost") = value,
                              Rcpp::Named("gradient") = pl.new_rows(grad));
  });
}

// The default grid of a cost (method as cost_method() reads it), as the
// named list of options(lsnn.grid).
// [[Rcpp::export(.far_field_defaults)]]
Rcpp::List far_field_defaults(std::string method) {
  const lsnn::GridSettings g = lsnn::default_grid(cost_method(method));
  return Rcpp::List::create(
      Rcpp::Named("nodes") = g.nodes, Rcpp::Named("box_width") = g.box_width,
      Rcpp::Named("min_boxes") = g.min_boxes, Rcpp::Named("near_field") = g.near_field,
      Rcpp::Named("points_per_box") = g.points_per_box, Rcpp::Named("near_boxes") = g.near_boxes,
      Rcpp::Named("pair_weight") = g.pair_weight, Rcpp::Named("smooth_width") = g.smooth_width,
      Rcpp::Named("by_components") = g.by_components,
      Rcpp::Named("shallow_width") = g.shallow_width, Rcpp::Named("fine_nodes") = g.fine_nodes,
      Rcpp::Named("fine_smooth_width") = g.fine_smooth_width,
      Rcpp::Named("memory_mb") = g.memory_mb);
}

// The far-field plan of the layout Y (n x 1 or n x 2) under the cost's grid
// (the exaggeration grid when `exaggerated` and no grid is set), as the
// first evaluation of cost_gradient() would make it: its description and a
// row per region. No FFT is run.
// [[Rcpp::export(.far_field_plan)]]
Rcpp::List far_field_plan_cpp(Rcpp::NumericMatrix Y, Rcpp::List cost, bool exaggerated,
                              int n_threads) {
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::CostSettings cs = cost_settings(cost);
  const lsnn::GridSettings gs = lsnn::evaluation_grid(cs, exaggerated);
  const std::size_t n = Y.nrow(), d = Y.ncol();
  return lsnn_r::run_core([&]() {
    lsnn::FarFieldPlan plan;
    lsnn::FarFieldPlanner planner;
    lsnn::NothingCached ahead;
    planner.plan(plan, Y.begin(), n, d, n, gs, &ahead, ex);
    return far_field_plan_list(plan);
  });
}

// The bytes of the core's large buffers (mostly the far field's) now and at
// most since the last reset, in MB; resets the peak when asked.
// [[Rcpp::export(.large_buffer_mb)]]
Rcpp::NumericVector large_buffer_mb(bool reset) {
  lsnn::LargeBufferBytes& b = lsnn::large_buffer_bytes();
  Rcpp::NumericVector out = Rcpp::NumericVector::create(
      Rcpp::Named("now") = static_cast<double>(b.now()) / 1048576.0,
      Rcpp::Named("peak") = static_cast<double>(b.peak()) / 1048576.0);
  if (reset) b.reset();
  return out;
}

// [[Rcpp::export(.cost_kernels_name)]]
std::string cost_kernels_name(std::string simd) { return lsnn_r::cost_kernels(simd).name; }

// The sums the check of affinities compares (CostKernels::affinity_rows over
// all rows of a well-formed dgCMatrix), for tests that the kernel builds
// agree: c(above, below) in hexadecimal, then the stored zeros and diagonal
// entries; NA when a row fails its checks.
// [[Rcpp::export(.affinity_sums)]]
Rcpp::CharacterVector affinity_sums(Rcpp::S4 P, std::string simd) {
  std::size_t nnz = 0;
  if (!affinity_slots_fit(P, &nnz)) Rcpp::stop("the slots of P do not fit its dimensions");
  const lsnn::SparseRows M = affinity_view(P);
  lsnn::RowSums sums;
  if (!lsnn_r::cost_kernels(simd).affinity_rows(M.ptr, M.col, M.val, M.n, nnz, 0, M.n, sums)) {
    return Rcpp::CharacterVector(4, NA_STRING);
  }
  char above[17], below[17];
  std::snprintf(above, sizeof above, "%016llx", static_cast<unsigned long long>(sums.above));
  std::snprintf(below, sizeof below, "%016llx", static_cast<unsigned long long>(sums.below));
  return Rcpp::CharacterVector::create(above, below, std::to_string(sums.zeros),
                                       std::to_string(sums.diagonal));
}

// check_affinities() of a dgCMatrix's slots, read in place: its columns are
// the core's rows. Returns check_vector()'s c(kind, column, row, value,
// mirror, diagonal, zeros).
// [[Rcpp::export(.affinity_check)]]
Rcpp::NumericVector affinity_check(Rcpp::S4 P, double tol, int n_threads, std::string simd) {
  std::size_t nnz = 0;
  if (!affinity_slots_fit(P, &nnz)) return misfit_slots();
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::SparseRows M = affinity_view(P);
  return check_vector(lsnn_r::run_core([&]() {
    return lsnn::check_affinities(lsnn_r::cost_kernels(simd), M, nnz, tol, ex);
  }));
}

// The density term's log radii (density.h): of the data, from the squared
// distances of P's entries in the graph (idx, dist: a kNN graph of P's
// points, R's n x k matrices); NA where a pair of P has no distance in the
// graph.
// [[Rcpp::export(.density_data_radii)]]
Rcpp::NumericVector density_data_radii(Rcpp::S4 P, Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                       int n_threads) {
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::SparseRows M = affinity_view(P);
  if (static_cast<std::size_t>(idx.nrow()) != M.n || dist.nrow() != idx.nrow() ||
      dist.ncol() != idx.ncol()) {
    Rcpp::stop("internal: the graph does not match P");
  }
  Rcpp::NumericVector out(M.n);
  return lsnn_r::run_core([&]() {
    std::vector<double> sq(static_cast<std::size_t>(M.ptr[M.n]));
    lsnn::edge_sq_distances(M, idx.begin(), dist.begin(), static_cast<std::size_t>(idx.ncol()),
                            sq.data(), ex);
    for (std::size_t i = 0; i < M.n; ++i) {
      for (int t = M.ptr[i]; t < M.ptr[i + 1]; ++t) {
        if (static_cast<std::size_t>(M.col[t]) != i && std::isnan(sq[t])) {
          out.fill(NA_REAL);
          return out;
        }
      }
    }
    lsnn::data_log_radii(M, sq.data(), out.begin(), ex);
    return out;
  });
}

// The layout's log radii at Y over P's entries, with the kernel
// 1 / (1 + a q^b) (density.h).
// [[Rcpp::export(.density_layout_radii)]]
Rcpp::NumericVector density_layout_radii(Rcpp::NumericMatrix Y, Rcpp::S4 P, double a, double b,
                                         int n_threads) {
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::SparseRows M = affinity_view(P);
  if (static_cast<std::size_t>(Y.nrow()) != M.n) Rcpp::stop("internal: Y does not match P");
  lsnn::DensitySettings s;
  s.data_log_radii.assign(M.n, 0.0);
  lsnn::CostParams kernel;
  kernel.method = lsnn::CostMethod::umap;
  kernel.a = a;
  kernel.b = b;
  Rcpp::NumericVector out(M.n);
  return lsnn_r::run_core([&]() {
    lsnn::DensityTerm term(M, s, kernel, static_cast<std::size_t>(Y.ncol()));
    term.layout_log_radii(Y.begin(), out.begin(), ex);
    return out;
  });
}
