// The one place blocks of rows are scored against blocks of rows.
//
// Every search and measure that ranks rows by single-precision scores (the
// exact search and its queries, the approximate search and its queries, the
// quality measures) gets them from Scorer::score_block(): out[a * |B| + b]
// is the score of row A[a] against row B[b], for two sets of rows of one
// RowData (ranges or lists). The score is the one RowData defines, within
// RowData::score_tolerance() of the exact score, so the proofs of exactness
// hold whichever caller asks.
//
// Dense rows are scored by one matrix product (or L1 tile) of their
// single-precision score-space rows: read in place when the rows are at hand
// in score space (RowData's own storage, or a copy such as ScoreSpace's),
// else loaded for the block. Sparse rows are scored through a dense scratch
// row (tiles), or pair by pair exactly (the approximate search, whose blocks
// are small scattered lists). Rows of bits (metric = hamming) are scored by
// the popcount tiles of hamming_tile(), read in place for a range of rows,
// else gathered for the block; their scores are the exact counts.
#ifndef LSNN_SCORER_H
#define LSNN_SCORER_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "distance.h"

namespace lsnn {

// Scratch space of one thread for Scorer::score_block().
struct ScoreWorkspace {
  std::vector<float> a, b, a_sqnorm, b_sqnorm;
  std::vector<double> scratch;
  std::vector<std::uint64_t> a_bits, b_bits;
};

enum class SparseScores { tiles, exact_pairs };

class Scorer {
 public:
  // Scores from the data as stored: straight from storage when it is in
  // score space, else from rows loaded per block.
  explicit Scorer(const RowData& data, SparseScores sparse = SparseScores::tiles)
      : Scorer(data, data.direct_rows(), data.direct_sqnorms(), sparse) {}

  // Scores from `rows` (n x d, row-major, in score space, with their squared
  // norms) standing for the data's dense rows; null: as above.
  Scorer(const RowData& data, const float* rows, const float* sqnorms, SparseScores sparse)
      : data_(&data), rows_(rows), sqnorms_(sqnorms), sparse_(sparse) {}

  const RowData& data() const { return *data_; }

  // out[a * b.count + c] = score of rows a[r] and b[c]. The same set on
  // both sides takes the symmetric product.
  void score_block(const RowSet& a, const RowSet& b, ScoreWorkspace& ws, float* out) const {
    if (const BitRows* bits = data_->bit_rows()) {
      score_bits(*bits, a, b, ws, out);
      return;
    }
    if (data_->sparse()) {
      score_sparse(a, b, ws, out);
      return;
    }
    const std::size_t d = data_->d();
    const BlockRows rb = rows_of(b, ws.b, ws.b_sqnorm);
    // A set that begins the other (a row against its candidates, say)
    // reads the other's rows.
    const bool prefix = a.ids == b.ids && a.begin == b.begin && a.count <= b.count;
    const BlockRows ra = prefix ? rb : rows_of(a, ws.a, ws.a_sqnorm);
    const DistanceKernels& kern = data_->kernels();
    if (data_->metric() == Metric::manhattan) {
      kern.l1_tile(ra.rows, a.count, rb.rows, b.count, d, out);
      return;
    }
    if (a == b) {
      kern.gram_tile(ra.rows, a.count, d, out);
    } else {
      kern.dot_tile(ra.rows, a.count, rb.rows, b.count, d, out);
    }
    kern.finish_sqdist_tile(ra.sqnorms, a.count, rb.sqnorms, b.count, out);
  }

