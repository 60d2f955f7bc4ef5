// Bodies of the DistanceKernels (distance_kernels.h). Not a normal header: a
// translation unit defines LSNN_KERNEL_NAMESPACE (and, for the AVX2 build,
// LSNN_KERNEL_AVX2 plus the target pragma) and includes it once, so every
// function here is compiled for exactly one instruction set and lives in a
// namespace of its own (no two versions can be merged by the linker).
//
// The loops use GCC/Clang vector extensions of 32 bytes: one AVX register in
// the AVX2 build, a pair of SSE2 registers in the baseline build.
#ifndef LSNN_KERNEL_NAMESPACE
#error "define LSNN_KERNEL_NAMESPACE before including lsnn/distance_kernels_impl.h"
#endif

#include <Eigen/Core>

#include <cmath>
#include <cstring>

#include "distance_kernels.h"

#if defined(__SSE2__) || defined(LSNN_KERNEL_AVX2)
#include <immintrin.h>
#define LSNN_HAVE_X86_VECTORS 1
#endif

namespace lsnn {
namespace LSNN_KERNEL_NAMESPACE {

typedef float f8 __attribute__((vector_size(32)));
typedef double d4 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));

inline f8 load8(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline d4 load4(const double* p) {
  d4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline d4 load4_widen(const float* p) {
  f4 v;
  std::memcpy(&v, p, sizeof(v));
  return __builtin_convertvector(v, d4);
}
typedef std::int32_t i8 __attribute__((vector_size(32)));
typedef std::int64_t l4 __attribute__((vector_size(32)));

inline double hsum(d4 v) { return (v[0] + v[2]) + (v[1] + v[3]); }
// |v| by clearing the sign bits (portable across GCC and Clang vectors).
inline f8 vabs(f8 v) {
  i8 bits;
  std::memcpy(&bits, &v, sizeof(v));
  bits &= 0x7fffffff;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}
inline d4 vabs(d4 v) {
  l4 bits;
  std::memcpy(&bits, &v, sizeof(v));
  bits &= 0x7fffffffffffffffLL;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

inline void dot_tile(const float* A, std::size_t na, const float* B,
                     std::size_t m, std::size_t d, float* out) {
  typedef Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> RowMajorF;
  Eigen::Map<const RowMajorF> a(A, na, d);
  Eigen::Map<const RowMajorF> b(B, m, d);
  Eigen::Map<RowMajorF> o(out, na, m);
  o.noalias() = a * b.transpose();
}

// The Gram matrix of one block: the lower triangle by a symmetric rank-d
// update (about half the multiply-adds of dot_tile(A, m, A, m)), then
// mirrored.
inline void gram_tile(const float* A, std::size_t m, std::size_t d, float* out) {
  typedef Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> RowMajorF;
  Eigen::Map<const RowMajorF> a(A, m, d);
  Eigen::Map<RowMajorF> o(out, m, m);
  o.triangularView<Eigen::Lower>().setZero();
  o.selfadjointView<Eigen::Lower>().rankUpdate(a);
  // the upper triangle from the lower, in 16 x 16 blocks (a plain
  // transposing loop would read a cache line per element)
  const std::size_t B = 16;
  for (std::size_t r0 = 0; r0 < m; r0 += B) {
    const std::size_t r1 = r0 + B < m ? r0 + B : m;
    for (std::size_t c0 = r0; c0 < m; c0 += B) {
      const std::size_t c1 = c0 + B < m ? c0 + B : m;
      for (std::size_t r = r0; r < r1; ++r) {
        for (std::size_t c = c0 > r + 1 ? c0 : r + 1; c < c1; ++c) out[r * m + c] = out[c * m + r];
      }
    }
  }
}

inline void finish_sqdist_tile(const float* na, std::size_t ma, const float* nb,
                               std::size_t m, float* s) {
  const std::size_t m8 = m - m % 8;
  for (std::size_t a = 0; a < ma; ++a) {
    float* row = s + a * m;
    const f8 base = f8{} + na[a];
    for (std::size_t b = 0; b < m8; b += 8) {
      const f8 v = base + load8(nb + b) - 2.0f * load8(row + b);
      std::memcpy(row + b, &v, sizeof(v));
    }
    for (std::size_t b = m8; b < m; ++b) row[b] = na[a] + nb[b] - 2.0f * row[b];
  }
}

inline void l1_tile(const float* A, std::size_t na, const float* B,
                    std::size_t m, std::size_t d, float* out) {
  const std::size_t d8 = d - d % 8;
  // Four rows of B at a time share each load of a row of A.
  for (std::size_t a = 0; a < na; ++a) {
    const float* x = A + a * d;
    std::size_t b = 0;
    for (; b + 4 <= m; b += 4) {
      const float* y0 = B + b * d;
      const float* y1 = y0 + d;
      const float* y2 = y1 + d;
      const float* y3 = y2 + d;
      f8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
      for (std::size_t k = 0; k < d8; k += 8) {
        const f8 xv = load8(x + k);
        s0 += vabs(xv - load8(y0 + k));
        s1 += vabs(xv - load8(y1 + k));
        s2 += vabs(xv - load8(y2 + k));
        s3 += vabs(xv - load8(y3 + k));
      }
      float r[4] = {0, 0, 0, 0};
      for (int l = 0; l < 8; ++l) {
        r[0] += s0[l];
        r[1] += s1[l];
        r[2] += s2[l];
        r[3] += s3[l];
      }
      for (std::size_t k = d8; k < d; ++k) {
        r[0] += std::fabs(x[k] - y0[k]);
        r[1] += std::fabs(x[k] - y1[k]);
        r[2] += std::fabs(x[k] - y2[k]);
        r[3] += std::fabs(x[k] - y3[k]);
      }
      for (int l = 0; l < 4; ++l) out[a * m + b + l] = r[l];
    }
    for (; b < m; ++b) {
      const float* y = B + b * d;
      f8 s = {0};
      for (std::size_t k = 0; k < d8; k += 8) s += vabs(load8(x + k) - load8(y + k));
      float r = 0;
      for (int l = 0; l < 8; ++l) r += s[l];
      for (std::size_t k = d8; k < d; ++k) r += std::fabs(x[k] - y[k]);
      out[a * m + b] = r;
    }
  }
}

#if defined(LSNN_KERNEL_AVX2)
// For each 8-bit mask, its set bit positions in increasing order, and their
// number.
struct CompactionTable {
  std::uint32_t lanes[256][8];
  std::uint8_t count[256];
};
constexpr CompactionTable make_compaction_table() {
  CompactionTable t{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    unsigned c = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if (mask & (1u << bit)) t.lanes[mask][c++] = bit;
    }
    t.count[mask] = static_cast<std::uint8_t>(c);
  }
  return t;
}
constexpr CompactionTable compaction = make_compaction_table();
#endif

inline std::size_t count_at_most(const float* s, float threshold, std::size_t m) {
  std::size_t count = 0;
  std::size_t b = 0;
#if defined(LSNN_KERNEL_AVX2)
  const __m256 t = _mm256_set1_ps(threshold);
  for (; b + 8 <= m; b += 8) {
    const unsigned mask = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(s + b), t, _CMP_LE_OQ)));
    count += static_cast<std::size_t>(__builtin_popcount(mask));
  }
