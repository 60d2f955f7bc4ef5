// Which build of the core's vector kernels this process uses.
#ifndef LSNN_R_KERNELS_H
#define LSNN_R_KERNELS_H

#include <lsnn/cpu.h>
#include <lsnn/kernels.h>

#include <string>

namespace lsnn_r {

const lsnn::DistanceKernels& generic_distance_kernels();
// nullptr where the AVX2 build is not compiled (non-x86 or non-GCC).
const lsnn::DistanceKernels* avx2_distance_kernels();

// `simd` is "auto" (the best the CPU runs) or "generic" (the baseline, for
// tests and comparisons); R passes getOption("lsnn.simd", "auto").
inline const lsnn::DistanceKernels& distance_kernels(const std::string& simd) {
  const lsnn::DistanceKernels* fast = avx2_distance_kernels();
  if (simd != "generic" && fast != nullptr && lsnn::cpu_has_avx2_fma()) return *fast;
  return generic_distance_kernels();
}

}  // namespace lsnn_r

#endif  // LSNN_R_KERNELS_H
