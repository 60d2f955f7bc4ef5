// The preparation of the rows every search reads (RowData, distance.h):
// the choice of their storage (row_storage.h), the norms, the centre and
// scale of score space, the error bounds of the float scores, and the exact
// score of a pair for the chosen (storage, metric).
//
// Score space: euclidean, the squared distance of rows shifted by the column
// means and scaled by a power of two (both exact in double and cancelling in
// differences, they keep |x|^2 small next to the distances it is compared
// with); cosine and correlation, 2 - 2 cos (the squared distance of unit
// rows); manhattan, the L1 distance of shifted and scaled rows; hamming, the
// number of columns that differ, counted on rows of 0/1 values packed 64 to
// a word (the reported distance is that number over the number of columns,
// as rnndescent and pynndescent report it). Hamming scores are whole numbers,
// exact in float up to 2^24 columns: their error bound is 0 and the
// searches' candidate lists, kept by (score, row number), are then exact as
// they stand, ties included.
//
// Data of extreme magnitude (largest |value| beyond 2^250 or below 2^-250,
// where squared distances would overflow or underflow in double) are stored
// multiplied by a power of two that brings the largest value near 1: exact,
// like the other scalings, and undone when distances are reported, so every
// finite input gives finite, correct distances. Non-finite input is refused.
#ifndef LSNN_PREPARED_ROWS_H
#define LSNN_PREPARED_ROWS_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "distance_kernels.h"
#include "row_storage.h"
#include "../base/sparse.h"

namespace lsnn {

enum class Metric { euclidean, cosine, correlation, manhattan, hamming };

inline Metric parse_metric(const std::string& name) {
  if (name == "euclidean") return Metric::euclidean;
  if (name == "cosine") return Metric::cosine;
  if (name == "correlation") return Metric::correlation;
  if (name == "manhattan") return Metric::manhattan;
  if (name == "hamming") return Metric::hamming;
  throw std::invalid_argument("unknown metric '" + name + "'");
}

// A dense matrix as R stores it: column-major, n rows, d columns.
struct DenseColumnMajor {
  const double* data;
  std::size_t n;
  std::size_t d;
};

// A matrix of 0/1 values as R stores it (column-major, n rows, d columns):
// logical or integer values (`ints`, TRUE = 1) or, when `ints` is null,
// doubles. The rows of the Hamming distance.
struct BinaryColumnMajor {
  const int* ints;
  const double* doubles;
  std::size_t n;
  std::size_t d;
};

inline double power_of_two_at_most(double x) {
  if (!(x > 0.0) || !std::isfinite(x)) return 1.0;
  int e;
  std::frexp(x, &e);
  return std::ldexp(1.0, e - 1);
}

// The largest |value|; throws on NA, NaN or infinite values.
inline double largest_abs(const double* v, std::size_t count) {
  double biggest = 0.0;
  for (std::size_t t = 0; t < count; ++t) {
    const double a = std::fabs(v[t]);
    if (!(a <= std::numeric_limits<double>::max())) {
      throw std::invalid_argument("the data contain NA, NaN or infinite values");
    }
    biggest = std::max(biggest, a);
  }
  return biggest;
}

// The power of two the values are stored multiplied by: 1 unless the
// largest |value| is beyond 2^250 or below 2^-250 (then it becomes about
// 1).
inline double unit_of_largest(double biggest) {
  const double big = std::ldexp(1.0, 250), small = std::ldexp(1.0, -250);
  if (biggest == 0.0 || (biggest <= big && biggest >= small)) return 1.0;
  int e;
  std::frexp(biggest, &e);  // biggest in [2^(e-1), 2^e)
  // (at most 2^1000, a double, for subnormal data: they then end near
  // 2^-70, as good for squaring)
  return std::ldexp(1.0, std::min(1 - e, 1000));
}

inline double storage_unit(const double* v, std::size_t count) {
  return unit_of_largest(largest_abs(v, count));
}

// The rows prepared once for a metric: their storage (dense float, dense
// double, sparse or bits, chosen here once), the norms, the centre and
// scale of score space and the error bounds of the float scores. The
// exact score of a pair goes through a function chosen with the storage,
// one per (storage, metric), so no per-pair code tests the storage.
// RowData reads them; only it builds one.
class PreparedRows {
 protected:
  PreparedRows(Metric metric, const DistanceKernels& kernels, std::size_t n, std::size_t d)
      : metric_(metric), kernels_(&kernels), n_(n), d_(d) {}

