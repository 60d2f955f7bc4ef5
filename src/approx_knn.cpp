// Glue for the approximate kNN search (inst/include/lsnn/nndescent.h).
#pragma GCC diagnostic ignored "-Wignored-attributes"
#include <Rcpp.h>

#include <lsnn/nndescent.h>

#include <cstdint>

#include "graph_convert.h"
#include "kernels.h"
#include "r_executor.h"

namespace {

// R passes NA for "automatic".
std::size_t size_param(int value) {
  return value == NA_INTEGER ? lsnn::ApproxKnnParams::automatic : static_cast<std::size_t>(value);
}

Rcpp::List run_approx(const lsnn::RowData& data, int k, Rcpp::List control,
                      Rcpp::IntegerVector seed, int n_threads, bool verbose) {
  lsnn::ApproxKnnParams params;
  params.n_trees = size_param(Rcpp::as<int>(control["n_trees"]));
  params.leaf_size = size_param(Rcpp::as<int>(control["leaf_size"]));
  params.max_candidates = size_param(Rcpp::as<int>(control["max_candidates"]));
  params.n_iters = size_param(Rcpp::as<int>(control["n_iters"]));
  params.delta = Rcpp::as<double>(control["delta"]);
  params.target_recall = Rcpp::as<double>(control["target_recall"]);
  // Two non-negative 31-bit integers drawn from R's generator.
  params.seed = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(seed[0])) << 32) |
                static_cast<std::uint32_t>(seed[1]);
  lsnn_r::RExecutor executor(n_threads, verbose);
  lsnn::KnnGraph graph = lsnn_r::run_core([&] {
    return lsnn::approx_knn(data, static_cast<std::size_t>(k), params, executor);
  });
  return lsnn_r::graph_to_r(graph);
}

}  // namespace

// [[Rcpp::export(.approx_knn_dense)]]
Rcpp::List approx_knn_dense(Rcpp::NumericMatrix x, int k, std::string metric, Rcpp::List control,
                            Rcpp::IntegerVector seed, int n_threads, bool verbose,
                            std::string simd) {
  const lsnn::DenseColumnMajor view{x.begin(), static_cast<std::size_t>(x.nrow()),
                                    static_cast<std::size_t>(x.ncol())};
  const lsnn::RowData data(view, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  return run_approx(data, k, control, seed, n_threads, verbose);
}

// The rows of a dgCMatrix X arrive as the columns of t(X): p, i, x are CSR.
// [[Rcpp::export(.approx_knn_sparse)]]
Rcpp::List approx_knn_sparse(Rcpp::IntegerVector row_ptr, Rcpp::IntegerVector col,
                             Rcpp::NumericVector val, int n, int d, int k, std::string metric,
                             Rcpp::List control, Rcpp::IntegerVector seed, int n_threads,
                             bool verbose, std::string simd) {
  const lsnn::SparseRows view{row_ptr.begin(), col.begin(), val.begin(),
                              static_cast<std::size_t>(n), static_cast<std::size_t>(d)};
  const lsnn::RowData data(view, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  return run_approx(data, k, control, seed, n_threads, verbose);
}
