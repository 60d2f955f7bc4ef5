// Glue for the partitioned exact kNN search (inst/include/lsnn/knn/partition_knn.h).
#include <Rcpp.h>

#include <lsnn/knn/partition_knn.h>

#include "graph_convert.h"
#include "kernel_choice.h"
#include "r_executor.h"
#include "r_inputs.h"

namespace {

// The search's settings from R's (checked there).
lsnn::PartitionKnnParams partition_params(int rows_per_partition, int n_iters, Rcpp::IntegerVector seed) {
  if (rows_per_partition < 1 || n_iters < 0) Rcpp::stop("internal: bad partition settings");
  lsnn::PartitionKnnParams params;
  params.rows_per_partition = static_cast<std::size_t>(rows_per_partition);
  params.n_iters = static_cast<std::size_t>(n_iters);
  params.seed = lsnn_r::seed_from_r(seed);
  return params;
}

// The dense matrix of prepare_data()'s list, as the bound reads it (empty
// for other kinds of data).
lsnn::DenseColumnMajor dense_rows(const Rcpp::List& data) {
  if (Rcpp::as<std::string>(data["kind"]) != "dense") return {nullptr, 0, 0};
  const Rcpp::NumericMatrix m = data["x"];
  return {m.begin(), static_cast<std::size_t>(m.nrow()), static_cast<std::size_t>(m.ncol())};
}

}  // namespace

// `data`: prepare_data()'s list (dense or not: other kinds run the exact
// search); `seed`: draw_seed()'s (src/r_inputs.h). The graph carries the
// search's counts as attributes (R/partition_knn.R reads and drops them).
// [[Rcpp::export(.partition_knn)]]
Rcpp::List partition_knn_cpp(Rcpp::List data, int k, std::string metric, int rows_per_partition, int n_iters,
                             Rcpp::IntegerVector seed, int n_threads, bool verbose, std::string simd) {
  const lsnn::PartitionKnnParams params = partition_params(rows_per_partition, n_iters, seed);
  const auto rows = lsnn_r::row_data(data, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  const lsnn::DenseColumnMajor x = dense_rows(data);
  lsnn_r::RExecutor executor(n_threads, verbose);
  lsnn::PartitionKnnStats stats;
  lsnn::KnnGraph graph = lsnn_r::run_core([&] {
    return lsnn::partition_knn(*rows, x, static_cast<std::size_t>(k), params, executor, &stats);
  });
  Rcpp::List out = lsnn_r::graph_to_r(graph);
  out.attr("partition_stats") = Rcpp::List::create(
      Rcpp::Named("partitioned") = stats.partitioned,
      Rcpp::Named("partitions") = static_cast<double>(stats.partitions),
      Rcpp::Named("largest") = static_cast<double>(stats.largest),
      Rcpp::Named("rows_pruned") = static_cast<double>(stats.rows_pruned),
      Rcpp::Named("rows_exhaustive") = static_cast<double>(stats.rows_exhaustive),
      Rcpp::Named("rows_refined") = static_cast<double>(stats.rows_refined),
      Rcpp::Named("pairs_scored") = stats.pairs_scored, Rcpp::Named("products") = stats.products);
  return out;
}

// partition_work_share() of the core: the forecast share of the exact
// search's products the partitioned search would compute (search_kind() in
// R/inputs.R).
// [[Rcpp::export(.partition_work_share)]]
double partition_work_share_cpp(Rcpp::List data, int k, std::string metric, int rows_per_partition,
                                int n_iters, Rcpp::IntegerVector seed, int n_threads, std::string simd) {
  const lsnn::PartitionKnnParams params = partition_params(rows_per_partition, n_iters, seed);
  const auto rows = lsnn_r::row_data(data, lsnn::parse_metric(metric), lsnn_r::distance_kernels(simd));
  const lsnn::DenseColumnMajor x = dense_rows(data);
  lsnn_r::RExecutor executor(n_threads, false);
  return lsnn_r::run_core([&] {
    return lsnn::partition_work_share(*rows, x, static_cast<std::size_t>(k), params, executor);
  });
}

// intrinsic_dimension() of the core on prepare_data()'s dense list (0 for
// other kinds): search_kind() in R/inputs.R reads it.
// [[Rcpp::export(.intrinsic_dimension)]]
double intrinsic_dimension_cpp(Rcpp::List data, std::string metric, int sampled, int k, Rcpp::IntegerVector seed,
                               int n_threads, std::string simd) {
  if (sampled < 1 || k < 2) Rcpp::stop("internal: bad intrinsic dimension settings");
  const lsnn::DenseColumnMajor x = dense_rows(data);
  if (x.data == nullptr) return 0.0;
  const lsnn::DistanceKernels& kern = lsnn_r::distance_kernels(simd);
  lsnn_r::RExecutor executor(n_threads, false);
  return lsnn_r::run_core([&] {
    return lsnn::intrinsic_dimension(x, lsnn::parse_metric(metric), kern, static_cast<std::size_t>(sampled),
                                     static_cast<std::size_t>(k), lsnn_r::seed_from_r(seed), executor);
  });
}
