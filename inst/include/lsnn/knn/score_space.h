// The rows in "score space" for the approximate search.
//
// ScoreSpace holds the dense rows the approximate search scores candidates
// from, in single precision, contiguous, with their squared norms (RowData's
// own rows when they already are in score space, else one copy made here),
// and the Scorer (scorer.h) that scores blocks of them. The random-projection
// trees and the principal coordinates read the rows themselves. Sparse rows
// and rows of bits (metric = hamming) are not copied: their pairs are scored
// exactly (bits by popcount tiles), and the trees split them by distances.
#ifndef LSNN_SCORE_SPACE_H
#define LSNN_SCORE_SPACE_H

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "distance.h"
#include "scorer.h"

namespace lsnn {

class ScoreSpace {
 public:
  // Not copied: the scorer may point into rows_.
  ScoreSpace(const ScoreSpace&) = delete;
  ScoreSpace& operator=(const ScoreSpace&) = delete;

  template <typename Executor>
  ScoreSpace(const RowData& data, Executor& executor)
      : data_(&data), n_(data.n()), d_(data.d()), scorer_(data, SparseScores::exact_pairs) {
    if (!data_has_float_rows(data) || data.direct_rows() != nullptr) return;  // nothing to copy
    rows_.resize(n_ * d_);
    sqnorm_.resize(n_);
    const std::size_t block = 1024;
    const std::size_t n_blocks = (n_ + block - 1) / block;
    executor.parallel_for(0, n_blocks, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t begin = b * block, end = std::min(n_, begin + block);
        data.load_rows(RowSet::range(begin, end), &rows_[begin * d_], &sqnorm_[begin]);
      }
    });
    scorer_ = Scorer(data, rows_.data(), sqnorm_.data(), SparseScores::exact_pairs);
  }

  // The dense rows of `data` in the order `order` (row s here is row
  // order[s] there), loaded straight from the data: the same floats as
  // the data's own scorer reads.
  template <typename Executor>
  ScoreSpace(const RowData& data, const std::vector<int>& order, Executor& executor)
      : data_(&data), n_(order.size()), d_(data.d()), scorer_(data, SparseScores::exact_pairs) {
    if (!data_has_float_rows(data)) throw std::invalid_argument("rows in a given order are for dense data");
    rows_.resize(n_ * d_);
    sqnorm_.resize(n_);
    const std::size_t block = 1024;
    executor.parallel_for(0, (n_ + block - 1) / block, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t begin = b * block, end = std::min(n_, begin + block);
        data.load_rows(RowSet::list(order.data() + begin, end - begin), &rows_[begin * d_], &sqnorm_[begin]);
      }
    });
    scorer_ = Scorer(data, rows_.data(), sqnorm_.data(), SparseScores::exact_pairs);
  }

  // The rows of a dense `source` in the order `order` (row s here is row
  // order[s] there): rows that are close in that order are then close in
  // memory too.
  template <typename Executor>
  ScoreSpace(const ScoreSpace& source, const std::vector<int>& order, Executor& executor)
      : data_(source.data_), n_(source.n_), d_(source.d_), scorer_(*source.data_, SparseScores::exact_pairs) {
    rows_.resize(n_ * d_);
    sqnorm_.resize(n_);
    const std::size_t block = 1024;
    executor.parallel_for(0, (n_ + block - 1) / block, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t s = b0 * block; s < std::min(n_, b1 * block); ++s) {
        const std::size_t i = static_cast<std::size_t>(order[s]);
        std::copy(source.row(i), source.row(i) + d_, &rows_[s * d_]);
        sqnorm_[s] = source.sqnorm(i);
      }
    });
    scorer_ = Scorer(*data_, rows_.data(), sqnorm_.data(), SparseScores::exact_pairs);
  }

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  // Whether the rows are at hand in single precision (row() and sqnorm()):
  // dense data under every metric but hamming.
  bool float_rows() const { return data_has_float_rows(*data_); }
  const RowData& data() const { return *data_; }
  // The scores of blocks of these rows (row numbers as here).
  const Scorer& scorer() const { return scorer_; }
  // Rows in score space, and their squared norms (float_rows() only).
  const float* row(std::size_t i) const { return rows_ptr() + i * d_; }
  float sqnorm(std::size_t i) const { return sqnorm_ptr()[i]; }

 private:
  static bool data_has_float_rows(const RowData& data) { return !data.sparse() && data.bit_rows() == nullptr; }

  const float* rows_ptr() const { return rows_.empty() ? data_->direct_rows() : rows_.data(); }
  const float* sqnorm_ptr() const { return sqnorm_.empty() ? data_->direct_sqnorms() : sqnorm_.data(); }

  const RowData* data_;
  std::size_t n_, d_;
  std::vector<float> rows_;    // n x d, row-major (dense data only) ...
  std::vector<float> sqnorm_;  // ... and squared norms, unless RowData's rows serve directly
  Scorer scorer_;
};

}  // namespace lsnn

#endif  // LSNN_SCORE_SPACE_H
