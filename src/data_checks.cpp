// Checks of data that R cannot make without copies of the whole matrix.
#include <Rcpp.h>

namespace {

// The first (smallest row, then column) value of a column-major n x d matrix
// that is neither 0 nor 1, 1-based, or (0, 0).
template <class T>
Rcpp::IntegerVector first_non_binary(const T* x, R_xlen_t n, R_xlen_t d) {
  R_xlen_t row = n, col = 0;
  for (R_xlen_t k = 0; k < d; ++k) {
    const T* column = x + k * n;
    for (R_xlen_t i = 0; i < row; ++i) {
      if (!(column[i] == T(0) || column[i] == T(1))) {
        row = i;
        col = k;
        break;
      }
    }
  }
  if (row == n) return Rcpp::IntegerVector::create(0, 0);
  return Rcpp::IntegerVector::create(static_cast<int>(row + 1), static_cast<int>(col + 1));
}

}  // namespace

// Where a logical, integer or double matrix holds something other than 0 and
// 1 (FALSE and TRUE): c(row, column) of the first such value (NA and NaN
// included), or c(0, 0). The data of metric = "hamming" (prepare_data()).
// [[Rcpp::export(.first_non_binary)]]
Rcpp::IntegerVector first_non_binary_cpp(SEXP x) {
  if (!Rf_isMatrix(x)) Rcpp::stop("internal: a matrix is needed");
  const R_xlen_t n = Rf_nrows(x), d = Rf_ncols(x);
  switch (TYPEOF(x)) {
    case LGLSXP: return first_non_binary(LOGICAL(x), n, d);
    case INTSXP: return first_non_binary(INTEGER(x), n, d);
    case REALSXP: return first_non_binary(REAL(x), n, d);
    default: Rcpp::stop("internal: a logical, integer or double matrix is needed");
  }
}
