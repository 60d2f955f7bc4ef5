// Glue for the renumbering of large layouts (inst/include/lsnn/graph/renumber.h).
#include <Rcpp.h>

#include <lsnn/graph/renumber.h>

#include <cstddef>

#include "r_executor.h"

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
    Rcpp::IntegerVector out(static_cast<R_xlen_t>(n));
    for (std::size_t p = 0; p < n; ++p) out[static_cast<R_xlen_t>(p)] = r.order[p] + 1;
    return out;
  });
}
