// Glue for the core's counter-based random numbers (random.h), for R code
// that seeds the steps of a larger computation and samples rows from seeds
// of draw_seed() rather than from R's generator.
#include <Rcpp.h>

#include <lsnn/base/random.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "r_inputs.h"

namespace {

// A seed of draw_seed()'s form: two non-negative 31-bit integers.
Rcpp::IntegerVector seed_to_r(std::uint64_t s) {
  return Rcpp::IntegerVector::create(static_cast<int>((s >> 33) & 0x7fffffffULL),
                                     static_cast<int>(s & 0x7fffffffULL));
}

}  // namespace

// [[Rcpp::export(.derive_seed)]]
Rcpp::IntegerVector derive_seed(Rcpp::IntegerVector seed, Rcpp::NumericVector step) {
  if (step.size() < 1 || step.size() > 3) Rcpp::stop("internal: a step is one to three numbers");
  std::uint64_t key[3] = {0, 0, 0};
  for (R_xlen_t i = 0; i < step.size(); ++i) {
    if (!(step[i] >= 0) || step[i] > 9007199254740992.0 || step[i] != std::floor(step[i])) {
      Rcpp::stop("internal: a step's numbers are whole and non-negative");
    }
    key[i] = static_cast<std::uint64_t>(step[i]);
  }
  return seed_to_r(lsnn::hash64(lsnn_r::seed_from_r(seed), key[0], key[1], key[2]));
}

// [[Rcpp::export(.sample_rows)]]
Rcpp::IntegerVector sample_rows(Rcpp::IntegerVector seed, double n, double m) {
  if (!(n >= 0 && n <= 2147483647.0 && m >= 0 && m <= n) || n != std::floor(n) ||
      m != std::floor(m)) {
    Rcpp::stop("internal: sample_rows() takes whole 0 <= m <= n < 2^31");
  }
  const std::vector<std::uint64_t> rows =
      lsnn::sample_distinct(static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(m),
                            lsnn_r::seed_from_r(seed));
  Rcpp::IntegerVector out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = static_cast<int>(rows[i] + 1);
  return out;
}
