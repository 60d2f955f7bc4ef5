// Which build of the core's cost kernels this process uses (as kernels.h
// does for the distance kernels).
#ifndef LSNN_R_COST_KERNELS_H
#define LSNN_R_COST_KERNELS_H

#include <lsnn/cost_kernels.h>
#include <lsnn/cpu.h>

#include <string>

namespace lsnn_r {

const lsnn::CostKernels& generic_cost_kernels();
// nullptr where the AVX2 build is not compiled (non-x86 or non-GCC).
const lsnn::CostKernels* avx2_cost_kernels();

// `simd`: "auto" or "generic", from getOption("lsnn.simd", "auto").
inline const lsnn::CostKernels& cost_kernels(const std::string& simd) {
  const lsnn::CostKernels* fast = avx2_cost_kernels();
  if (simd != "generic" && fast != nullptr && lsnn::cpu_has_avx2_fma()) return *fast;
  return generic_cost_kernels();
}

}  // namespace lsnn_r

#endif  // LSNN_R_COST_KERNELS_H