#endif
  for (; b < m; ++b) count += s[b] <= threshold;
  return count;
}

inline std::size_t positions_at_most(const float* s, const float* threshold,
                                     bool one_threshold, std::size_t m,
                                     std::uint32_t* pos) {
  std::size_t count = 0;
  std::size_t b = 0;
#if defined(LSNN_KERNEL_AVX2)
  const __m256 t1 = _mm256_set1_ps(threshold[0]);
  for (; b + 8 <= m; b += 8) {
    const __m256 t = one_threshold ? t1 : _mm256_loadu_ps(threshold + b);
    const unsigned mask = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(s + b), t, _CMP_LE_OQ)));
    if (mask) {
      // Compaction through a table of the set lanes of each mask (no branch
      // per lane); the store of eight stays within pos[0, m) as count <= b.
      const __m256i lanes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(compaction.lanes[mask]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(pos + count),
                          _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(b))));
      count += compaction.count[mask];
    }
  }
#elif defined(LSNN_HAVE_X86_VECTORS)
  const __m128 t1 = _mm_set1_ps(threshold[0]);
  for (; b + 4 <= m; b += 4) {
    const __m128 t = one_threshold ? t1 : _mm_loadu_ps(threshold + b);
    unsigned mask = static_cast<unsigned>(
        _mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(s + b), t)));
    while (mask) {
      pos[count++] = static_cast<std::uint32_t>(b + __builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
#endif
  for (; b < m; ++b) {
    pos[count] = static_cast<std::uint32_t>(b);
    count += s[b] <= threshold[one_threshold ? 0 : b];
  }
  return count;
}

// The exact distances accumulate in double whatever the storage type, in four
// independent lanes, so their rounding error is that of a double sum. One
// body per sum serves rows of float and of double (widened as they load).
inline d4 load4_as_double(const float* p) { return load4_widen(p); }
inline d4 load4_as_double(const double* p) { return load4(p); }

template <class T>
double sqdist(const T* x, const T* y, std::size_t d) {
  d4 s = {0, 0, 0, 0};
  std::size_t k = 0;
  for (; k + 4 <= d; k += 4) {
    const d4 t = load4_as_double(x + k) - load4_as_double(y + k);
    s += t * t;
  }
  double r = hsum(s);
  for (; k < d; ++k) {
    const double t = static_cast<double>(x[k]) - static_cast<double>(y[k]);
    r += t * t;
  }
  return r;
}

template <class T>
double dot(const T* x, const T* y, std::size_t d) {
  d4 s = {0, 0, 0, 0};
  std::size_t k = 0;
  for (; k + 4 <= d; k += 4) s += load4_as_double(x + k) * load4_as_double(y + k);
  double r = hsum(s);
  for (; k < d; ++k) r += static_cast<double>(x[k]) * static_cast<double>(y[k]);
  return r;
}

template <class T>
double l1(const T* x, const T* y, std::size_t d) {
  d4 s = {0, 0, 0, 0};
  std::size_t k = 0;
  for (; k + 4 <= d; k += 4) s += vabs(load4_as_double(x + k) - load4_as_double(y + k));
  double r = hsum(s);
  for (; k < d; ++k) r += std::fabs(static_cast<double>(x[k]) - static_cast<double>(y[k]));
  return r;
}

// A float sum in two accumulators of eight lanes (16 floats a step), then a
// fixed-order reduction: the result depends only on x, y and d.
inline float hsum(f8 v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

inline float dot_f32(const float* x, const float* y, std::size_t d) {
  f8 s0 = {0}, s1 = {0};
  std::size_t k = 0;
  for (; k + 16 <= d; k += 16) {
    s0 += load8(x + k) * load8(y + k);
    s1 += load8(x + k + 8) * load8(y + k + 8);
  }
  if (k + 8 <= d) {
    s0 += load8(x + k) * load8(y + k);
    k += 8;
  }
  float r = hsum(s0 + s1);
  for (; k < d; ++k) r += x[k] * y[k];
  return r;
}

// The number of set bits of a word: the popcnt instruction in the AVX2 build
// (every CPU with AVX2 has it; its target includes it) and wherever the
// baseline has it, else a sum of bits in parallel over the word's bytes
// (x86-64's baseline has no popcnt, and the builtin would call a library
// routine).
inline std::uint64_t popcount64(std::uint64_t x) {
#if defined(LSNN_KERNEL_AVX2) || defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
  return static_cast<std::uint64_t>(__builtin_popcountll(x));
#else
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return (x * 0x0101010101010101ULL) >> 56;
#endif
}

inline std::uint64_t hamming_pair(const std::uint64_t* x, const std::uint64_t* y, std::size_t words) {
  std::uint64_t s0 = 0, s1 = 0;
  std::size_t w = 0;
  for (; w + 2 <= words; w += 2) {
    s0 += popcount64(x[w] ^ y[w]);
    s1 += popcount64(x[w + 1] ^ y[w + 1]);
  }
  if (w < words) s0 += popcount64(x[w] ^ y[w]);
  return s0 + s1;
}

#if defined(LSNN_KERNEL_AVX2)
// The number of set bits of each byte of v: the counts of its two nibbles
// looked up in a table by a byte shuffle (Mula's method; about a third
// fewer instructions per word than popcnt on four words).
inline __m256i byte_popcounts(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(v, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  return _mm256_add_epi8(_mm256_shuffle_epi8(table, lo), _mm256_shuffle_epi8(table, hi));
}

// The sums of the 32 bytes of each of c0..c3, as four floats.
inline __m128 byte_sums(__m256i c0, __m256i c1, __m256i c2, __m256i c3) {
  const __m256i p = _mm256_add_epi64(_mm256_unpacklo_epi64(c0, c1), _mm256_unpackhi_epi64(c0, c1));
  const __m256i q = _mm256_add_epi64(_mm256_unpacklo_epi64(c2, c3), _mm256_unpackhi_epi64(c2, c3));
  const __m256i t = _mm256_add_epi64(_mm256_permute2x128_si256(p, q, 0x20), _mm256_permute2x128_si256(p, q, 0x31));
  // (each count is below 2^31: its low half as int32)
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  return _mm_cvtepi32_ps(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t, low_halves)));
}
#endif

// Four rows of B at a time share each load of a row of A. In the AVX2 build,
// four words at a time by byte_popcounts(), whose byte counts are summed
// into 64-bit lanes (_mm256_sad_epu8) every 31 vectors, before a byte can
// overflow; the last words % 4 words by popcnt.
inline void hamming_tile(const std::uint64_t* A, std::size_t na, const std::uint64_t* B,
                         std::size_t m, std::size_t words, float* out) {
  const std::size_t w4 = words - words % 4;
  for (std::size_t a = 0; a < na; ++a) {
    const std::uint64_t* x = A + a * words;
    float* row = out + a * m;
    std::size_t b = 0;
    for (; b + 4 <= m; b += 4) {
      const std::uint64_t* y0 = B + b * words;
      const std::uint64_t* y1 = y0 + words;
      const std::uint64_t* y2 = y1 + words;
      const std::uint64_t* y3 = y2 + words;
      std::size_t w = 0;
#if defined(LSNN_KERNEL_AVX2)
      __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
      while (w < w4) {
        // (no std::min: the AVX2 build instantiates no standard template)
        const std::size_t end = w4 - w > 31 * 4 ? w + 31 * 4 : w4;
        __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
        for (; w < end; w += 4) {
          const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + w));
          auto load = [w](const std::uint64_t* y) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + w)); };
          c0 = _mm256_add_epi8(c0, byte_popcounts(_mm256_xor_si256(xv, load(y0))));
          c1 = _mm256_add_epi8(c1, byte_popcounts(_mm256_xor_si256(xv, load(y1))));
          c2 = _mm256_add_epi8(c2, byte_popcounts(_mm256_xor_si256(xv, load(y2))));
          c3 = _mm256_add_epi8(c3, byte_popcounts(_mm256_xor_si256(xv, load(y3))));
        }
        const __m256i zero = _mm256_setzero_si256();
        s0 = _mm256_add_epi64(s0, _mm256_sad_epu8(c0, zero));
        s1 = _mm256_add_epi64(s1, _mm256_sad_epu8(c1, zero));
        s2 = _mm256_add_epi64(s2, _mm256_sad_epu8(c2, zero));
        s3 = _mm256_add_epi64(s3, _mm256_sad_epu8(c3, zero));
      }
      float vec[4];
      _mm_storeu_ps(vec, byte_sums(s0, s1, s2, s3));
