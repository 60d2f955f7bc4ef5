// The hot loops of the kNN search, behind a table of function pointers so
// that one build carries two versions of them: the portable baseline R
// compiles with, and AVX2 + FMA, chosen at run time (see cpu.h).
//
// The bodies live in distance_kernels_impl.h, which a translation unit includes once
// per target inside its own namespace (src/kernels_generic.cpp,
// src/kernels_avx2.cpp). Algorithms take a `const DistanceKernels&` and never
// know which version they run.
#ifndef LSNN_DISTANCE_KERNELS_H
#define LSNN_DISTANCE_KERNELS_H

#include <cstddef>
#include <cstdint>

namespace lsnn {

struct DistanceKernels {
  // out[a * m + b] = <A_a, B_b> for the row-major blocks A (na x d) and
  // B (m x d): the single-precision matrix product that dominates the exact
  // search.
  void (*dot_tile)(const float* A, std::size_t na, const float* B,
                   std::size_t m, std::size_t d, float* out);
  // out[a * m + b] = <A_a, A_b> for the row-major block A (m x d), with
  // half the work of dot_tile(A, m, A, m, d, out).
  void (*gram_tile)(const float* A, std::size_t m, std::size_t d, float* out);
  // s[a * m + b] = na[a] + nb[b] - 2 s[a * m + b]: squared distances from a
  // tile of dot products and the rows' squared norms.
  void (*finish_sqdist_tile)(const float* na, std::size_t ma, const float* nb,
                             std::size_t m, float* s);
  // out[a * m + b] = sum_k |A_ak - B_bk| (manhattan tiles).
  void (*l1_tile)(const float* A, std::size_t na, const float* B,
                  std::size_t m, std::size_t d, float* out);
  // Writes to pos the positions b < m with s[b] <= threshold[b] (or
  // <= threshold[0] for every b when `one_threshold`); returns their count.
  std::size_t (*positions_at_most)(const float* s, const float* threshold,
                                   bool one_threshold, std::size_t m,
                                   std::uint32_t* pos);
  // The number of b < m with s[b] <= threshold.
  std::size_t (*count_at_most)(const float* s, float threshold, std::size_t m);
  // Exact double-precision distances between two rows stored as float or
  // double: sum (x - y)^2, sum x * y, sum |x - y|.
  double (*sqdist_f)(const float* x, const float* y, std::size_t d);
  double (*sqdist_d)(const double* x, const double* y, std::size_t d);
  double (*dot_f)(const float* x, const float* y, std::size_t d);
  double (*dot_d)(const double* x, const double* y, std::size_t d);
  double (*l1_f)(const float* x, const float* y, std::size_t d);
  double (*l1_d)(const double* x, const double* y, std::size_t d);
  // sum x * y of two float rows in single precision (the projections of
  // the approximate search's random-projection trees).
  float (*dot_f32)(const float* x, const float* y, std::size_t d);
  // Hamming distances of rows of bits packed 64 to a word (row-major, `words`
  // words a row, the bits past the last column zero): out[a * m + b] = the
  // number of bits in which A_a and B_b differ, as a float (exact up to
  // 2^24 bits), and the same count for one pair.
  void (*hamming_tile)(const std::uint64_t* A, std::size_t na, const std::uint64_t* B,
                       std::size_t m, std::size_t words, float* out);
  std::uint64_t (*hamming_pair)(const std::uint64_t* x, const std::uint64_t* y, std::size_t words);
  // Whether `value` occurs among ix[0], ..., ix[n - 1] (the approximate
  // search's neighbour lists).
  bool (*contains_index)(const int* ix, std::size_t n, int value);
  const char* name;
};

}  // namespace lsnn

#endif  // LSNN_DISTANCE_KERNELS_H
