// Glue for the approximate kNN search (inst/include/lsnn/knn/nndescent.h).
#include <Rcpp.h>

#include <lsnn/knn/nndescent.h>

#include "graph_convert.h"
#include "kernel_choice.h"
#include "r_executor.h"
#include "r_inputs.h"

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
  params.seed = lsnn_r::seed_from_r(seed);
  lsnn_r::RExecutor executor(n_threads, verbose);
  lsnn::ApproxKnnStats stats;
  lsnn::KnnGraph graph = lsnn_r::run_core([&] {
    return lsnn::approx_knn(data, static_cast<std::size_t>(k), params, executor, &stats);
  });
  Rcpp::List out = lsnn_r::graph_to_r(graph);
  // the last recall estimate, for R/knn.R's warning (none where the search
  // ran exactly or estimated nothing)
  if (params.target_recall < 1.0 && !stats.exact && !stats.recall.empty()) {
    out.attr("lsnn_estimated_recall") = stats.recall.back();
  }
  return out;
}

}  // namespace

// `data`: prepare_data()'s list; `seed`: draw_seed()'s (src/r_inputs.h).
// [[Rcpp::export(.approx_knn)]]
Rcpp::List approx_knn_cpp(Rcpp::List data, int k, std::string metric, Rcpp::List control,
                          Rcpp::IntegerVector seed, int n_threads, bool verbose, std::string simd) {
  const auto rows = lsnn_r::row_data(data, lsnn::parse_metric(metric),
                                     lsnn_r::distance_kernels(simd));
  return run_approx(*rows, k, control, seed, n_threads, verbose);
}
