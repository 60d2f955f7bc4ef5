// The stored rows of a RowData (distance.h, prepared_rows.h), one type per
// storage: dense rows of float (data that float represents exactly), dense
// rows of double, sparse rows, and rows of bits (0/1 data under the Hamming
// distance). PreparedRows picks the storage once, when it prepares the
// data; each type then has its own exact pair sums in double precision
// (sum (x - y)^2, sum x y and, for dense rows, sum |x - y|; for bits, the
// number that differ), its loading of a row into score space, and the
// rounding bound of its float scores, with no test of the storage in any of
// them.
//
// The stored values are the given values times the storage unit (a power of
// two, see prepared_rows.h), less the row means under correlation.
#ifndef LSNN_ROW_STORAGE_H
#define LSNN_ROW_STORAGE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "distance_kernels.h"
#include "../base/sparse.h"

namespace lsnn {

// Dense rows, row-major, as float or double.
template <class T>
class DenseRows {
 public:
  using PairSum = double (*)(const T* x, const T* y, std::size_t d);

  DenseRows() = default;
  DenseRows(std::size_t n, std::size_t d, const DistanceKernels& kernels) : d_(d), x_(n * d) {
    if constexpr (std::is_same<T, float>::value) {
      sqdist_ = kernels.sqdist_f;
      dot_ = kernels.dot_f;
      l1_ = kernels.l1_f;
    } else {
      sqdist_ = kernels.sqdist_d;
      dot_ = kernels.dot_d;
      l1_ = kernels.l1_d;
    }
  }

  void set(std::size_t i, std::size_t k, double v) { x_[i * d_ + k] = static_cast<T>(v); }
  double value(std::size_t i, std::size_t k) const { return x_[i * d_ + k]; }
  const T* data() const { return x_.data(); }

  double sqdist(std::size_t i, std::size_t j) const { return sqdist_(row(i), row(j), d_); }
  double dot(std::size_t i, std::size_t j) const { return dot_(row(i), row(j), d_); }
  double l1(std::size_t i, std::size_t j) const { return l1_(row(i), row(j), d_); }

  // Hints that a pair sum will read row i soon.
  void prefetch(std::size_t i) const {
#if defined(__GNUC__) || defined(__clang__)
    const char* p = reinterpret_cast<const char*>(row(i));
    const std::size_t bytes = d_ * sizeof(T);
    for (std::size_t b = 0; b < bytes && b < 256; b += 64) __builtin_prefetch(p + b);
#else
    (void)i;
#endif
  }

  // Row i in score space, (x - center) * factor, in single precision.
  void load_row(std::size_t i, double factor, const double* center, float* out) const {
    const T* x = row(i);
    for (std::size_t k = 0; k < d_; ++k) {
      out[k] = static_cast<float>((static_cast<double>(x[k]) - center[k]) * factor);
    }
  }

  // Bounds on |float score - exact score| for rows of score-space sizes a
  // and m (the largest), before the safety factor: the float product sums
  // of d terms are within gamma_d |a||b| of their exact values, plus the
  // rounding of the inputs and of the final additions (u, the float unit
  // roundoff). For scores from dot products (L2 sizes) and for manhattan
  // (L1 sizes).
  static double product_score_error(double a, double m, double gamma, double u) {
    return 2.0 * gamma * a * m + 5.0 * u * (a + m) * (a + m);
  }
  static double l1_score_error(double a, double m, double gamma, double u) {
    return (gamma + 2.0 * u) * (a + m);
  }

 private:
  const T* row(std::size_t i) const { return &x_[i * d_]; }

  std::size_t d_ = 0;
  std::vector<T> x_;
  PairSum sqdist_ = nullptr;
  PairSum dot_ = nullptr;
  PairSum l1_ = nullptr;
};

using FloatRows = DenseRows<float>;
using DoubleRows = DenseRows<double>;

// Sparse rows, read in place, or copied when their values must be scaled by
// the storage unit (the caller's stay as they are). No L1 sums: the sparse
// path refuses manhattan.
class StoredSparseRows {
 public:
  StoredSparseRows() = default;
  StoredSparseRows(const SparseRows& x, double unit) : rows_(x) {
    if (unit != 1.0) {
      const std::size_t nnz = x.n > 0 ? static_cast<std::size_t>(x.ptr[x.n]) : 0;
      scaled_val_.resize(nnz);
      for (std::size_t t = 0; t < nnz; ++t) scaled_val_[t] = x.val[t] * unit;
      rows_.val = scaled_val_.data();
    }
  }
  // (rows_ may point into scaled_val_: moving keeps that buffer, copying
  // would not)
  StoredSparseRows(const StoredSparseRows&) = delete;
  StoredSparseRows& operator=(const StoredSparseRows&) = delete;
  StoredSparseRows(StoredSparseRows&&) = default;
  StoredSparseRows& operator=(StoredSparseRows&&) = default;