  using PairScore = double (*)(const PreparedRows& data, std::size_t i, std::size_t j);
  using ScoreError = double (*)(double a, double m, double gamma, double u);

  // The exact score of one (storage, metric); correlation is cosine of the
  // row-centred rows.
  template <class Stored, Metric M>
  static double score_pair(const PreparedRows& data, std::size_t i, std::size_t j) {
    const Stored& rows = *std::get_if<Stored>(&data.storage_);
    if constexpr (M == Metric::hamming) {
      return rows.hamming(i, j);
    } else if constexpr (M == Metric::euclidean) {
      return rows.sqdist(i, j) * (data.scale_ * data.scale_);
    } else if constexpr (M == Metric::manhattan) {
      return rows.l1(i, j) * data.scale_;
    } else {
      const double ni = data.norm_[i], nj = data.norm_[j];
      if (ni == 0.0 || nj == 0.0) return (ni == 0.0 && nj == 0.0) ? 0.0 : 2.0;
      double c = rows.dot(i, j) / (ni * nj);
      c = std::min(1.0, std::max(-1.0, c));
      return 2.0 - 2.0 * c;
    }
  }

  template <class Stored>
  static PairScore dense_pair_score(Metric metric) {
    switch (metric) {
      case Metric::euclidean: return &score_pair<Stored, Metric::euclidean>;
      case Metric::cosine:
      case Metric::correlation: return &score_pair<Stored, Metric::cosine>;
      case Metric::manhattan: return &score_pair<Stored, Metric::manhattan>;
      case Metric::hamming: break;  // (rows of bits, prepare_bits())
    }
    return nullptr;
  }

  bool unit_rows() const {
    return metric_ == Metric::cosine || metric_ == Metric::correlation;
  }

  // Dense rows, once: the storage unit, the storage, the row-major copy, the
  // norms, the centre and the scale of score space, and the error bounds.
  void prepare_dense(const std::vector<DenseColumnMajor>& parts) {
    if (metric_ == Metric::hamming) {
      std::vector<BinaryColumnMajor> binary;
      for (const DenseColumnMajor& p : parts) binary.push_back({nullptr, p.data, p.n, p.d});
      prepare_bits(binary);
      return;
    }
    if (d_ != 0 && n_ > std::numeric_limits<std::size_t>::max() / d_) {
      throw std::length_error("the data matrix is too large");
    }
    double biggest = 0.0;
    for (const DenseColumnMajor& x : parts) biggest = std::max(biggest, largest_abs(x.data, x.n * d_));
    unit_ = unit_of_largest(biggest);
    // Correlation is cosine of rows centred on their means, computed once in
    // double; everything else keeps the values as given.
    const std::vector<double> row_mean =
        metric_ == Metric::correlation ? row_means(parts) : std::vector<double>();
    // Data that float represents exactly (pixel intensities, counts) is
    // stored as float, halving the memory the search needs and feeding the
    // matrix products without conversion.
    if (metric_ != Metric::correlation && float_exact(parts)) {
      prepare_dense_rows(storage_.emplace<FloatRows>(n_, d_, *kernels_), parts, row_mean);
    } else {
      prepare_dense_rows(storage_.emplace<DoubleRows>(n_, d_, *kernels_), parts, row_mean);
    }
  }

  template <class T>
  void prepare_dense_rows(DenseRows<T>& rows, const std::vector<DenseColumnMajor>& parts,
                          const std::vector<double>& row_mean) {
    store_rows(rows, parts, row_mean);
    const double biggest_norm = set_norms(rows);
    // Euclidean distances of float-exact data are scored straight from the
    // stored rows, with no per-tile conversion (the price is a looser error
    // bound without centring, which the exactness proof absorbs), as long as
    // squared norms stay far from float overflow and underflow.
    direct_ = std::is_same<T, float>::value && metric_ == Metric::euclidean && biggest_norm < 1e15 &&
              (biggest_norm == 0.0 || biggest_norm > 1e-15);
    center_.assign(d_, 0.0);
    if (!unit_rows() && !direct_) set_column_means(parts);
    finish_tolerance(score_sizes(rows), metric_ == Metric::manhattan ? &DenseRows<T>::l1_score_error
                                                                      : &DenseRows<T>::product_score_error);
    if (direct_) {
      sqnorm_direct_.resize(n_);
      for (std::size_t i = 0; i < n_; ++i) sqnorm_direct_[i] = static_cast<float>(norm_[i] * norm_[i]);
    }
    exact_score_ = dense_pair_score<DenseRows<T>>(metric_);
  }

