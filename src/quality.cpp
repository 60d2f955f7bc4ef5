// Glue for the embedding quality measures (inst/include/lsnn/graph/quality.h).
#include <Rcpp.h>

#include <lsnn/knn/exact_knn.h>
#include <lsnn/knn/low_dim_knn.h>
#include <lsnn/graph/quality.h>

#include <cstdint>
#include <memory>

#include "kernel_choice.h"
#include "r_executor.h"
#include "r_inputs.h"

// `what`: neighbour preservation, trustworthiness and continuity (penalties
// of the rows `rows`, 0-based), triplet accuracy, distance correlation. `nn`
// is NULL or the 1-based index matrix of a kNN graph of X (k + 1 columns at
// least), used instead of an exact search of X. `x_data` is prepare_data()'s
// list (NULL when X is a graph: then only `nn` is read), `seed` draw_seed()'s
// (src/r_inputs.h).
// [[Rcpp::export(.quality_measures)]]
Rcpp::List quality_measures(SEXP x_data, Rcpp::NumericMatrix y, std::string metric,
                            Rcpp::LogicalVector what, int k, SEXP nn, Rcpp::IntegerVector rows,
                            double n_triplets, double n_pairs, Rcpp::IntegerVector seed,
                            int n_threads, bool verbose, std::string simd) {
  const lsnn::DistanceKernels& kernels = lsnn_r::distance_kernels(simd);
  lsnn_r::RExecutor executor(n_threads, verbose);
  const bool need_x = what[1] || what[2] || what[3] || (what[0] && Rf_isNull(nn));
  std::unique_ptr<lsnn::RowData> x;
  if (need_x) {
    if (Rf_isNull(x_data)) Rcpp::stop("internal: these measures need the data");
    x = lsnn_r::row_data(Rcpp::List(x_data), lsnn::parse_metric(metric), kernels);
  }
  const lsnn::DenseColumnMajor yview{y.begin(), static_cast<std::size_t>(y.nrow()),
                                     static_cast<std::size_t>(y.ncol())};
  const lsnn::RowData yd(yview, lsnn::Metric::euclidean, kernels);
  const std::uint64_t s = lsnn_r::seed_from_r(seed);
  Rcpp::List out;
  lsnn_r::run_core([&] {
    const std::size_t kk = static_cast<std::size_t>(k);
    if (what[0]) {
      // (2-D and 3-D embeddings by a k-d tree, wider ones by the tiled search)
      const lsnn::KnnGraph gy =
          yview.d <= 3 ? lsnn::LowDimKnn(yview.data, yview.n, yview.d).knn(kk + 1, executor)
                       : lsnn::exact_knn(yd, kk + 1, executor);
      const lsnn::GraphView vy{gy.idx.data(), nullptr, gy.n, gy.k, 0};
      double np;
      if (Rf_isNull(nn)) {
        const lsnn::KnnGraph gx = lsnn::exact_knn(*x, kk + 1, executor);
        const lsnn::GraphView vx{gx.idx.data(), nullptr, gx.n, gx.k, 0};
        np = lsnn::neighbour_preservation(vx, vy, kk, executor);
      } else {
        Rcpp::IntegerMatrix idx(nn);
        const lsnn::GraphView vx{idx.begin(), nullptr, static_cast<std::size_t>(idx.nrow()),
                                 static_cast<std::size_t>(idx.ncol()), 1};
        np = lsnn::neighbour_preservation(vx, vy, kk, executor);
      }
      out.push_back(np, "neighbor_preservation");
    }
    if (what[1]) {
      const std::vector<int> r(rows.begin(), rows.end());
      const lsnn::RankPenalties pen = lsnn::rank_penalties(*x, yd, r, kk, executor);
      out.push_back(Rcpp::NumericVector(pen.trust.begin(), pen.trust.end()), "trust_penalty");
      out.push_back(Rcpp::NumericVector(pen.cont.begin(), pen.cont.end()), "cont_penalty");
    }
    // a sampled measure, with how many items it drew and whether that was all
    auto sampled = [&](double value, const lsnn::SampleInfo& info, const char* name,
                       const char* items) {
      out.push_back(value, name);
      out.push_back(info.n_items, std::string("n_") + items);
      out.push_back(info.exhaustive, std::string(items) + "_exhaustive");
    };
    lsnn::SampleInfo triplets, pairs;
    if (what[2]) {
      sampled(lsnn::triplet_accuracy(*x, yd, n_triplets, lsnn::hash64(s, 1), executor, &triplets),
              triplets, "triplet_accuracy", "triplets");
    }
    if (what[3]) {
      sampled(lsnn::distance_spearman(*x, yd, n_pairs, lsnn::hash64(s, 2), executor, &pairs),
              pairs, "distance_correlation", "pairs");
    }
    return 0;
  });
  return out;
}
