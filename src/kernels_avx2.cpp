// The AVX2 + FMA build of the vector kernels (distance, cost and PCA tables),
// with POPCNT for the Hamming distances, selected at run time when the CPU
// has those units (kernel_choice.h). Flags such as -mavx2 cannot go in
// Makevars (they are not portable), so the target is set with a pragma:
//  - every standard header is included first, and the kernels instantiate
//    no standard template, so nothing of the standard library is compiled
//    for AVX2 (the linker could otherwise pick that copy for the whole
//    library; `nm -C kernels_avx2.o | grep ' W '` lists only lsnn's and
//    the renamed Eigen's symbols);
//  - g++ does not update the ISA macros under `#pragma GCC target`, so they
//    are defined by hand for Eigen to select its AVX code paths;
//  - Eigen is renamed for this file, so its AVX2 instantiations can never be
//    merged with the baseline ones.
#include "kernel_choice.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <iostream>
#include <istream>
#include <limits>
#include <new>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#pragma GCC push_options
#pragma GCC target("avx2,fma,popcnt")
#ifndef __AVX__
#define __AVX__ 1
#endif
#ifndef __AVX2__
#define __AVX2__ 1
#endif
#ifndef __FMA__
#define __FMA__ 1
#endif
#ifndef __SSE3__
#define __SSE3__ 1
#endif
#ifndef __SSSE3__
#define __SSSE3__ 1
#endif
#ifndef __SSE4_1__
#define __SSE4_1__ 1
#endif
#ifndef __SSE4_2__
#define __SSE4_2__ 1
#endif
#ifndef __POPCNT__
#define __POPCNT__ 1
#endif
#define Eigen lsnn_avx2_Eigen
#define LSNN_KERNEL_NAMESPACE avx2
#define LSNN_KERNEL_AVX2 1
#include <lsnn/embed/cost_kernels_impl.h>
#include <lsnn/knn/distance_kernels_impl.h>
#include <lsnn/pca/pca_kernels_impl.h>
#pragma GCC pop_options

namespace lsnn_r {
const lsnn::DistanceKernels* avx2_distance_kernels() {
  return &lsnn::avx2::distance_kernels();
}
const lsnn::CostKernels* avx2_cost_kernels() { return &lsnn::avx2::cost_kernels(); }
const lsnn::PcaKernels* avx2_pca_kernels() { return &lsnn::avx2::pca_kernels(); }
}  // namespace lsnn_r

#else

namespace lsnn_r {
const lsnn::DistanceKernels* avx2_distance_kernels() { return nullptr; }
const lsnn::CostKernels* avx2_cost_kernels() { return nullptr; }
const lsnn::PcaKernels* avx2_pca_kernels() { return nullptr; }
}  // namespace lsnn_r

#endif
