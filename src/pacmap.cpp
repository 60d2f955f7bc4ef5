// Glue for PaCMAP and LocalMAP (inst/include/lsnn/embed/pacmap.h, run by layout.h
// under its Adam stepper): the pair sets cross as integer matrices of
// 1-based partners, one row per point that owns pairs (R/pacmap.R has
// checked them); the layout is n x d.
#include <Rcpp.h>

#include <lsnn/embed/layout.h>
#include <lsnn/embed/pacmap.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "kernel_choice.h"
#include "r_driver.h"
#include "r_executor.h"
#include "r_inputs.h"

namespace {

// Rows first, first + 1, ... of an integer matrix of 1-based partners, its
// columns [from, from + k) (all of them when k < 0), read in place: the
// matrix must outlive the set.
lsnn::PairSet pair_set(SEXP x, std::size_t first, int from = 0, int k = -1) {
  // (an integer matrix is wrapped, not copied, so the view stays valid)
  if (TYPEOF(x) != INTSXP || !Rf_isMatrix(x)) {
    throw std::invalid_argument("the pairs must be integer matrices");
  }
  const Rcpp::IntegerMatrix m(x);
  lsnn::PairSet set;
  set.first = first;
  set.rows = static_cast<std::size_t>(m.nrow());
  set.k = static_cast<std::size_t>(k < 0 ? m.ncol() - from : k);
  if (from < 0 || static_cast<std::size_t>(from) + set.k > static_cast<std::size_t>(m.ncol())) {
    throw std::invalid_argument("the pair columns lie outside the matrix");
  }
  set.columns = m.begin() + static_cast<std::size_t>(from) * set.rows;
  set.column_stride = set.rows;
  return set;
}

Rcpp::IntegerMatrix pair_matrix(const lsnn::PairSet& set) {
  Rcpp::IntegerMatrix m(static_cast<int>(set.rows), static_cast<int>(set.k));
  for (std::size_t r = 0; r < set.rows; ++r) {
    for (std::size_t c = 0; c < set.k; ++c) m(r, c) = set.at(r, c) + 1;
  }
  return m;
}

// list(near, mid_near, further): the near pairs are columns near_from + 1
// to near_from + near_k of `near` when those are given (a graph with the
// row itself first), else all of its columns.
lsnn::PairSet near_set(const Rcpp::List& pairs, std::size_t first) {
  if (!pairs.containsElementNamed("near_from")) return pair_set(pairs["near"], first);
  return pair_set(pairs["near"], first, Rcpp::as<int>(pairs["near_from"]),
                  Rcpp::as<int>(pairs["near_k"]));
}

// A new numbering of the n points from R's order (the points in their new
// order, 1-based, a permutation of 1..n).
struct RNumbering {
  std::vector<int> order, rank;  // 0-based, as renumber.h's
};

RNumbering numbering_of(SEXP order, std::size_t n) {
  RNumbering r;
  const Rcpp::IntegerVector o(order);
  if (static_cast<std::size_t>(o.size()) != n) throw std::invalid_argument("the order must hold every point");
  r.order.resize(n);
  r.rank.assign(n, -1);
  for (std::size_t p = 0; p < n; ++p) {
    const int i = o[static_cast<R_xlen_t>(p)];
    if (i == NA_INTEGER || i < 1 || static_cast<std::size_t>(i) > n || r.rank[i - 1] >= 0) {
      throw std::invalid_argument("the order is not a permutation of the points");
    }
    r.order[p] = i - 1;
    r.rank[i - 1] = static_cast<int>(p);
  }
  return r;
}

// A view set read in the new numbering, its partners first checked against
// the n points (an entry out of range would index the numbering).
void renumber_view(lsnn::PairSet& set, std::size_t n, const RNumbering& r) {
  if (set.columns == nullptr || set.first != 0 || set.rows != n) {
    throw std::invalid_argument("only the pairs of every point can be renumbered");
  }
  for (std::size_t c = 0; c < set.k; ++c) {
    const int* col = set.columns + c * set.column_stride;
    for (std::size_t i = 0; i < n; ++i) {
      if (col[i] < 1 || static_cast<std::size_t>(col[i]) > n) {
        throw std::invalid_argument("the pairs hold an invalid partner");
      }
    }
  }
  set.row_of = r.order.data();
  set.renumber = r.rank.data();
}

// pair_matrix() of a set in the new numbering, in the user's.
Rcpp::IntegerMatrix user_pair_matrix(const lsnn::PairSet& set, const RNumbering& r) {
  Rcpp::IntegerMatrix m(static_cast<int>(set.rows), static_cast<int>(set.k));
  for (std::size_t p = 0; p < set.rows; ++p) {
    const int row = r.order[p];
    for (std::size_t c = 0; c < set.k; ++c) m(row, c) = r.order[set.at(p, c)] + 1;
  }
  return m;
}

std::vector<lsnn::PairSet> pair_sets(const Rcpp::List& pairs, std::size_t first) {
  return {near_set(pairs, first), pair_set(pairs["mid_near"], first),
          pair_set(pairs["further"], first)};
}

// list(phases = c(p1, p2, p3), local, low_dist_thres, constant)
lsnn::PairSchedule pair_schedule(const Rcpp::List& s) {
  lsnn::PairSchedule sch;
  const Rcpp::IntegerVector phases = s["phases"];
  sch.phase1 = phases[0];
  sch.phase2 = phases[1];
  sch.phase3 = phases[2];
  sch.local = Rcpp::as<bool>(s["local"]);
  sch.low_dist_thres = Rcpp::as<double>(s["low_dist_thres"]);
  sch.constant = Rcpp::as<bool>(s["constant"]);
  return sch;
}

}  // namespace

