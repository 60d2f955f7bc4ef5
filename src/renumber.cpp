// Glue for the renumbering of large layouts (inst/include/lsnn/graph/renumber.h).
#include <Rcpp.h>

#include <lsnn/graph/renumber.h>

#include <cstddef>

#include "r_executor.h"

namespace {

// A renumbering's order as R's 1-based vector.
Rcpp::IntegerVector one_based_order(const lsnn::Renumbering& r) {
  Rcpp::IntegerVector out(static_cast<R_xlen_t>(r.order.size()));
  for (std::size_t p = 0; p < r.order.size(); ++p) out[static_cast<R_xlen_t>(p)] = r.order[p] + 1;
  return out;
}

}  // namespace

// The breadth-first order of the points of a graph's neighbour lists:
// columns [from, from + k) of `idx` (n x k', 1-based; R has checked them).
// Returns the points in their new order, 1-based.
// [[Rcpp::export(.neighbour_order)]]
Rcpp::IntegerVector neighbour_order_cpp(Rcpp::IntegerMatrix idx, int from, int k) {
  const std::size_t n = static_cast<std::size_t>(idx.nrow());
  if (from < 0 || k < 0 || from + k > idx.ncol()) Rcpp::stop("the columns lie outside the graph");
  const int* x = idx.begin() + static_cast<std::size_t>(from) * n;
  return lsnn_r::run_core([&]() {
    const lsnn::Renumbering r = lsnn::breadth_first_order(
        n, static_cast<std::size_t>(k),
        [x, n](std::size_t i, std::size_t c) {
          const int v = x[c * n + i];
          return v == NA_INTEGER ? -1 : v - 1;
        });
    return one_based_order(r);
  });
}

// The affinities P (a square dgCMatrix whose slots R has checked) in the
// breadth-first order of their own entries: list(order = the points in
// their new order, 1-based; p, i, x = the slots of P renumbered).
// [[Rcpp::export(.renumber_affinities)]]
Rcpp::List renumber_affinities_cpp(Rcpp::S4 P) {
  const Rcpp::IntegerVector dim = P.slot("Dim"), ptr = P.slot("p"), row = P.slot("i");
  const Rcpp::NumericVector val = P.slot("x");
  if (dim.size() != 2 || dim[0] != dim[1] || ptr.size() != static_cast<R_xlen_t>(dim[0]) + 1 ||
      row.size() != val.size() || ptr[dim[0]] != row.size()) {
    Rcpp::stop("internal: the slots of 'P' do not fit its dimensions");
  }
  const std::size_t n = static_cast<std::size_t>(dim[0]);
  // (a column of the dgCMatrix is a row of its transpose: the order and the
  // renumbering read it as rows)
  const lsnn::SparseRows rows{ptr.begin(), row.begin(), val.begin(), n, n};
  return lsnn_r::run_core([&]() {
    const lsnn::Renumbering r = lsnn::breadth_first_order(rows);
    const lsnn::CsrMatrix out = lsnn::renumbered(rows, r);
    return Rcpp::List::create(Rcpp::Named("order") = one_based_order(r),
                              Rcpp::Named("p") = Rcpp::IntegerVector(out.ptr.begin(), out.ptr.end()),
                              Rcpp::Named("i") = Rcpp::IntegerVector(out.col.begin(), out.col.end()),
                              Rcpp::Named("x") = Rcpp::NumericVector(out.val.begin(), out.val.end()));
  });
}