  const SparseRows& rows() const { return rows_; }

  double sqnorm(std::size_t i) const {
    double s2 = 0.0;
    for (int p = rows_.ptr[i]; p < rows_.ptr[i + 1]; ++p) s2 += rows_.val[p] * rows_.val[p];
    return s2;
  }

  double dot(std::size_t i, std::size_t j) const {
    int p = rows_.ptr[i], pe = rows_.ptr[i + 1];
    int q = rows_.ptr[j], qe = rows_.ptr[j + 1];
    double s = 0.0;
    while (p < pe && q < qe) {
      if (rows_.col[p] < rows_.col[q]) {
        ++p;
      } else if (rows_.col[q] < rows_.col[p]) {
        ++q;
      } else {
        s += rows_.val[p++] * rows_.val[q++];
      }
    }
    return s;
  }

  double sqdist(std::size_t i, std::size_t j) const {
    int p = rows_.ptr[i], pe = rows_.ptr[i + 1];
    int q = rows_.ptr[j], qe = rows_.ptr[j + 1];
    double s = 0.0;
    while (p < pe || q < qe) {
      double t;
      if (q >= qe || (p < pe && rows_.col[p] < rows_.col[q])) {
        t = rows_.val[p++];
      } else if (p >= pe || rows_.col[q] < rows_.col[p]) {
        t = -rows_.val[q++];
      } else {
        t = rows_.val[p++] - rows_.val[q++];
      }
      s += t * t;
    }
    return s;
  }

  void prefetch(std::size_t) const {}

  // Row i in score space (the centre of sparse score space is 0): its
  // values times factor, zeros elsewhere.
  void load_row(std::size_t i, double factor, const double*, float* out) const {
    std::fill(out, out + rows_.d, 0.0f);
    for (int p = rows_.ptr[i]; p < rows_.ptr[i + 1]; ++p) {
      out[rows_.col[p]] = static_cast<float>(rows_.val[p] * factor);
    }
  }

  // As DenseRows::product_score_error(): sparse scores are summed in double
  // and rounded once to float.
  static double product_score_error(double a, double m, double, double u) {
    return 2.0 * u * (a + m) * (a + m);
  }

 private:
  SparseRows rows_{nullptr, nullptr, nullptr, 0, 0};
  std::vector<double> scaled_val_;  // the values times the unit, when it is not 1
};

// Rows of 0/1 values packed 64 to a word, row-major, `words()` words a row;
// the bits past the last column are zero, so they never differ. The exact
// score of a pair is the number of bits that differ: an integer, which the
// float tiles of hamming_tile() represent exactly up to 2^24 columns.
class BitRows {
 public:
  BitRows() = default;
  BitRows(std::size_t n, std::size_t d, const DistanceKernels& kernels)
      : d_(d), words_((d + 63) / 64), bits_(n * words_, 0), pair_(kernels.hamming_pair) {}

  // Sets column k of row i to 1.
  void set(std::size_t i, std::size_t k) {
    bits_[i * words_ + k / 64] |= std::uint64_t(1) << (k % 64);
  }
  bool value(std::size_t i, std::size_t k) const {
    return (bits_[i * words_ + k / 64] >> (k % 64)) & 1u;
  }
  std::size_t words() const { return words_; }
  const std::uint64_t* row(std::size_t i) const { return &bits_[i * words_]; }

  double hamming(std::size_t i, std::size_t j) const {
    return static_cast<double>(pair_(row(i), row(j), words_));
  }

  void prefetch(std::size_t i) const {
#if defined(__GNUC__) || defined(__clang__)
    const char* p = reinterpret_cast<const char*>(row(i));
    const std::size_t bytes = words_ * sizeof(std::uint64_t);
    for (std::size_t b = 0; b < bytes && b < 256; b += 64) __builtin_prefetch(p + b);
#else
    (void)i;
#endif
  }

  // Row i as 0/1 floats, whose squared distances are the Hamming counts
  // (the searches score bits with hamming_tile() instead; this serves any
  // caller that asks for float rows).
  void load_row(std::size_t i, double, const double*, float* out) const {
    for (std::size_t k = 0; k < d_; ++k) out[k] = value(i, k) ? 1.0f : 0.0f;
  }

 private:
  std::size_t d_ = 0;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> bits_;
  std::uint64_t (*pair_)(const std::uint64_t*, const std::uint64_t*, std::size_t) = nullptr;
};

}  // namespace lsnn

#endif  // LSNN_ROW_STORAGE_H