  // The mean of every stored row (values times unit_).
  std::vector<double> row_means(const std::vector<DenseColumnMajor>& parts) const {
    std::vector<double> mean(n_, 0.0);
    std::size_t first = 0;
    for (const DenseColumnMajor& x : parts) {
      for (std::size_t k = 0; k < d_; ++k) {
        const double* col = x.data + k * x.n;
        for (std::size_t i = 0; i < x.n; ++i) mean[first + i] += col[i] * unit_;
      }
      first += x.n;
    }
    for (double& m : mean) m /= static_cast<double>(d_);
    return mean;
  }

  // Whether every value times unit_ is a float.
  bool float_exact(const std::vector<DenseColumnMajor>& parts) const {
    for (const DenseColumnMajor& x : parts) {
      for (std::size_t t = 0; t < x.n * d_; ++t) {
        const double v = x.data[t] * unit_;
        if (static_cast<double>(static_cast<float>(v)) != v) return false;
      }
    }
    return true;
  }

  // The row-major copy, values times unit_, less the row means when given.
  // The transposition goes by blocks of 64 rows, whose output lines stay in
  // cache while every column fills them (a column at a time over all rows
  // would touch a new cache line with every value).
  template <class T>
  void store_rows(DenseRows<T>& rows, const std::vector<DenseColumnMajor>& parts,
                  const std::vector<double>& row_mean) const {
    const std::size_t rows_per_block = 64;
    std::size_t first = 0;
    for (const DenseColumnMajor& x : parts) {
      for (std::size_t i0 = 0; i0 < x.n; i0 += rows_per_block) {
        const std::size_t i1 = std::min(x.n, i0 + rows_per_block);
        for (std::size_t k = 0; k < d_; ++k) {
          const double* col = x.data + k * x.n;
          for (std::size_t i = i0; i < i1; ++i) {
            const std::size_t r = first + i;
            rows.set(r, k, row_mean.empty() ? col[i] * unit_ : col[i] * unit_ - row_mean[r]);
          }
        }
      }
      first += x.n;
    }
  }

  // The L2 norm of every stored row; returns the largest.
  template <class T>
  double set_norms(const DenseRows<T>& rows) {
    norm_.assign(n_, 0.0);
    double biggest_norm = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      double r2 = 0.0;
      for (std::size_t k = 0; k < d_; ++k) {
        const double v = rows.value(i, k);
        r2 += v * v;
      }
      norm_[i] = std::sqrt(r2);
      biggest_norm = std::max(biggest_norm, norm_[i]);
    }
    return biggest_norm;
  }

  // The centre of score space: the column means of the values times unit_.
  void set_column_means(const std::vector<DenseColumnMajor>& parts) {
    for (std::size_t k = 0; k < d_; ++k) {
      double s = 0.0;
      for (const DenseColumnMajor& x : parts) {
        const double* col = x.data + k * x.n;
        for (std::size_t i = 0; i < x.n; ++i) s += col[i] * unit_;
      }
      center_[k] = s / static_cast<double>(n_);
    }
  }

  // Row sizes in score space before scaling (L2, or L1 for manhattan), for
  // the scale and the tolerance.
  template <class T>
  std::vector<double> score_sizes(const DenseRows<T>& rows) const {
    std::vector<double> size(n_, 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      double s2 = 0.0, s1 = 0.0;
      for (std::size_t k = 0; k < d_; ++k) {
        const double c = rows.value(i, k) - center_[k];
        s2 += c * c;
        s1 += std::fabs(c);
      }
      size[i] = metric_ == Metric::manhattan ? s1 : std::sqrt(s2);
    }
    return size;
  }

