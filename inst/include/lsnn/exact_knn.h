// Exact k-nearest neighbours by brute force, at the speed of a matrix product.
//
// The rows are cut into blocks; every pair of blocks (I, J) with I <= J gives
// one tile of single-precision scores (|a|^2 + |b|^2 - 2 a.b through a matrix
// product, or L1 sums), which updates the candidate lists of the rows of I
// and of J: each pair of rows is scored once. Tiles are scheduled in rounds
// of a round-robin tournament (tile_schedule.h), so the tiles of a round
// touch disjoint rows and run in parallel without locks.
//
// Each row keeps `k - 1 + margin` candidates by float score. Their distances
// are then recomputed in double from the data as given, and the row's result
// is accepted only when it is provably exact: every row left out scored at
// least the largest kept score, so if the k-th exact score plus the float
// error bound (RowData::score_tolerance) is below that, nothing left out can
// be closer. Rows that fail the test (rare; near-duplicate-heavy data) are
// scored again against every row, keeping all within the error bound of the
// k-th exact score found.
//
// Output: self first at distance 0, then the k - 1 nearest other rows by
// (distance, index).
#ifndef LSNN_EXACT_KNN_H
#define LSNN_EXACT_KNN_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "distance.h"
#include "graph.h"
#include "neighbour_heaps.h"
#include "parallel.h"
#include "tile_schedule.h"

