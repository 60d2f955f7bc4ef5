// Glue for the fingerprints of shards (inst/include/lsnn/base/fingerprint.h),
// given to R as 16 hexadecimal digits.
#include <Rcpp.h>

#include <cinttypes>
#include <cstdio>

#include <lsnn/base/fingerprint.h>

namespace {

std::string hex(std::uint64_t h) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016" PRIx64, h);
  return digits;
}

}  // namespace

// [[Rcpp::export(.matrix_fingerprint)]]
std::string matrix_fingerprint(Rcpp::NumericMatrix x) {
  return hex(lsnn::matrix_fingerprint(x.begin(), static_cast<std::size_t>(x.nrow()),
                                      static_cast<std::size_t>(x.ncol())));
}

// Rows first to first + count - 1 (from 1) of x, as a new matrix, and their
// fingerprint (NA unless `fingerprint`).
// [[Rcpp::export(.shard_rows)]]
Rcpp::List shard_rows(Rcpp::NumericMatrix x, int first, int count, bool fingerprint) {
  if (first < 1 || count < 0 || count > x.nrow() - first + 1) {
    Rcpp::stop("rows %d to %d are outside the matrix's %d rows", first, first + count - 1,
               x.nrow());
  }
  const std::size_t rows = static_cast<std::size_t>(count), cols = static_cast<std::size_t>(x.ncol());
  Rcpp::NumericMatrix out = Rcpp::no_init_matrix(count, x.ncol());
  lsnn::MatrixFingerprint hash(rows, cols);
  lsnn::copy_rows(x.begin(), static_cast<std::size_t>(x.nrow()), cols,
                  static_cast<std::size_t>(first - 1), rows, out.begin(),
                  fingerprint ? &hash : nullptr);
  return Rcpp::List::create(
      Rcpp::Named("x") = out,
      Rcpp::Named("fingerprint") = fingerprint ? Rcpp::CharacterVector::create(hex(hash.value()))
                                               : Rcpp::CharacterVector::create(NA_STRING));
}
