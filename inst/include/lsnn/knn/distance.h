// Metrics and the prepared rows that every neighbour search reads.
//
// A search needs two views of the data:
//  - exact distances between two rows, in double precision, from the data as
//    the user gave it (these are the distances lsnn reports);
//  - fast single-precision "scores" of whole blocks of rows, through matrix
//    products, to find candidates. A score is monotone in the distance and
//    differs from its exact value by at most `score_tolerance(i)`, a bound
//    derived from the float rounding model; searches use it to prove that
//    the candidates they keep contain the true neighbours (exact_knn.h).
//
// Score space, the storage and the bounds are set when the rows are prepared
// (prepared_rows.h).
#ifndef LSNN_DISTANCE_H
#define LSNN_DISTANCE_H

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
#include "prepared_rows.h"
#include "row_storage.h"
#include "../base/sparse.h"

namespace lsnn {

// A set of rows: the range [begin, begin + count), or the rows ids[0, count).
struct RowSet {
  const int* ids;
  std::size_t begin;
  std::size_t count;

  static RowSet range(std::size_t begin, std::size_t end) { return {nullptr, begin, end - begin}; }
  static RowSet list(const int* ids, std::size_t count) { return {ids, 0, count}; }
  std::size_t operator[](std::size_t r) const {
    return ids ? static_cast<std::size_t>(ids[r]) : begin + r;
  }
  bool operator==(const RowSet& o) const {
    return ids == o.ids && begin == o.begin && count == o.count;
  }
};

// The prepared rows (prepared_rows.h) as every search reads them: exact
// scores and distances, rows loaded into score space, and the error bounds
// of the float scores. Every block function dispatches on the storage once
// per call, so no per-pair or per-row code tests the storage.
class RowData : private PreparedRows {
 public:
  RowData(const DenseColumnMajor& x, Metric metric, const DistanceKernels& kernels)
      : PreparedRows(metric, kernels, x.n, x.d) {
    prepare_dense({x});
  }

  // The rows of several matrices with the same columns, stacked in order
  // (reference rows over query rows, say), without copying them together.
  RowData(const std::vector<DenseColumnMajor>& parts, Metric metric, const DistanceKernels& kernels)
      : PreparedRows(metric, kernels, 0, parts.empty() ? 0 : parts[0].d) {
    for (const DenseColumnMajor& p : parts) {
      if (p.d != d_) throw std::invalid_argument("the stacked matrices must have the same columns");
      n_ += p.n;
    }
    prepare_dense(parts);
  }

  // 0/1 rows for metric = hamming, stacked in order as above.
  RowData(const std::vector<BinaryColumnMajor>& parts, Metric metric, const DistanceKernels& kernels)
      : PreparedRows(metric, kernels, 0, parts.empty() ? 0 : parts[0].d) {
    if (metric != Metric::hamming) throw std::invalid_argument("0/1 rows are read for metric = \"hamming\" only");
    for (const BinaryColumnMajor& p : parts) {
      if (p.d != d_) throw std::invalid_argument("the stacked matrices must have the same columns");
      n_ += p.n;
    }
    prepare_bits(parts);
  }

  RowData(const SparseRows& x, Metric metric, const DistanceKernels& kernels)
      : PreparedRows(metric, kernels, x.n, x.d) {
    if (metric != Metric::euclidean && metric != Metric::cosine) {
      throw std::invalid_argument(
          "the sparse path supports metric = \"euclidean\" or \"cosine\"; "
          "convert the data with as.matrix() for other metrics");
    }
    const std::size_t nnz = n_ > 0 ? static_cast<std::size_t>(x.ptr[n_]) : 0;
    unit_ = storage_unit(x.val, nnz);
    prepare_sparse(storage_.emplace<StoredSparseRows>(x, unit_));
  }

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  Metric metric() const { return metric_; }
  bool sparse() const { return std::holds_alternative<StoredSparseRows>(storage_); }
  // The rows as bits (metric = hamming), else null: scored by
  // hamming_tile() and hamming_pair().
  const BitRows* bit_rows() const { return std::get_if<BitRows>(&storage_); }
  // Whether the float scores equal the exact scores (Hamming counts up to
  // 2^24 columns), so that lists kept by (float score, row number) rank
  // their rows as the exact distances do, ties included.
  bool exact_scores() const { return exact_scores_; }
  const DistanceKernels& kernels() const { return *kernels_; }

  // The reported distance for a score-space value computed by exact_score()
  // (infinite only when the distance itself exceeds the double range).
  double distance_from_exact_score(double score) const {
    switch (metric_) {
      case Metric::euclidean: return std::sqrt(score / (scale_ * scale_)) / unit_;
      case Metric::cosine:
      case Metric::correlation: return 0.5 * score;
      case Metric::manhattan: return score / scale_ / unit_;
      case Metric::hamming: return score / static_cast<double>(d_);
    }
    return score;
  }

  // Candidates sorted by (exact score, row number), their first `count`
  // turned into (reported distance, row number) in that order, the order
  // every graph reports. Two scores a few ulps apart can round to one
  // distance (a square root halves the digits that tell them apart), and
  // such a tie then goes by row number. The conversion never reverses two
  // scores, so only runs of equal distances move.
  void report_distances(std::vector<std::pair<double, int>>& cand, std::size_t count) const {
    count = std::min(count, cand.size());
    for (std::size_t c = 0; c < count; ++c) cand[c].first = distance_from_exact_score(cand[c].first);
    for (std::size_t c = 1; c < count; ++c) {
      for (std::size_t t = c; t > 0 && cand[t].first == cand[t - 1].first &&
                              cand[t].second < cand[t - 1].second;
           --t) {
        std::swap(cand[t], cand[t - 1]);
      }
    }
  }