namespace lsnn {

struct ExactKnnStats {
  std::size_t tiles = 0;
  std::size_t block_rows = 0;
  std::size_t rows_refined = 0;
};

namespace detail {

// Large tiles run the matrix products closer to peak; smaller ones keep all
// threads busy on small data (a round has n / (2 bs) tiles).
inline std::size_t default_block_rows(const RowData& data, std::size_t n_threads) {
  if (data.sparse()) return 256;
  std::size_t bs = 512;
  while (bs > 64 && data.n() < bs * 8 * std::max<std::size_t>(n_threads, 1)) bs /= 2;
  return bs;
}

struct TileBuffers {
  std::vector<float> a, b, na, nb, score, threshold;
  std::vector<double> scratch;
  std::vector<std::uint32_t> pos;
};

// Rows [b0, b1) in score space with their squared norms: read in place when
// the data keeps them so, otherwise loaded into `rows` and `norms`.
struct BlockRows {
  const float* rows;
  const float* sqnorms;
};

inline BlockRows block_rows(const RowData& data, std::size_t b0, std::size_t b1,
                            std::vector<float>& rows, std::vector<float>& norms) {
  if (const float* direct = data.direct_rows(b0)) return {direct, data.direct_sqnorms(b0)};
  rows.resize((b1 - b0) * data.d());
  norms.resize(b1 - b0);
  data.load_block(b0, b1, rows.data(), norms.data());
  return {rows.data(), norms.data()};
}

// Float scores of rows [a0, a1) against rows [b0, b1) into buf.score.
inline void score_tile(const RowData& data, std::size_t a0, std::size_t a1,
                       std::size_t b0, std::size_t b1, TileBuffers& buf) {
  const std::size_t ma = a1 - a0, mb = b1 - b0, d = data.d();
  buf.score.resize(ma * mb);
  if (data.sparse()) {
    buf.scratch.assign(d, 0.0);
    data.sparse_score_tile(a0, a1, b0, b1, buf.scratch.data(), buf.score.data());
    return;
  }
  const BlockRows rows_a = block_rows(data, a0, a1, buf.a, buf.na);
  const BlockRows rows_b = a0 == b0 && a1 == b1 ? rows_a : block_rows(data, b0, b1, buf.b, buf.nb);
  const float *a = rows_a.rows, *b = rows_b.rows, *na = rows_a.sqnorms, *nb = rows_b.sqnorms;
  const DistanceKernels& kern = data.kernels();
  if (data.metric() == Metric::manhattan) {
    kern.l1_tile(a, ma, b, mb, d, buf.score.data());
    return;
  }
  kern.dot_tile(a, ma, b, mb, d, buf.score.data());
  kern.finish_sqdist_tile(na, ma, nb, mb, buf.score.data());
}

inline void update_from_tile(const RowData& data, NeighbourHeaps<>& heaps,
                             std::size_t a0, std::size_t a1, std::size_t b0,
                             std::size_t b1, TileBuffers& buf) {
  const std::size_t ma = a1 - a0, mb = b1 - b0;
  const DistanceKernels& kern = data.kernels();
  buf.pos.resize(mb);
  buf.threshold.resize(mb);
  const bool diagonal = a0 == b0;
  // Rows of block A take candidates from block B.
  for (std::size_t a = 0; a < ma; ++a) {
    const float* s = &buf.score[a * mb];
    const float t = heaps.threshold(a0 + a);
    const std::size_t count = kern.positions_at_most(s, &t, true, mb, buf.pos.data());
    for (std::size_t c = 0; c < count; ++c) {
      const std::size_t b = buf.pos[c];
      if (diagonal && a == b) continue;
      heaps.push_new(a0 + a, s[b], static_cast<int>(b0 + b));
    }
  }
  if (diagonal) return;
  // Rows of block B take candidates from block A, reading the same scores.
  for (std::size_t b = 0; b < mb; ++b) buf.threshold[b] = heaps.threshold(b0 + b);
  for (std::size_t a = 0; a < ma; ++a) {
    const float* s = &buf.score[a * mb];
    const std::size_t count = kern.positions_at_most(s, buf.threshold.data(), false, mb, buf.pos.data());
    for (std::size_t c = 0; c < count; ++c) {
      const std::size_t b = buf.pos[c];
      if (heaps.push_new(b0 + b, s[b], static_cast<int>(a0 + a))) {
        buf.threshold[b] = heaps.threshold(b0 + b);
      }
    }
  }
}

// The `others` nearest rows to i other than i, by exact score then index,
// from a list of candidates; candidates is overwritten.
// (A NaN score, which finite data cannot produce, would sort as +Inf rather
// than break the ordering std::sort relies on.)
inline double sortable_score(double score) {
  return std::isnan(score) ? std::numeric_limits<double>::infinity() : score;
}

inline void sort_candidates(const RowData& data, std::size_t i,
                            std::vector<std::pair<double, int>>& candidates) {
  for (auto& c : candidates) {
    c.first = sortable_score(data.exact_score(i, static_cast<std::size_t>(c.second)));
  }
  std::sort(candidates.begin(), candidates.end());
}

// Row i's neighbours when its candidate list cannot prove itself: every row
// whose float score is within the error bound of the best k-th exact score
// found so far (`bound`) is a candidate for the true neighbours, so those
// are scored exactly; rows whose float scores mean nothing (zero rows under
// cosine) are searched exhaustively in double precision, and so is any row
// the float scores leave with fewer than `others` candidates (which the
// error bound rules out; the fallback keeps the result exact regardless).
inline void refine_row(const RowData& data, std::size_t i, std::size_t others, double bound,
                       TileBuffers& buf, std::vector<std::pair<double, int>>& out) {
  const std::size_t n = data.n();
  out.clear();
  const float cut = static_cast<float>(bound + data.score_tolerance(i));
  if (!data.needs_exact_search(i) && !std::isnan(cut)) {
    const std::size_t chunk = 1024;
    for (std::size_t b0 = 0; b0 < n; b0 += chunk) {
      const std::size_t b1 = std::min(n, b0 + chunk);
      score_tile(data, i, i + 1, b0, b1, buf);
      for (std::size_t b = b0; b < b1; ++b) {
        if (b != i && buf.score[b - b0] <= cut) {
          out.emplace_back(sortable_score(data.exact_score(i, b)), static_cast<int>(b));
        }
      }
    }
  }
  if (out.size() < others) {
    out.clear();
    for (std::size_t j = 0; j < n; ++j) {
      if (j != i) out.emplace_back(sortable_score(data.exact_score(i, j)), static_cast<int>(j));
    }
  }
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(others), out.end());
  out.resize(others);
}

}  // namespace detail

