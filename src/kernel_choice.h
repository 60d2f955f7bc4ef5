// Which build of the core's vector kernels (distance, cost and PCA tables) this
// process uses.
#ifndef LSNN_R_KERNEL_CHOICE_H
#define LSNN_R_KERNEL_CHOICE_H

#include <lsnn/embed/cost_kernels.h>
#include <lsnn/base/cpu.h>
#include <lsnn/knn/distance_kernels.h>
#include <lsnn/pca/pca_kernels.h>

#include <string>

namespace lsnn_r {

const lsnn::DistanceKernels& generic_distance_kernels();
const lsnn::CostKernels& generic_cost_kernels();
// nullptr where the AVX2 build is not compiled (non-x86 or non-GCC).
const lsnn::DistanceKernels* avx2_distance_kernels();
const lsnn::CostKernels* avx2_cost_kernels();
const lsnn::PcaKernels& generic_pca_kernels();
const lsnn::PcaKernels* avx2_pca_kernels();

// `simd` is "auto" (the best the CPU runs) or "generic" (the baseline, for
// tests and comparisons); R passes getOption("lsnn.simd", "auto").
template <typename Table>
const Table& pick_kernels(const std::string& simd, const Table* fast, const Table& baseline) {
  if (simd != "generic" && fast != nullptr && lsnn::cpu_has_avx2_fma_popcnt()) return *fast;
  return baseline;
}

inline const lsnn::DistanceKernels& distance_kernels(const std::string& simd) {
  return pick_kernels(simd, avx2_distance_kernels(), generic_distance_kernels());
}

inline const lsnn::CostKernels& cost_kernels(const std::string& simd) {
  return pick_kernels(simd, avx2_cost_kernels(), generic_cost_kernels());
}

inline const lsnn::PcaKernels& pca_kernels(const std::string& simd) {
  return pick_kernels(simd, avx2_pca_kernels(), generic_pca_kernels());
}

}  // namespace lsnn_r

#endif  // LSNN_R_KERNEL_CHOICE_H