  // 0/1 rows, once: packed 64 columns to a word, by blocks of 64 rows as
  // store_rows() copies dense ones. Their scores are exact up to 2^24
  // columns (tolerance 0); beyond, a count of up to d columns reaches float
  // within two roundings, 2 d 2^-24, doubled for safety.
  void prepare_bits(const std::vector<BinaryColumnMajor>& parts) {
    BitRows& rows = storage_.emplace<BitRows>(n_, d_, *kernels_);
    std::size_t first = 0;
    for (const BinaryColumnMajor& x : parts) {
      if (x.ints != nullptr) {
        pack_bits(x.ints, x.n, first, rows);
      } else {
        pack_bits(x.doubles, x.n, first, rows);
      }
      first += x.n;
    }
    const double exact_limit = std::ldexp(1.0, 24);
    exact_scores_ = static_cast<double>(d_) <= exact_limit;
    tolerance_.assign(n_, exact_scores_ ? 0.0 : 4.0 * static_cast<double>(d_) / exact_limit);
    center_.assign(d_, 0.0);
    exact_score_ = &score_pair<BitRows, Metric::hamming>;
  }

  template <class T>
  void pack_bits(const T* values, std::size_t n, std::size_t first, BitRows& rows) const {
    const std::size_t rows_per_block = 64;
    for (std::size_t i0 = 0; i0 < n; i0 += rows_per_block) {
      const std::size_t i1 = std::min(n, i0 + rows_per_block);
      for (std::size_t k = 0; k < d_; ++k) {
        const T* col = values + k * n;
        for (std::size_t i = i0; i < i1; ++i) {
          if (col[i] == T(1)) {
            rows.set(first + i, k);
          } else if (!(col[i] == T(0))) {
            throw std::invalid_argument("metric = \"hamming\" takes data of 0 and 1 (or FALSE and TRUE) only");
          }
        }
      }
    }
  }

  void prepare_sparse(const StoredSparseRows& rows) {
    center_.assign(d_, 0.0);
    norm_.assign(n_, 0.0);
    std::vector<double> size(n_, 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      norm_[i] = std::sqrt(rows.sqnorm(i));
      size[i] = norm_[i];
    }
    finish_tolerance(size, &StoredSparseRows::product_score_error);
    sqnorm_sparse_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) sqnorm_sparse_[i] = norm_[i] * norm_[i] * scale_ * scale_;
    exact_score_ = metric_ == Metric::euclidean ? &score_pair<StoredSparseRows, Metric::euclidean>
                                                : &score_pair<StoredSparseRows, Metric::cosine>;
  }

  // The scale of score space and every row's tolerance. `size` is each
  // row's norm in score space before scaling (L2, or L1 for manhattan);
  // `error` the storage's bound for rows of scaled sizes a and m.
  void finish_tolerance(const std::vector<double>& size, ScoreError error) {
    const double u = std::ldexp(1.0, -24);  // float unit roundoff
    const double dd = static_cast<double>(std::max<std::size_t>(d_, 1));
    const double gamma = dd * u / (1.0 - dd * u);
    tolerance_.assign(n_, 0.0);
    if (unit_rows()) {
      scale_ = 1.0;
      // Unit rows, |a| = |b| = 1 (zero rows have a = 0, dot exactly 0).
      const double t = error(1.0, 1.0, gamma, u);
      for (std::size_t i = 0; i < n_; ++i) tolerance_[i] = 2.0 * t;
      return;
    }
    double biggest = 0.0;
    for (double s : size) biggest = std::max(biggest, s);
    scale_ = direct_ ? 1.0 : 1.0 / power_of_two_at_most(biggest);
    const double m = biggest * scale_;
    for (std::size_t i = 0; i < n_; ++i) tolerance_[i] = 2.0 * error(size[i] * scale_, m, gamma, u);
  }

  Metric metric_;
  const DistanceKernels* kernels_;
  std::size_t n_, d_;
  std::variant<FloatRows, DoubleRows, StoredSparseRows, BitRows> storage_;
  PairScore exact_score_ = nullptr;  // score_pair() of the storage and metric
  bool direct_ = false;  // float rows in score space as stored (scale 1, no centre)
  bool exact_scores_ = false;  // float scores equal the exact ones (see exact_scores())
  std::vector<float> sqnorm_direct_;
  std::vector<double> center_;
  std::vector<double> norm_;  // L2 norm of each stored row (row-centred for correlation)
  std::vector<double> sqnorm_sparse_;
  std::vector<double> tolerance_;
  double scale_ = 1.0;
  double unit_ = 1.0;  // stored values = given values * unit_ (a power of two)
};

}  // namespace lsnn

#endif  // LSNN_PREPARED_ROWS_H