#else
      (void)w4;
      const float vec[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#endif
      std::uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
      for (; w < words; ++w) {
        const std::uint64_t xw = x[w];
        t0 += popcount64(xw ^ y0[w]);
        t1 += popcount64(xw ^ y1[w]);
        t2 += popcount64(xw ^ y2[w]);
        t3 += popcount64(xw ^ y3[w]);
      }
      // (exact up to 2^24 bits; beyond, within two roundings to float)
      row[b] = vec[0] + static_cast<float>(t0);
      row[b + 1] = vec[1] + static_cast<float>(t1);
      row[b + 2] = vec[2] + static_cast<float>(t2);
      row[b + 3] = vec[3] + static_cast<float>(t3);
    }
    for (; b < m; ++b) row[b] = static_cast<float>(hamming_pair(x, B + b * words, words));
  }
}

// Lists are scanned eight (AVX2) or four (SSE2) entries at a time, stopping
// at the first block that holds the value (most lookups find it).
inline bool contains_index(const int* ix, std::size_t n, int value) {
  std::size_t c = 0;
#if defined(LSNN_KERNEL_AVX2)
  const __m256i target = _mm256_set1_epi32(value);
  for (; c + 8 <= n; c += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ix + c));
    if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(v, target)) != 0) return true;
  }
#elif defined(LSNN_HAVE_X86_VECTORS)
  const __m128i target = _mm_set1_epi32(value);
  for (; c + 4 <= n; c += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ix + c));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(v, target)) != 0) return true;
  }
#endif
  for (; c < n; ++c) {
    if (ix[c] == value) return true;
  }
  return false;
}

inline const DistanceKernels& distance_kernels() {
  static const DistanceKernels table = {
      &dot_tile, &gram_tile, &finish_sqdist_tile, &l1_tile, &positions_at_most, &count_at_most,
      &sqdist<float>, &sqdist<double>, &dot<float>, &dot<double>, &l1<float>, &l1<double>, &dot_f32,
      &hamming_tile, &hamming_pair, &contains_index,
#if defined(LSNN_KERNEL_AVX2)
      "avx2+fma"
#else
      "generic"
#endif
  };
  return table;
}

}  // namespace LSNN_KERNEL_NAMESPACE
}  // namespace lsnn
