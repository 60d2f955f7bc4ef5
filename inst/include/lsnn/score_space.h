// The rows in "score space" for the approximate search.
//
// ScoreSpace holds what the approximate search scores candidates with: for
// dense data, the rows in the score space of RowData in single precision,
// contiguous, with their squared norms, so that a block of candidate rows is
// scored by one small matrix product (RowData's own rows when they already
// are in score space, else a copy: centred and scaled rows for euclidean and
// manhattan, unit rows for cosine and correlation); for sparse data, nothing
// beyond RowData itself (pairs are scored exactly, in double precision).
#ifndef LSNN_SCORE_SPACE_H
#define LSNN_SCORE_SPACE_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "distance.h"

namespace lsnn {

// Scratch space of one thread for ScoreSpace::score_block().
struct ScoreWorkspace {
  std::vector<float> rows;
  std::vector<float> sqnorm;
};

class ScoreSpace {
 public:
  // Not copied: rows_ptr_ may point into rows_.
  ScoreSpace(const ScoreSpace&) = delete;
  ScoreSpace& operator=(const ScoreSpace&) = delete;

  template <typename Executor>
  ScoreSpace(const RowData& data, Executor& executor) : data_(&data), n_(data.n()), d_(data.d()) {
    if (data.sparse()) return;
    if (data.direct_rows(0) != nullptr) {
      // The stored rows are already in score space: no copy.
      rows_ptr_ = data.direct_rows(0);
      sqnorm_ptr_ = data.direct_sqnorms(0);
      return;
    }
    rows_.resize(n_ * d_);
    sqnorm_.resize(n_);
    const std::size_t block = 1024;
    const std::size_t n_blocks = (n_ + block - 1) / block;
    executor.parallel_for(0, n_blocks, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t begin = b * block, end = std::min(n_, begin + block);
        data.load_block(begin, end, &rows_[begin * d_], &sqnorm_[begin]);
      }
    });
    rows_ptr_ = rows_.data();
    sqnorm_ptr_ = sqnorm_.data();
  }

  // The rows of a dense `source` in the order `order` (row s here is row
  // order[s] there): rows that are close in that order are then close in
  // memory too.
  template <typename Executor>
  ScoreSpace(const ScoreSpace& source, const std::vector<int>& order, Executor& executor)
      : data_(source.data_), n_(source.n_), d_(source.d_) {
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
    rows_ptr_ = rows_.data();
    sqnorm_ptr_ = sqnorm_.data();
  }

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  bool dense() const { return !data_->sparse(); }
  const RowData& data() const { return *data_; }
  const float* row(std::size_t i) const { return rows_ptr_ + i * d_; }
  float sqnorm(std::size_t i) const { return sqnorm_ptr_[i]; }

  // out[a * m + b] = score of rows ids[a] and ids[b] for a < na, b < m: a
  // block of the candidate rows against all of them. Dense rows are gathered
  // and multiplied (or summed for manhattan) with the vector kernels; a
  // square block (na == m) takes the symmetric product.
  void score_block(const int* ids, std::size_t na, std::size_t m, ScoreWorkspace& ws,
                   float* out) const {
    if (!dense()) {
      for (std::size_t a = 0; a < na; ++a) {
        for (std::size_t b = 0; b < m; ++b) {
          out[a * m + b] = a == b ? 0.0f
                                  : static_cast<float>(data_->exact_score(
                                        static_cast<std::size_t>(ids[a]),
                                        static_cast<std::size_t>(ids[b])));
        }
      }
      return;
    }
    gather(ids, m, ws);
    const DistanceKernels& kern = data_->kernels();
    if (data_->metric() == Metric::manhattan) {
      kern.l1_tile(ws.rows.data(), na, ws.rows.data(), m, d_, out);
      return;
    }
    if (na == m) {
      kern.gram_tile(ws.rows.data(), m, d_, out);
    } else {
      kern.dot_tile(ws.rows.data(), na, ws.rows.data(), m, d_, out);
    }
    kern.finish_sqdist_tile(ws.sqnorm.data(), na, ws.sqnorm.data(), m, out);
  }

  // out[a * (b1 - b0) + b - b0] = score of rows ids[a] and b, for a < na
  // and b0 <= b < b1 (rows in their stored order).
  void score_range(const int* ids, std::size_t na, std::size_t b0, std::size_t b1,
                   ScoreWorkspace& ws, float* out) const {
    const std::size_t m = b1 - b0;
    if (!dense()) {
      for (std::size_t a = 0; a < na; ++a) {
        const std::size_t i = static_cast<std::size_t>(ids[a]);
        for (std::size_t b = b0; b < b1; ++b) {
          out[a * m + b - b0] = i == b ? 0.0f : static_cast<float>(data_->exact_score(i, b));
        }
      }
      return;
    }
    gather(ids, na, ws);
    const DistanceKernels& kern = data_->kernels();
    if (data_->metric() == Metric::manhattan) {
      kern.l1_tile(ws.rows.data(), na, rows_ptr_ + b0 * d_, m, d_, out);
      return;
    }
    kern.dot_tile(ws.rows.data(), na, rows_ptr_ + b0 * d_, m, d_, out);
    kern.finish_sqdist_tile(ws.sqnorm.data(), na, sqnorm_ptr_ + b0, m, out);
  }

 private:
  // Copies rows ids[0, count) and their squared norms into ws (dense only).
  void gather(const int* ids, std::size_t count, ScoreWorkspace& ws) const {
    ws.rows.resize(count * d_);
    ws.sqnorm.resize(count);
    for (std::size_t a = 0; a < count; ++a) {
      const std::size_t i = static_cast<std::size_t>(ids[a]);
      std::copy(rows_ptr_ + i * d_, rows_ptr_ + (i + 1) * d_, &ws.rows[a * d_]);
      ws.sqnorm[a] = sqnorm_ptr_[i];
    }
  }

  const RowData* data_;
  std::size_t n_, d_;
  std::vector<float> rows_;    // n x d, row-major (dense data only) ...
  std::vector<float> sqnorm_;  // ... and squared norms as the tiles use them,
  const float* rows_ptr_ = nullptr;    // unless RowData's rows serve directly
  const float* sqnorm_ptr_ = nullptr;
};

}  // namespace lsnn

#endif  // LSNN_SCORE_SPACE_H