  // The score of rows i and j alone, for the walks over a graph, which
  // score rows one at a time: dense rows must be at hand (a ScoreSpace's
  // scorer); sparse rows and bits are scored exactly. Dense rows are scored
  // from their differences, not from their norms as the tiles are: a walk
  // ranks a row's nearest rows against each other, and rows far from the
  // origin whose distances are far below their norms (the tight groups of
  // a 2-D layout) lose those distances to the norms' rounding.
  float score_pair(std::size_t i, std::size_t j) const {
    if (data_->sparse() || data_->bit_rows()) return static_cast<float>(data_->exact_score(i, j));
    const std::size_t d = data_->d();
    const float* x = rows_ + i * d;
    const float* y = rows_ + j * d;
    const DistanceKernels& kern = data_->kernels();
    if (data_->metric() == Metric::manhattan) {
      float s;
      kern.l1_tile(x, 1, y, 1, d, &s);
      return s;
    }
    return static_cast<float>(kern.sqdist_f(x, y, d));
  }

  // Hints that score_pair(., j) will read row j soon.
  void prefetch(std::size_t j) const {
#if defined(__GNUC__) || defined(__clang__)
    if (data_->bit_rows()) {
      data_->prefetch_row(j);
      return;
    }
    if (rows_ == nullptr) return;
    const char* p = reinterpret_cast<const char*>(rows_ + j * data_->d());
    const std::size_t bytes = data_->d() * sizeof(float);
    for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
#else
    (void)j;
#endif
  }

 private:
  struct BlockRows {
    const float* rows;
    const float* sqnorms;
  };

  // The score-space rows of `set`: in place for a range of rows at hand,
  // else gathered or loaded into `rows` and `sqnorms`.
  BlockRows rows_of(const RowSet& set, std::vector<float>& rows, std::vector<float>& sqnorms) const {
    const std::size_t d = data_->d();
    if (rows_ != nullptr && set.ids == nullptr) return {rows_ + set.begin * d, sqnorms_ + set.begin};
    rows.resize(set.count * d);
    sqnorms.resize(set.count);
    if (rows_ == nullptr) {
      data_->load_rows(set, rows.data(), sqnorms.data());
    } else {
      for (std::size_t r = 0; r < set.count; ++r) {
        const std::size_t i = set[r];
        std::copy(rows_ + i * d, rows_ + (i + 1) * d, &rows[r * d]);
        sqnorms[r] = sqnorms_[i];
      }
    }
    return {rows.data(), sqnorms.data()};
  }

  // The bits of `set`: in place for a range, else gathered into `buffer`.
  static const std::uint64_t* bits_of(const BitRows& bits, const RowSet& set,
                                      std::vector<std::uint64_t>& buffer) {
    const std::size_t w = bits.words();
    if (set.count == 0) return nullptr;
    if (set.ids == nullptr) return bits.row(set.begin);
    buffer.resize(set.count * w);
    for (std::size_t r = 0; r < set.count; ++r) {
      const std::uint64_t* row = bits.row(set[r]);
      std::copy(row, row + w, &buffer[r * w]);
    }
    return buffer.data();
  }

  void score_bits(const BitRows& bits, const RowSet& a, const RowSet& b, ScoreWorkspace& ws,
                  float* out) const {
    const std::uint64_t* rb = bits_of(bits, b, ws.b_bits);
    const bool prefix = a.ids == b.ids && a.begin == b.begin && a.count <= b.count;
    const std::uint64_t* ra = prefix ? rb : bits_of(bits, a, ws.a_bits);
    data_->kernels().hamming_tile(ra, a.count, rb, b.count, bits.words(), out);
  }

  void score_sparse(const RowSet& a, const RowSet& b, ScoreWorkspace& ws, float* out) const {
    if (sparse_ == SparseScores::exact_pairs) {
      for (std::size_t r = 0; r < a.count; ++r) {
        for (std::size_t c = 0; c < b.count; ++c) {
          out[r * b.count + c] = static_cast<float>(data_->exact_score(a[r], b[c]));
        }
      }
      return;
    }
    ws.scratch.assign(data_->d(), 0.0);
    data_->sparse_score_tile(a, b, ws.scratch.data(), out);
  }

  const RowData* data_;
  const float* rows_;
  const float* sqnorms_;
  SparseScores sparse_;
};

}  // namespace lsnn

#endif  // LSNN_SCORER_H