  // A score no pair at `distance` or nearer exceeds: the inverse of
  // distance_from_exact_score(), raised by a relative 1e-9 for the rounding
  // of both conversions (a distance found in another RowData of the same
  // rows converts to a score within a few ulps of the one computed here).
  double score_bound_of_distance(double distance) const {
    double score = distance;
    switch (metric_) {
      case Metric::euclidean: score = (distance * unit_ * scale_) * (distance * unit_ * scale_); break;
      case Metric::cosine:
      case Metric::correlation: score = 2.0 * distance; break;
      case Metric::manhattan: score = distance * unit_ * scale_; break;
      case Metric::hamming: score = distance * static_cast<double>(d_); break;
    }
    return score * (1.0 + 1e-9);
  }

  // The exact score of rows i and j in double precision from the data as
  // given (the scale is a power of two, so multiplying by it is exact).
  double exact_score(std::size_t i, std::size_t j) const { return exact_score_(*this, i, j); }

  // Hints that exact_score(., i) will read row i soon (dense data).
  void prefetch_row(std::size_t i) const {
    std::visit([i](const auto& rows) { rows.prefetch(i); }, storage_);
  }

  double exact_distance(std::size_t i, std::size_t j) const {
    return distance_from_exact_score(exact_score(i, j));
  }

  // Rows `rows` transformed to score space in single precision, row-major
  // into out (rows.count x d), with the float rows' squared norms (as used
  // in score = |a|^2 + |b|^2 - 2 a.b) into sqnorm. (Searches score sparse
  // rows with sparse_score_tile() instead.)
  void load_rows(const RowSet& rows, float* out, float* sqnorm) const {
    std::visit([&](const auto& stored) { load_rows_from(stored, rows, out, sqnorm); }, storage_);
  }

  // All rows already in score space, when the data allows scoring straight
  // from storage (else nullptr: use load_rows), and their squared norms.
  const float* direct_rows() const {
    return direct_ ? std::get<FloatRows>(storage_).data() : nullptr;
  }
  const float* direct_sqnorms() const { return sqnorm_direct_.data(); }

  // Scores of sparse rows `a` against `b`, row-major into out, accumulated
  // in double through a dense scratch row (length d, all zero).
  void sparse_score_tile(const RowSet& a, const RowSet& b, double* scratch, float* out) const {
    const SparseRows& x = std::get<StoredSparseRows>(storage_).rows();
    for (std::size_t r = 0; r < a.count; ++r) {
      const std::size_t i = a[r];
      for (int p = x.ptr[i]; p < x.ptr[i + 1]; ++p) {
        scratch[x.col[p]] = x.val[p] * row_factor(i);
      }
      const double ni = score_sqnorm(i);
      for (std::size_t c = 0; c < b.count; ++c) {
        const std::size_t j = b[c];
        double dot = 0.0;
        for (int p = x.ptr[j]; p < x.ptr[j + 1]; ++p) {
          dot += scratch[x.col[p]] * x.val[p];
        }
        dot *= row_factor(j);
        out[r * b.count + c] = static_cast<float>(ni + score_sqnorm(j) - 2.0 * dot);
      }
      for (int p = x.ptr[i]; p < x.ptr[i + 1]; ++p) scratch[x.col[p]] = 0.0;
    }
  }

  // Bound on |float score(i, j) - exact_score(i, j)| for every j, from the
  // standard model of floating-point arithmetic (see the storages'
  // *_score_error()), doubled for safety.
  double score_tolerance(std::size_t i) const { return tolerance_[i]; }

  // Rows whose float scores cannot rank their neighbours: zero rows under
  // cosine or correlation (all other zero rows are at distance 0 from them,
  // but score like any other row). Searches treat them exactly.
  bool needs_exact_search(std::size_t i) const {
    return unit_rows() && norm_[i] == 0.0;
  }

 private:
  template <class Stored>
  void load_rows_from(const Stored& stored, const RowSet& rows, float* out, float* sqnorm) const {
    for (std::size_t r = 0; r < rows.count; ++r) {
      const std::size_t i = rows[r];
      float* row = out + r * d_;
      stored.load_row(i, row_factor(i), center_.data(), row);
      if (metric_ == Metric::manhattan) {
        sqnorm[r] = 0.0f;
      } else if (unit_rows() && norm_[i] == 0.0) {
        // A zero row sits at cosine distance 1 from every non-zero row: with a
        // zero vector that is score 1 + |b|^2 = 2, given a stored norm of 1.
        sqnorm[r] = 1.0f;
      } else {
        double s = 0.0;
        for (std::size_t k = 0; k < d_; ++k) s += static_cast<double>(row[k]) * row[k];
        sqnorm[r] = static_cast<float>(s);
      }
    }
  }

  // Multiplier taking a stored row to score space.
  double row_factor(std::size_t i) const {
    if (unit_rows()) return norm_[i] > 0.0 ? 1.0 / norm_[i] : 0.0;
    return scale_;
  }

  double score_sqnorm(std::size_t i) const {
    if (unit_rows()) return 1.0;
    return sqnorm_sparse_[i];
  }
};

}  // namespace lsnn

#endif  // LSNN_DISTANCE_H
