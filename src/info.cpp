#include <Rcpp.h>

#include "kernels.h"

// [[Rcpp::export(.simd_kernels)]]
std::string simd_kernels(std::string simd) {
  return lsnn_r::distance_kernels(simd).name;
}
