// Glue for the exact kNN search (inst/include/lsnn/exact_knn.h).
#include <Rcpp.h>

#include <lsnn/exact_knn.h>

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
