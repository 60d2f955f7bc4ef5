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
  if (n_neighbors < 1 || n_neighbors > n_cols) Rcpp::stop("n_neighbors is outside the graph's columns");
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
    if (values.nrow() != idx.nrow() || values.ncol() != idx.ncol()) {
      Rcpp::stop("sort_values must have the shape of the graph");
    }
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
  if (idx1.nrow() != idx2.nrow() || k < 1 || k > idx1.ncol() || k > idx2.ncol()) {
    Rcpp::stop("k must be between 1 and both graphs' columns, and the graphs must have the same rows");
  }
  lsnn_r::RExecutor executor(n_threads, false);
  const lsnn::GraphView a{idx1.begin(), nullptr, static_cast<std::size_t>(idx1.nrow()),
                          static_cast<std::size_t>(k), 1};
  const lsnn::GraphView b{idx2.begin(), nullptr, static_cast<std::size_t>(idx2.nrow()),
                          static_cast<std::size_t>(k), 1};
  return lsnn::neighbour_overlap(a, b, static_cast<std::size_t>(k), executor);
}

// The first problem of a graph from R, as c(code, row, value) (row and
// value 1-based), code 0 = none, 1 = idx NA, 2 = idx out of 1..n (value: the
// index), 3 = dist NA/NaN, 4 = dist negative, 5 = dist infinite; with
// self_first also 6 = column 1 is not the row itself, 7 = dist decreases
// along the row (value: the column), 8 = the row's own distance is not 0.
// "First" is the smallest row with a problem, then its first column, so
// that the message names the first bad row. The matrices are column-major:
// each column is scanned down to the best row found so far.
// A row's own distance counts as 0 up to 1e-6 of its largest distance, so
// that graphs from libraries that compute it in single precision (cosine
// self-distances of about 1e-7) pass.
// [[Rcpp::export(.graph_problem)]]
Rcpp::IntegerVector graph_problem(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                  bool self_first) {
  const R_xlen_t n = idx.nrow(), k = idx.ncol();
  const int* pi = idx.begin();
  const double* pd = dist.begin();
  int code = 0, value = 0;
  R_xlen_t row = n;
  for (R_xlen_t c = 0; c < k; ++c) {
    for (R_xlen_t i = 0; i < row; ++i) {
      const int v = pi[i + c * n];
      const double d = pd[i + c * n];
      int found = 0, what = v;
      if (v == NA_INTEGER) {
        found = 1;
      } else if (v < 1 || v > n) {
        found = 2;
      } else if (std::isnan(d)) {
        found = 3;
      } else if (d < 0) {
        found = 4;
      } else if (std::isinf(d)) {
        found = 5;
      } else if (self_first && c == 0 && v != i + 1) {
        found = 6;
      } else if (self_first && c > 0 && d < pd[i + (c - 1) * n]) {
        found = 7;
        what = static_cast<int>(c + 1);
      } else if (self_first && c == k - 1 && pd[i] > 1e-6 * std::max(d, 1.0)) {
        found = 8;
      }
      if (found != 0) {
        code = found;
        value = what;
        row = i;
        break;
      }
    }
  }
  if (code == 0) return Rcpp::IntegerVector::create(0, 0, 0);
  return Rcpp::IntegerVector::create(code, static_cast<int>(row + 1), value);
}