// The mid-near pairs of every row of `data` (prepare_data()'s list).
// [[Rcpp::export(.pacmap_mid_near)]]
Rcpp::IntegerMatrix pacmap_mid_near_cpp(Rcpp::List data, std::string metric, int n_mid,
                                        Rcpp::IntegerVector seed, int n_threads,
                                        std::string simd) {
  lsnn_r::RExecutor ex(n_threads, false);
  const auto rows = lsnn_r::row_data(data, lsnn::parse_metric(metric),
                                     lsnn_r::distance_kernels(simd));
  const std::uint64_t s = lsnn_r::seed_from_r(seed);
  return lsnn_r::run_core(
      [&]() { return pair_matrix(lsnn::sample_mid_near_pairs(*rows, n_mid, s, ex)); });
}

// Further pairs of the new points (rows fixed + 1, ... of the layout) among
// the `fixed` reference points, none of them a near partner.
// [[Rcpp::export(.pacmap_further)]]
Rcpp::IntegerMatrix pacmap_further_cpp(Rcpp::IntegerMatrix near, int fixed, int n_far,
                                       Rcpp::IntegerVector seed, int n_threads) {
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::PairSet nb = pair_set(near, static_cast<std::size_t>(fixed));  // (a view)
  const std::uint64_t s = lsnn_r::seed_from_r(seed);
  return lsnn_r::run_core([&]() {
    return pair_matrix(lsnn::sample_further_pairs(nb, static_cast<std::size_t>(fixed), n_far,
                                                  s, ex));
  });
}

// The cost and gradient at Y for the pair sets (rows from `fixed` + 1) and
// the weights c(near, mid_near, further); local_scale > 0 for LocalMAP's
// near term.
// [[Rcpp::export(.pacmap_cost_gradient)]]
Rcpp::List pacmap_cost_gradient_cpp(Rcpp::NumericMatrix Y, int fixed, Rcpp::List pairs,
                                    Rcpp::NumericVector weights, double local_scale,
                                    int n_threads) {
  const std::size_t n = Y.nrow(), d = Y.ncol();
  lsnn_r::RExecutor ex(n_threads, false);
  Rcpp::NumericMatrix grad(n, d);
  Rcpp::NumericVector pcost(n);
  std::vector<lsnn::PairSet> sets = pair_sets(pairs, static_cast<std::size_t>(fixed));
  return lsnn_r::run_core([&]() {
    lsnn::PairSchedule constant;
    constant.constant = true;
    lsnn::PairObjective objective(n, d, static_cast<std::size_t>(fixed), std::move(sets),
                                  constant, 0, ex);
    lsnn::PairWeights w;
    for (int t = 0; t < lsnn::kPairKinds; ++t) w.w[t] = weights[t];
    w.local_scale = local_scale;
    objective.set_weights(w);
    const double value = objective.evaluate(Y.begin(), true, grad.begin(), pcost.begin(), ex);
    return lsnn_r::cost_gradient_list(value, grad, pcost);
  });
}

