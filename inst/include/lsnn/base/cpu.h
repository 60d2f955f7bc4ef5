// Run-time detection of the vector units the hot kernels can use.
//
// R builds packages with portable flags (-O2, SSE2 on x86-64), so the
// kernels are compiled twice: once for that baseline and once for AVX2 + FMA
// (see src/kernels_avx2.cpp), whose target also has POPCNT (the Hamming
// distances; every CPU with AVX2 has it, but it has a feature bit of its
// own). This header decides, once per process, which of the two the running
// CPU can execute.
#ifndef LSNN_CPU_H
#define LSNN_CPU_H

namespace lsnn {

inline bool cpu_has_avx2_fma_popcnt() {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                           __builtin_cpu_supports("popcnt");
  return has;
#else
  return false;
#endif
}

}  // namespace lsnn

#endif  // LSNN_CPU_H
