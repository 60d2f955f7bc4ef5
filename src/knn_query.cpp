// Glue for queries against an index (inst/include/lsnn/knn/knn_query.h) and the
// locally scaled neighbours of query rows (local_scaling.h). Arguments are
// validated in R.
#include <Rcpp.h>

#include <lsnn/knn/knn_query.h>
#include <lsnn/graph/local_scaling.h>

#include <cstdint>
#include <vector>

#include "graph_convert.h"
#include "kernel_choice.h"
#include "r_executor.h"
#include "r_inputs.h"

namespace {

// One RowData of two dense matrices' rows, `top`'s first: double matrices,
// or for metric = "hamming" logical, integer or double matrices of 0 and 1.
lsnn::RowData stacked_rows(SEXP top, SEXP bottom, const std::string& metric, const std::string& simd) {
  const lsnn::Metric m = lsnn::parse_metric(metric);
  const lsnn::DistanceKernels& kernels = lsnn_r::distance_kernels(simd);
  if (m == lsnn::Metric::hamming) {
    const std::vector<lsnn::BinaryColumnMajor> parts{lsnn_r::binary_matrix(top), lsnn_r::binary_matrix(bottom)};
    if (parts[0].d != parts[1].d) Rcpp::stop("the two blocks of rows must have the same columns");
    return lsnn_r::run_core([&] { return lsnn::RowData(parts, m, kernels); });
  }
  const Rcpp::NumericMatrix a(top), b(bottom);
  if (a.ncol() != b.ncol()) Rcpp::stop("the two blocks of rows must have the same columns");
  const std::vector<lsnn::DenseColumnMajor> parts{
      {a.begin(), static_cast<std::size_t>(a.nrow()), static_cast<std::size_t>(a.ncol())},
      {b.begin(), static_cast<std::size_t>(b.nrow()), static_cast<std::size_t>(b.ncol())}};
  return lsnn_r::run_core([&] { return lsnn::RowData(parts, m, kernels); });
}

// The rows each query row leaves out (0-based rows of the stacked data, -1
// for none), one per query row; NULL or empty for none.
std::vector<int> exclusions(const Rcpp::Nullable<Rcpp::IntegerVector>& exclude, std::size_t n_ref, std::size_t n) {
  if (exclude.isNull()) return {};
  const Rcpp::IntegerVector ex(exclude.get());
  if (ex.size() == 0) return {};
  if (static_cast<std::size_t>(ex.size()) != n - n_ref) Rcpp::stop("exclude must have one entry per query row");
  for (const int e : ex) {
    if (e != -1 && (e < 0 || static_cast<std::size_t>(e) >= n)) Rcpp::stop("exclude must hold rows of the data or -1");
  }
  return std::vector<int>(ex.begin(), ex.end());
}

// The reference rows are rows [0, n_ref) of `data`, the query rows the rest.
// `search` holds the approximate search's settings and the reference's
// graph (ignored by the exact search); `exclude` is read by the exact
// search only.
Rcpp::List run_query(const lsnn::RowData& data, std::size_t n_ref, int k, bool exact, Rcpp::List search,
                     Rcpp::IntegerVector seed, int n_threads, bool verbose, const std::vector<int>& exclude) {
  const lsnn::RowRange reference{0, n_ref}, query{n_ref, data.n()};
  lsnn_r::RExecutor executor(n_threads, verbose);
  lsnn::KnnGraph graph;
  if (exact) {
    graph = lsnn_r::run_core([&] {
      return lsnn::exact_knn_query(data, reference, query, static_cast<std::size_t>(k),
                                   exclude.empty() ? nullptr : exclude.data(), executor);
    });
  } else {
    if (!exclude.empty()) Rcpp::stop("exclude is for the exact query only");
    const Rcpp::IntegerMatrix idx = search["idx"];
    const Rcpp::NumericMatrix dist = search["dist"];
    if (static_cast<std::size_t>(idx.nrow()) != n_ref) Rcpp::stop("the index's graph must have one row per reference row");
    const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
    lsnn::GraphQueryParams params;
    params.epsilon = Rcpp::as<double>(search["epsilon"]);
    params.n_entry = static_cast<std::size_t>(Rcpp::as<int>(search["n_entry"]));
    params.seed = lsnn_r::seed_from_r(seed);
    const std::size_t degree = static_cast<std::size_t>(Rcpp::as<int>(search["degree"]));
    graph = lsnn_r::run_core([&] {
      const lsnn::SearchGraph sg = lsnn::build_search_graph(g, degree);
      return lsnn::approx_knn_query(data, reference, query, sg, static_cast<std::size_t>(k), params, executor);
    });
  }
  return lsnn_r::graph_to_r(graph);
}

}  // namespace

// Dense `reference` and `query` matrices (see stacked_rows()). `exclude`:
// for each query row, a row of the stacked data (reference rows first,
// 0-based) it must not list, or -1; NULL or empty for none.
// [[Rcpp::export(.knn_query_dense)]]
Rcpp::List knn_query_dense(SEXP reference, SEXP query, int k, std::string metric, bool exact,
                           Rcpp::List search, Rcpp::IntegerVector seed, int n_threads, bool verbose,
                           std::string simd, Rcpp::Nullable<Rcpp::IntegerVector> exclude = R_NilValue) {
  const lsnn::RowData data = stacked_rows(reference, query, metric, simd);
  const std::size_t n_ref = static_cast<std::size_t>(Rf_nrows(reference));
  return run_query(data, n_ref, k, exact, search, seed, n_threads, verbose, exclusions(exclude, n_ref, data.n()));
}

