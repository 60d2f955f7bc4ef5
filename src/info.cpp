// Small entry points about the machine and the kernels lsnn runs on it.
#include <Rcpp.h>

#include <chrono>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <vector>

#include "kernel_choice.h"
#include "r_executor.h"

// [[Rcpp::export(.simd_kernels)]]
std::string simd_kernels(std::string simd) {
  return lsnn_r::distance_kernels(simd).name;
}

// The machine's single-precision matrix-product rate through the same
// kernel the exact search uses: every thread multiplies its own m x d block
// by the transpose of its own 4m x d block, `reps` times. Returns
// multiply-adds per second (the floor of the exact search is
// n^2 d / this rate).
// [[Rcpp::export(.float_gemm_rate)]]
double float_gemm_rate(int m, int d, int reps, int n_threads, std::string simd) {
  const lsnn::DistanceKernels& kern = lsnn_r::distance_kernels(simd);
  lsnn_r::RExecutor executor(n_threads, false);
  const std::size_t mm = static_cast<std::size_t>(m), dd = static_cast<std::size_t>(d);
  const std::size_t threads = executor.n_threads();
  auto start = std::chrono::steady_clock::now();
  executor.parallel_for(0, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      std::vector<float> a(mm * dd), b(4 * mm * dd), out(4 * mm * mm);
      for (std::size_t e = 0; e < a.size(); ++e) a[e] = static_cast<float>((e * 7919) % 255);
      for (std::size_t e = 0; e < b.size(); ++e) b[e] = static_cast<float>((e * 104729) % 255);
      for (int r = 0; r < reps; ++r) kern.dot_tile(a.data(), mm, b.data(), 4 * mm, dd, out.data());
    }
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(threads) * reps * 4.0 * mm * mm * dd / seconds;
}

// Gives the C heap's free memory back to the system where the C library can
// (glibc keeps what the threads of a search freed in their own arenas,
// which the resident size of a long layout would otherwise carry).
// [[Rcpp::export(.trim_heap)]]
void trim_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// What the C heap holds, in MB: `in_use` (allocated from its arenas),
// `free` (freed there but kept from the system), `mapped` (blocks mapped on
// their own); NA where the C library does not say. For the bench's
// accounting of a large layout's memory.
// [[Rcpp::export(.heap_mb)]]
Rcpp::NumericVector heap_mb() {
  double in_use = NA_REAL, free = NA_REAL, mapped = NA_REAL;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  const double mb = 1024.0 * 1024.0;
  in_use = static_cast<double>(m.uordblks) / mb;
  free = static_cast<double>(m.fordblks) / mb;
  mapped = static_cast<double>(m.hblkhd) / mb;
#endif
  return Rcpp::NumericVector::create(Rcpp::_["in_use"] = in_use, Rcpp::_["free"] = free,
                                     Rcpp::_["mapped"] = mapped);
}
