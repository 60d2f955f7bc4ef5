// Glue for the exact kNN search (inst/include/lsnn/exact_knn.h).
#include <Rcpp.h>

#include <lsnn/exact_knn.h>

#include "graph_convert.h"
#include "kernels.h"
#include "r_executor.h"

namespace {

Rcpp::List run_exact(const lsnn::RowData& data, int k, int n_threads, bool verbose,
                     int block_rows) {
  lsnn_r::RExecutor executor(n_threads, verbose);
  lsnn::ExactKnnStats stats;
  lsnn::KnnGraph graph = lsnn_r::run_core([&] {
    return lsnn::exact_knn(data, static_cast<std::size_t>(k), executor, &stats,
                           static_cast<std::size_t>(block_rows));
  });
  Rcpp::List out = lsnn_r::graph_to_r(graph);
  out.attr("lsnn_refined_rows") = static_cast<double>(stats.rows_refined);
  return out;
}

}  // namespace

// [[Rcpp::export(.exact_knn_dense)]]
Rcpp::List exact_knn_dense(Rcpp::NumericMatrix x, int k, std::string metric, int n_threads,
                           bool verbose, std::string simd, int block_rows) {
  const lsnn::DenseColumnMajor view{x.begin(), static_cast<std::size_t>(x.nrow()),
                                    static_cast<std::size_t>(x.ncol())};
  const lsnn::RowData data(view, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  return run_exact(data, k, n_threads, verbose, block_rows);
}

// The rows of a dgCMatrix X arrive as the columns of t(X): p, i, x are CSR.
// [[Rcpp::export(.exact_knn_sparse)]]
Rcpp::List exact_knn_sparse(Rcpp::IntegerVector row_ptr, Rcpp::IntegerVector col,
                            Rcpp::NumericVector val, int n, int d, int k, std::string metric,
                            int n_threads, bool verbose, std::string simd, int block_rows) {
  const lsnn::SparseRows view{row_ptr.begin(), col.begin(), val.begin(),
                              static_cast<std::size_t>(n), static_cast<std::size_t>(d)};
  const lsnn::RowData data(view, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  return run_exact(data, k, n_threads, verbose, block_rows);
}
