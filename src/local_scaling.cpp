// Glue for local scaling and graph sorting (inst/include/lsnn/local_scaling.h,
// graph_sort.h). Arguments are validated in R.
#include <Rcpp.h>

#include <lsnn/graph_sort.h>
#include <lsnn/local_scaling.h>
#include <lsnn/neighbour_overlap.h>

#include "graph_convert.h"
#include "r_executor.h"

// [[Rcpp::export(.locally_scaled_distances)]]
Rcpp::NumericMatrix locally_scaled_distances_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                                 int scale_from, int scale_to, int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  Rcpp::NumericMatrix out(idx.nrow(), idx.ncol());
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  lsnn_r::run_core([&] {
    lsnn::locally_scaled_distances(g, scale_from, scale_to, out.begin(), executor);
    return 0;
  });
  return out;
}

// [[Rcpp::export(.locally_scaled_graph)]]
Rcpp::List locally_scaled_graph_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                    int n_cols, int n_neighbors, int scale_from, int scale_to,
                                    int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  Rcpp::IntegerMatrix out_idx(idx.nrow(), n_neighbors);
  Rcpp::NumericMatrix out_dist(idx.nrow(), n_neighbors);
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, n_cols);
  lsnn_r::run_core([&] {
    lsnn::locally_scaled_graph(g, n_neighbors, scale_from, scale_to, out_idx.begin(),
                               out_dist.begin(), executor);
    return 0;
  });
  return Rcpp::List::create(Rcpp::Named("idx") = out_idx, Rcpp::Named("dist") = out_dist);
}

// [[Rcpp::export(.sort_graph_rows)]]
Rcpp::List sort_graph_rows_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                               Rcpp::Nullable<Rcpp::NumericMatrix> sort_values, bool decreasing,
                               bool self_first, int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  Rcpp::IntegerMatrix out_idx(idx.nrow(), idx.ncol());
  Rcpp::NumericMatrix out_dist(idx.nrow(), idx.ncol());
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  Rcpp::NumericMatrix values;
  const double* pv = nullptr;
  if (sort_values.isNotNull()) {
    values = Rcpp::NumericMatrix(sort_values.get());
    pv = values.begin();
  }
  lsnn_r::run_core([&] {
    lsnn::sort_graph_rows(g, pv, decreasing, self_first, out_idx.begin(), out_dist.begin(),
                          executor);
    return 0;
  });
  return Rcpp::List::create(Rcpp::Named("idx") = out_idx, Rcpp::Named("dist") = out_dist);
}

// [[Rcpp::export(.neighbor_overlap)]]
double neighbor_overlap_cpp(Rcpp::IntegerMatrix idx1, Rcpp::IntegerMatrix idx2, int k,
                            int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  const lsnn::GraphView a{idx1.begin(), nullptr, static_cast<std::size_t>(idx1.nrow()),
                          static_cast<std::size_t>(k), 1};
  const lsnn::GraphView b{idx2.begin(), nullptr, static_cast<std::size_t>(idx2.nrow()),
                          static_cast<std::size_t>(k), 1};
  return lsnn::neighbour_overlap(a, b, static_cast<std::size_t>(k), executor);
}

// One pass over a graph from R: the first problem found, as
// c(code, row, value) with code 0 = none, 1 = idx NA, 2 = idx out of 1..n,
// 3 = dist NA/NaN, 4 = dist negative, 5 = dist infinite, 6 = column 1 is
// not the row itself (row and value 1-based).
// [[Rcpp::export(.graph_problem)]]
Rcpp::IntegerVector graph_problem(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                  bool self_first) {
  const R_xlen_t n = idx.nrow(), k = idx.ncol();
  const int* pi = idx.begin();
  const double* pd = dist.begin();
  for (R_xlen_t c = 0; c < k; ++c) {
    for (R_xlen_t i = 0; i < n; ++i) {
      const int v = pi[i + c * n];
      const double d = pd[i + c * n];
      int code = 0;
      if (v == NA_INTEGER) {
        code = 1;
      } else if (v < 1 || v > n) {
        code = 2;
      } else if (std::isnan(d)) {
        code = 3;
      } else if (d < 0) {
        code = 4;
      } else if (std::isinf(d)) {
        code = 5;
      } else if (self_first && c == 0 && v != i + 1) {
        code = 6;
      }
      if (code != 0) return Rcpp::IntegerVector::create(code, static_cast<int>(i + 1), v);
    }
  }
  return Rcpp::IntegerVector::create(0, 0, 0);
}