// The stacked rows (reference rows first) as CSR: the slots of a dgRMatrix.
// [[Rcpp::export(.knn_query_sparse)]]
Rcpp::List knn_query_sparse(Rcpp::IntegerVector row_ptr, Rcpp::IntegerVector col, Rcpp::NumericVector val,
                            int n, int d, int n_ref, int k, std::string metric, bool exact, Rcpp::List search,
                            Rcpp::IntegerVector seed, int n_threads, bool verbose, std::string simd,
                            Rcpp::Nullable<Rcpp::IntegerVector> exclude = R_NilValue) {
  const lsnn::SparseRows view{row_ptr.begin(), col.begin(), val.begin(), static_cast<std::size_t>(n),
                              static_cast<std::size_t>(d)};
  const lsnn::RowData data = lsnn_r::run_core([&] {
    return lsnn::RowData(view, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  });
  return run_query(data, static_cast<std::size_t>(n_ref), k, exact, search, seed, n_threads, verbose,
                   exclusions(exclude, static_cast<std::size_t>(n_ref), data.n()));
}

// [[Rcpp::export(.local_scales)]]
Rcpp::NumericVector local_scales_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist, int scale_from,
                                     int scale_to, int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  const std::vector<double> sigma = lsnn_r::run_core([&] {
    return lsnn::local_scales(g, static_cast<std::size_t>(scale_from), static_cast<std::size_t>(scale_to), executor);
  });
  return Rcpp::NumericVector(sigma.begin(), sigma.end());
}

// [[Rcpp::export(.locally_scaled_query)]]
Rcpp::List locally_scaled_query_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist, Rcpp::NumericVector sigma,
                                    int n_neighbors, int scale_from, int scale_to, int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  if (dist.nrow() != idx.nrow() || dist.ncol() != idx.ncol()) Rcpp::stop("the graph's idx and dist matrices differ in shape");
  if (n_neighbors < 1 || n_neighbors > idx.ncol()) Rcpp::stop("n_neighbors is outside the query graph's columns");
  Rcpp::IntegerMatrix out_idx(idx.nrow(), n_neighbors);
  Rcpp::NumericMatrix out_dist(idx.nrow(), n_neighbors);
  const lsnn::GraphView q{idx.begin(), dist.begin(), static_cast<std::size_t>(idx.nrow()),
                          static_cast<std::size_t>(idx.ncol()), 1};
  lsnn_r::run_core([&] {
    lsnn::locally_scaled_query(q, sigma.begin(), static_cast<std::size_t>(sigma.size()),
                               static_cast<std::size_t>(n_neighbors), static_cast<std::size_t>(scale_from),
                               static_cast<std::size_t>(scale_to), out_idx.begin(), out_dist.begin(), executor);
    return 0;
  });
  return Rcpp::List::create(Rcpp::Named("idx") = out_idx, Rcpp::Named("dist") = out_dist);
}

// The exact search between two blocks of dense rows (see stacked_rows()),
// each pair scored once (knn_query.h's exact_knn_between()): list(a, b), a's
// rows' k_a nearest rows of b and b's rows' k_b nearest rows of a, as
// list(idx, dist) with 1-based row numbers of the stack (a's rows first,
// then b's). bound_a / bound_b: empty, or a distance bound per row (Inf for
// none); a row lists only rows within its bound, index 0 at distance Inf
// filling the rest.
// [[Rcpp::export(.knn_between_dense)]]
Rcpp::List knn_between_dense(SEXP a, SEXP b, int k_a, int k_b,
                             std::string metric, int n_threads, std::string simd,
                             Rcpp::NumericVector bound_a, Rcpp::NumericVector bound_b) {
  if (k_a < 0 || k_b < 0) Rcpp::stop("k must not be negative");
  const auto check_bound = [](const Rcpp::NumericVector& bound, int rows, const char* name) {
    if (bound.size() != 0 && bound.size() != rows) {
      Rcpp::stop("'%s' must be empty or hold one value per row", name);
    }
    for (double v : bound) {
      if (!(v >= 0.0)) Rcpp::stop("'%s' must be non-negative numbers (Inf for none)", name);
    }
  };
  check_bound(bound_a, Rf_nrows(a), "bound_a");
  check_bound(bound_b, Rf_nrows(b), "bound_b");
  const lsnn::RowData data = stacked_rows(a, b, metric, simd);
  const std::size_t n_a = static_cast<std::size_t>(Rf_nrows(a));
  lsnn_r::RExecutor executor(n_threads, false);
  const auto graphs = lsnn_r::run_core([&] {
    return lsnn::exact_knn_between(data, {0, n_a}, {n_a, data.n()}, static_cast<std::size_t>(k_a),
                                   static_cast<std::size_t>(k_b), executor,
                                   bound_a.size() ? bound_a.begin() : nullptr,
                                   bound_b.size() ? bound_b.begin() : nullptr);
  });
  return Rcpp::List::create(Rcpp::Named("a") = lsnn_r::graph_to_r(graphs.first),
                            Rcpp::Named("b") = lsnn_r::graph_to_r(graphs.second));
}
