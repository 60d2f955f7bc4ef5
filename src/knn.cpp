// Glue for the exact kNN search (inst/include/lsnn/knn/exact_knn.h) and the
// exact graph of a dist object (graph_sort.h).
#include <Rcpp.h>

#include <lsnn/knn/exact_knn.h>
#include <lsnn/graph/graph_sort.h>

#include "graph_convert.h"
#include "kernel_choice.h"
#include "r_executor.h"
#include "r_inputs.h"

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

// `data`: prepare_data()'s list (src/r_inputs.h).
// [[Rcpp::export(.exact_knn)]]
Rcpp::List exact_knn_cpp(Rcpp::List data, int k, std::string metric, int n_threads, bool verbose,
                         std::string simd, int block_rows) {
  const auto rows = lsnn_r::row_data(data, lsnn::parse_metric(metric),
                                     lsnn_r::distance_kernels(simd));
  return run_exact(*rows, k, n_threads, verbose, block_rows);
}

// The k-column graph of the n points of a dist object's distances `d`
// (R/inputs.R has checked them: n (n - 1) / 2 finite non-negative values,
// k <= n).
// [[Rcpp::export(.knn_of_distances)]]
Rcpp::List knn_of_distances_cpp(Rcpp::NumericVector d, int n, int k, int n_threads,
                                bool verbose) {
  if (n < 1 || k < 1 || k > n ||
      static_cast<double>(d.size()) != static_cast<double>(n) * (n - 1) / 2) {
    Rcpp::stop("internal: a dist object of %d points has n (n - 1) / 2 distances", n);
  }
  lsnn_r::RExecutor executor(n_threads, verbose);
  lsnn::KnnGraph graph = lsnn_r::run_core([&] {
    return lsnn::knn_of_distances(d.begin(), static_cast<std::size_t>(n),
                                  static_cast<std::size_t>(k), executor);
  });
  return lsnn_r::graph_to_r(graph);
}