// The k nearest neighbours of every row (the row itself included, first).
// `block_rows` = 0 picks the tile size automatically.
template <typename Executor>
KnnGraph exact_knn(const RowData& data, std::size_t k, Executor& executor,
                   ExactKnnStats* stats = nullptr, std::size_t block_rows = 0) {
  const std::size_t n = data.n();
  if (k < 1 || k > n) throw std::invalid_argument("k must be between 1 and the number of rows");
  const std::size_t others = k - 1;
  KnnGraph graph(n, k);
  for (std::size_t i = 0; i < n; ++i) {
    graph.index(i, 0) = static_cast<int>(i);
    graph.distance(i, 0) = 0.0;
  }
  ExactKnnStats local;
  ExactKnnStats& st = stats ? *stats : local;
  if (others == 0) return graph;

  const std::size_t margin = std::max<std::size_t>(8, others / 4);
  const std::size_t capacity = std::min(n - 1, others + margin);
  NeighbourHeaps<> heaps(n, capacity, data.kernels());

  const std::size_t bs = block_rows > 0 ? block_rows : detail::default_block_rows(data, executor.n_threads());
  const std::size_t n_blocks = (n + bs - 1) / bs;
  const std::vector<TileRound> rounds = round_robin_rounds(n_blocks);
  std::size_t total_tiles = 0;
  for (const auto& r : rounds) total_tiles += r.size();
  st.block_rows = bs;
  st.tiles = total_tiles;

  // One step per tile; the exact distances that follow take a fraction of
  // the tiles' time.
  Phase<Executor> phase(executor, "exact kNN", total_tiles);
  std::size_t done = 0;
  for (const auto& round : rounds) {
    executor.parallel_for(0, round.size(), [&](std::size_t begin, std::size_t end) {
      detail::TileBuffers buf;
      for (std::size_t t = begin; t < end; ++t) {
        const std::size_t a0 = round[t].first * bs, a1 = std::min(n, a0 + bs);
        const std::size_t b0 = round[t].second * bs, b1 = std::min(n, b0 + bs);
        detail::score_tile(data, a0, a1, b0, b1, buf);
        detail::update_from_tile(data, heaps, a0, a1, b0, b1, buf);
      }
    });
    done += round.size();
    phase.set(done);
  }

  // Exact distances for the candidates, the proof of exactness, and the
  // wider second pass for the rows where the proof fails.
  std::vector<unsigned char> refined(n, 0);
  batched_for(executor, n, 4096, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> cand;
    detail::TileBuffers buf;
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t size = heaps.size(i);
      cand.resize(size);
      const int* ix = heaps.indices(i);
      for (std::size_t c = 0; c < size; ++c) cand[c].second = ix[c];
      detail::sort_candidates(data, i, cand);
      // A row can hold fewer than `others` candidates only if some float
      // scores were not numbers; it is then refined like an unproven row.
      const bool enough = size >= others;
      bool proven = size == n - 1;
      if (!proven && enough && !data.needs_exact_search(i)) {
        const double kth = cand[others - 1].first;
        proven = kth + data.score_tolerance(i) < static_cast<double>(heaps.top_value(i));
      }
      if (!proven) {
        refined[i] = 1;
        const double bound = enough ? cand[others - 1].first : std::numeric_limits<double>::infinity();
        detail::refine_row(data, i, others, bound, buf, cand);
      }
      for (std::size_t c = 0; c < others; ++c) {
        graph.index(i, c + 1) = cand[c].second;
        graph.distance(i, c + 1) = data.distance_from_exact_score(cand[c].first);
      }
    }
  });
  st.rows_refined = 0;
  for (unsigned char e : refined) st.rows_refined += e;
  {
    std::ostringstream msg;
    msg << "exact kNN: " << n << " rows, " << data.d() << " columns, k = " << k << "; "
        << total_tiles << " tiles of " << bs << " rows (" << data.kernels().name << " kernels); "
        << st.rows_refined << " rows needed a second, wider pass";
    phase.finish(msg.str());
  }
  return graph;
}

}  // namespace lsnn

#endif  // LSNN_EXACT_KNN_H