// The layout of PaCMAP or LocalMAP from Y0 (n x d): points [0, fixed) stay
// where they are (and are not shown to the callback). `pairs`: as
// pair_sets() reads them, except that a NULL `further` is drawn here,
// `n_further` per row among all points, as .pacmap_further() would draw them
// from `seed` (so that the largest set never crosses into R unless asked
// for). `layout`: the layout's settings (lsnn_r::layout_settings(), the Adam
// stepper's) and the schedule's (pair_schedule()). Returns the coordinates,
// the cost record and, when ret_further, the further pairs at the end
// (LocalMAP redraws them). `order` (NULL, or with fixed = 0 and drawn
// further pairs: the points in a new order, 1-based, as .neighbour_order()
// gives it): the layout runs in that numbering (the further pairs are drawn
// in it) and its rows and further pairs are returned in the user's; the
// callback sees the layout's rows in the new order.
// [[Rcpp::export(.pacmap_layout)]]
Rcpp::List pacmap_layout_cpp(Rcpp::NumericMatrix Y0, int fixed, Rcpp::List pairs,
                             Rcpp::List layout, Rcpp::IntegerVector seed, int n_threads,
                             bool verbose, bool ret_further, SEXP order = R_NilValue) {
  const std::size_t n = Y0.nrow(), d = Y0.ncol();
  lsnn_r::RExecutor ex(n_threads, verbose);
  const bool renumbered = !Rf_isNull(order);
  RNumbering numbering;
  Rcpp::NumericMatrix Y;
  if (renumbered) {
    if (fixed != 0 || !Rf_isNull(pairs["further"])) {
      Rcpp::stop("only a layout of every point with drawn further pairs can be renumbered");
    }
    numbering = numbering_of(order, n);
    Y = Rcpp::NumericMatrix(static_cast<int>(n), static_cast<int>(d));
    for (std::size_t c = 0; c < d; ++c) {
      for (std::size_t p = 0; p < n; ++p) Y[c * n + p] = Y0[c * n + numbering.order[p]];
    }
  } else {
    Y = Rcpp::clone(Y0);
  }
  const std::uint64_t s = lsnn_r::seed_from_r(seed);
  std::vector<lsnn::PairSet> sets;
  if (Rf_isNull(pairs["further"])) {
    sets = {near_set(pairs, static_cast<std::size_t>(fixed)),
            pair_set(pairs["mid_near"], static_cast<std::size_t>(fixed))};
    if (renumbered) {
      for (lsnn::PairSet& set : sets) renumber_view(set, n, numbering);
    }
    const int n_far = Rcpp::as<int>(pairs["n_further"]);
    sets.push_back(lsnn_r::run_core([&]() {
      return lsnn::sample_further_pairs(sets[0], fixed > 0 ? static_cast<std::size_t>(fixed) : n,
                                        static_cast<std::size_t>(n_far), s, ex);
    }));
  } else {
    sets = pair_sets(pairs, static_cast<std::size_t>(fixed));
  }
  const lsnn::PairSchedule schedule = pair_schedule(layout);
  const lsnn::LayoutSettings ls =
      lsnn_r::layout_settings(layout, n, d, static_cast<std::size_t>(fixed));
  return lsnn_r::run_core([&]() {
    lsnn::PairObjective objective(n, d, static_cast<std::size_t>(fixed), std::move(sets),
                                  schedule, s, ex);
    if (!ret_further) objective.release_pair_lists();
    // (the pairs are the objective's own: no cost parameters, no P)
    const lsnn::OptimizerResult res = lsnn::optimize_layout(
        objective, lsnn::CostParams(), lsnn::SparseRows(), Y.begin(), ls, ex);
    Rcpp::NumericVector trace(res.cost.begin(), res.cost.end());
    trace.attr("names") = Rcpp::IntegerVector(res.cost_iter.begin(), res.cost_iter.end());
    Rcpp::RObject further = R_NilValue;
    if (ret_further) {
      const lsnn::PairSet& far = objective.pairs(lsnn::kFurther);
      further = renumbered ? user_pair_matrix(far, numbering) : pair_matrix(far);
    }
    if (renumbered) {
      Rcpp::NumericMatrix user(static_cast<int>(n), static_cast<int>(d));
      for (std::size_t c = 0; c < d; ++c) {
        for (std::size_t p = 0; p < n; ++p) user[c * n + numbering.order[p]] = Y[c * n + p];
      }
      Y = user;
    }
    return Rcpp::List::create(
        Rcpp::Named("Y") = Y, Rcpp::Named("cost") = trace,
        Rcpp::Named("iterations") = res.iterations, Rcpp::Named("stopped") = res.stopped,
        Rcpp::Named("further") = further);
  });
}
