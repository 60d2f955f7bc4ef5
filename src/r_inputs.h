// How data and seeds cross from R into the core, the one convention of every
// entry point:
// - data is the list prepare_data() (R/inputs.R) returns, checked in R:
//   list(kind = "dense", x = double matrix), list(kind = "sparse",
//   rows = dgRMatrix), whose slots p, j, x list the rows as the core reads
//   them, or for metric = "hamming" list(kind = "binary", x = logical,
//   integer or double matrix of 0 and 1), packed into bits by the core;
// - a seed is two non-negative 31-bit integers drawn from R's generator by
//   draw_seed() (R/seeds.R), joined into one 64-bit seed here.
#ifndef LSNN_R_INPUTS_H
#define LSNN_R_INPUTS_H

#include <Rcpp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <lsnn/knn/distance.h>

namespace lsnn_r {

// A logical, integer or double matrix of 0/1 values as the core reads it.
inline lsnn::BinaryColumnMajor binary_matrix(SEXP x) {
  if (!Rf_isMatrix(x)) Rcpp::stop("internal: 0/1 data must be a matrix");
  const std::size_t n = static_cast<std::size_t>(Rf_nrows(x)), d = static_cast<std::size_t>(Rf_ncols(x));
  switch (TYPEOF(x)) {
    case LGLSXP: return {LOGICAL(x), nullptr, n, d};
    case INTSXP: return {INTEGER(x), nullptr, n, d};
    case REALSXP: return {nullptr, REAL(x), n, d};
    default: Rcpp::stop("internal: 0/1 data must be logical, integer or double");
  }
}

inline std::unique_ptr<lsnn::RowData> row_data(const Rcpp::List& data, lsnn::Metric metric,
                                               const lsnn::DistanceKernels& kernels) {
  const std::string kind = Rcpp::as<std::string>(data["kind"]);
  if (kind == "binary") {
    const std::vector<lsnn::BinaryColumnMajor> parts{binary_matrix(data["x"])};
    return std::make_unique<lsnn::RowData>(parts, metric, kernels);
  }
  if (kind == "dense") {
    const Rcpp::NumericMatrix x = data["x"];
    const lsnn::DenseColumnMajor view{x.begin(), static_cast<std::size_t>(x.nrow()),
                                      static_cast<std::size_t>(x.ncol())};
    return std::make_unique<lsnn::RowData>(view, metric, kernels);
  }
  if (kind != "sparse") Rcpp::stop("internal: unknown kind of data '%s'", kind);
  const Rcpp::S4 rows = data["rows"];
  const Rcpp::IntegerVector dim = rows.slot("Dim"), p = rows.slot("p"), j = rows.slot("j");
  const Rcpp::NumericVector v = rows.slot("x");
  const lsnn::SparseRows view{p.begin(), j.begin(), v.begin(), static_cast<std::size_t>(dim[0]),
                              static_cast<std::size_t>(dim[1])};
  return std::make_unique<lsnn::RowData>(view, metric, kernels);
}

inline std::uint64_t seed_from_r(const Rcpp::IntegerVector& seed) {
  if (seed.size() != 2) Rcpp::stop("internal: a seed is two integers");
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(seed[0])) << 32) |
         static_cast<std::uint32_t>(seed[1]);
}

// The result of cost_gradient(): list(cost, gradient, pcost), refused with
// an error naming 'Y' when the cost or gradient is not finite (a layout so
// wide that its squared distances overflow).
inline Rcpp::List cost_gradient_list(double cost, const Rcpp::NumericMatrix& grad,
                                     const Rcpp::NumericVector& pcost) {
  bool finite = !std::isnan(cost);
  for (double g : grad) finite = finite && std::isfinite(g);
  if (!finite) {
    throw Rcpp::exception(
        "'Y' is too spread out: squared distances between its points overflow (keep "
        "|Y| well below 1e150), so the cost or its gradient is not a finite number",
        false);
  }
  return Rcpp::List::create(Rcpp::Named("cost") = cost, Rcpp::Named("gradient") = grad,
                            Rcpp::Named("pcost") = pcost);
}

}  // namespace lsnn_r

#endif  // LSNN_R_INPUTS_H
