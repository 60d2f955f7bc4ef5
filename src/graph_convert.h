// Conversions between R graphs (list(idx, dist), 1-based) and the core's.
#ifndef LSNN_R_GRAPH_CONVERT_H
#define LSNN_R_GRAPH_CONVERT_H

#include <Rcpp.h>

#include <cmath>

#include <lsnn/base/graph.h>
#include <lsnn/graph/graph_sort.h>

namespace lsnn_r {

// (An entry with index -1, a list shorter than k, becomes index 0 at
// distance Inf.)
inline Rcpp::List graph_to_r(const lsnn::KnnGraph& g) {
  // (every entry is written below)
  Rcpp::IntegerMatrix idx = Rcpp::no_init(static_cast<int>(g.n), static_cast<int>(g.k));
  Rcpp::NumericMatrix dist = Rcpp::no_init(static_cast<int>(g.n), static_cast<int>(g.k));
  int* pi = idx.begin();
  double* pd = dist.begin();
  bool finite = true;
  for (std::size_t e = 0; e < g.idx.size(); ++e) {
    pi[e] = g.idx[e] + 1;
    pd[e] = g.dist[e];
    finite = finite && (g.idx[e] < 0 || std::isfinite(pd[e]));
  }
  // Finite data can still be too spread out for their distances to fit a
  // double (beyond about 1.8e308).
  if (!finite) {
    Rcpp::stop("some distances exceed the largest double (about 1.8e308): rescale the data");
  }
  return Rcpp::List::create(Rcpp::Named("idx") = idx, Rcpp::Named("dist") = dist);
}

// Graphs are checked once, in R (check_graph(): shapes, types, ranges, order),
// where they enter. This guard is not a second validation but what keeps the
// core from reading out of bounds whatever the caller: the first n_cols
// columns of idx within 1..n_ref (by default the graph's own rows), dist of
// the same shape. O(n k), no allocation.
inline void check_graph_shape(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericMatrix& dist,
                              int n_cols, R_xlen_t n_ref = -1) {
  if (dist.nrow() != idx.nrow() || dist.ncol() != idx.ncol()) {
    Rcpp::stop("the graph's idx and dist matrices differ in shape");
  }
  if (n_cols < 1 || n_cols > idx.ncol()) Rcpp::stop("the graph has too few columns");
  const R_xlen_t n = idx.nrow();
  if (n_ref < 0) n_ref = n;
  const int* p = idx.begin();
  for (R_xlen_t e = 0; e < n * n_cols; ++e) {
    if (p[e] < 1 || p[e] > n_ref) Rcpp::stop("the graph has indices outside 1..n (or NA)");
  }
}

inline lsnn::GraphView graph_view(const Rcpp::IntegerMatrix& idx, const Rcpp::NumericMatrix& dist,
                                  int n_cols) {
  check_graph_shape(idx, dist, n_cols);
  return lsnn::GraphView{idx.begin(), dist.begin(), static_cast<std::size_t>(idx.nrow()),
                         static_cast<std::size_t>(n_cols), 1};
}

// A graph of new rows among n_ref reference rows (check_graph(n_ref = ) in
// R): no self column.
inline lsnn::GraphView query_graph_view(const Rcpp::IntegerMatrix& idx,
                                        const Rcpp::NumericMatrix& dist, int n_ref) {
  check_graph_shape(idx, dist, idx.ncol(), n_ref);
  lsnn::GraphView g{idx.begin(), dist.begin(), static_cast<std::size_t>(idx.nrow()),
                    static_cast<std::size_t>(idx.ncol()), 1};
  g.self_first = false;
  return g;
}

}  // namespace lsnn_r

#endif  // LSNN_R_GRAPH_CONVERT_H
