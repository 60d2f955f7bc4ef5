// Glue for the exact principal components (inst/include/lsnn/pca/pca.h).
#include <Rcpp.h>

#include <lsnn/pca/pca.h>

#include <algorithm>

#include "kernel_choice.h"
#include "r_executor.h"

namespace {

Rcpp::NumericMatrix matrix_to_r(const Eigen::MatrixXd& m) {
  Rcpp::NumericMatrix out(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
  std::copy(m.data(), m.data() + m.size(), out.begin());
  return out;
}

Rcpp::NumericVector vector_to_r(const Eigen::VectorXd& v) {
  return Rcpp::NumericVector(v.data(), v.data() + v.size());
}

}  // namespace

// `X`: a finite double matrix (checked in R); 1 <= k <= ncol(X); `center`:
// whether the rows are centred on the column means.
// [[Rcpp::export(.pca_scores)]]
Rcpp::List pca_scores_cpp(Rcpp::NumericMatrix X, int k, bool center, int n_threads, bool verbose,
                          std::string simd) {
  lsnn_r::RExecutor executor(n_threads, verbose);
  const lsnn::PcaResult res = lsnn_r::run_core([&] {
    return lsnn::principal_components(X.begin(), static_cast<std::size_t>(X.nrow()),
                                      static_cast<std::size_t>(X.ncol()),
                                      static_cast<std::size_t>(k), center,
                                      lsnn_r::pca_kernels(simd),
                                      executor);
  });
  return Rcpp::List::create(Rcpp::Named("center") = vector_to_r(res.center),
                            Rcpp::Named("rotation") = matrix_to_r(res.rotation),
                            Rcpp::Named("scores") = matrix_to_r(res.scores),
                            Rcpp::Named("variance") = vector_to_r(res.variance));
}
