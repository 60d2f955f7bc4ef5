// Exact k-nearest neighbours by brute force, at the speed of a matrix product.
//
// The rows are cut into blocks; every pair of blocks (I, J) with I <= J gives
// one tile of single-precision scores (|a|^2 + |b|^2 - 2 a.b through a matrix
// product, L1 sums, or the popcounts of rows of bits), which updates the
// candidate lists of the rows of I and of J: each pair of rows is scored
// once. Tiles are scheduled in rounds of a round-robin tournament
// (tile_schedule.h), so the tiles of a round touch disjoint rows and run in
// parallel without locks.
//
// Each row keeps `k - 1 + margin` candidates by float score. Their distances
// are then recomputed in double from the data as given, and the row's result
// is accepted only when it is provably exact: every row left out scored at
// least the largest kept score, so if the k-th exact score plus the float
// error bound (RowData::score_tolerance) is below that, nothing left out can
// be closer. Rows that fail the test (rare; near-duplicate-heavy data) are
// scored again against every row, keeping all within the error bound of the
// k-th exact score found. Hamming scores are exact counts (bound 0): a list
// kept by (score, row number) is then the answer as it stands, ties
// included, and no row needs the second pass.
//
// Output: self first at distance 0, then the k - 1 nearest other rows by
// (distance, index).
//
// The steps are shared with the query of new rows (knn_query.h): a tile's
// scores offered to the lists of its first block's rows (offer_to_rows) and,
// here only, of its second's (offer_to_columns); and the per-row finish,
// exact scores, proof and refinement, against a range of candidate rows
// (finish_row, refine_row).
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
#include "../base/graph.h"
#include "neighbour_heaps.h"
#include "../base/parallel.h"
#include "scorer.h"
#include "../base/tile_schedule.h"

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
  ScoreWorkspace rows;
  std::vector<float> score, threshold;
  std::vector<std::uint32_t> pos;
};

// Float scores of rows [a0, a1) against rows [b0, b1) into buf.score.
inline void score_tile(const RowData& data, std::size_t a0, std::size_t a1,
                       std::size_t b0, std::size_t b1, TileBuffers& buf) {
  buf.score.resize((a1 - a0) * (b1 - b0));
  Scorer(data).score_block(RowSet::range(a0, a1), RowSet::range(b0, b1), buf.rows, buf.score.data());
}

// A candidate list is never offered its own row, nor the row `skip`
// names for it (another copy of the same row, say; -1 for none).
struct Exclusion {
  const int* skip = nullptr;  // per row of the block, or null for none
  std::size_t skip_base = 0;  // skip[i - skip_base] belongs to data row i
  int row_skip(std::size_t i) const { return skip ? skip[i - skip_base] : -1; }
};

// Rows [a0, a1) take candidates from rows [b0, b1), reading the scores of
// score_tile(data, a0, a1, b0, b1, buf); row a0 + a keeps its list in heap
// row a0 + a - heap_base.
inline void offer_to_rows(const RowData& data, NeighbourHeaps<>& heaps, std::size_t heap_base,
                          std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1,
                          const Exclusion& exclude, TileBuffers& buf) {
  const std::size_t ma = a1 - a0, mb = b1 - b0;
  const DistanceKernels& kern = data.kernels();
  buf.pos.resize(mb);
  const bool overlap = a0 < b1 && b0 < a1;
  for (std::size_t a = 0; a < ma; ++a) {
    const std::size_t row = a0 + a, h = row - heap_base;
    const int skip = exclude.row_skip(row);
    const float* s = &buf.score[a * mb];
    const float t = heaps.threshold(h);
    const std::size_t count = kern.positions_at_most(s, &t, true, mb, buf.pos.data());
    for (std::size_t c = 0; c < count; ++c) {
      const std::size_t b = buf.pos[c];
      if ((overlap && b0 + b == row) || static_cast<int>(b0 + b) == skip) continue;
      heaps.push_new(h, s[b], static_cast<int>(b0 + b));
    }
  }
}

// The columns of a tile of scores (score[a * mb + b], ma x mb) take its
// rows as candidates, none of them listed yet: column b's list is heap row
// list_of(b), row a is row index_of(a). The tile is read once, in order,
// each column against its own list's threshold. `pos` and `threshold` are
// scratch.
template <typename ListOf, typename IndexOf>
void offer_tile_to_columns(const DistanceKernels& kern, NeighbourHeaps<>& heaps, const float* score,
                           std::size_t ma, std::size_t mb, ListOf list_of, IndexOf index_of,
                           std::vector<std::uint32_t>& pos, std::vector<float>& threshold) {
  pos.resize(mb);
  threshold.resize(mb);
  for (std::size_t b = 0; b < mb; ++b) threshold[b] = heaps.threshold(list_of(b));
  for (std::size_t a = 0; a < ma; ++a) {
    const float* s = score + a * mb;
    const std::size_t count = kern.positions_at_most(s, threshold.data(), false, mb, pos.data());
    for (std::size_t c = 0; c < count; ++c) {
      const std::size_t b = pos[c];
      if (heaps.push_new(list_of(b), s[b], index_of(a))) threshold[b] = heaps.threshold(list_of(b));
    }
  }
}

// The other half of a tile of the all-pairs search: rows [b0, b1) take
// candidates from the disjoint rows [a0, a1), reading the same scores.
// Row b0 + b keeps its list in heap row b0 + b - heap_base.
inline void offer_to_columns(const RowData& data, NeighbourHeaps<>& heaps, std::size_t a0,
                             std::size_t a1, std::size_t b0, std::size_t b1, TileBuffers& buf,
                             std::size_t heap_base = 0) {
  const std::size_t h0 = b0 - heap_base;
  offer_tile_to_columns(data.kernels(), heaps, buf.score.data(), a1 - a0, b1 - b0,
                        [h0](std::size_t b) { return h0 + b; },
                        [a0](std::size_t a) { return static_cast<int>(a0 + a); }, buf.pos, buf.threshold);
}

// How many candidates a row keeps by float score to find its k nearest of
// `available` rows: k plus a margin, so that the proof of exactness
// (finish_row) seldom fails.
inline std::size_t candidate_capacity(std::size_t k, std::size_t available) {
  return std::min(available, k + std::max<std::size_t>(8, k / 4));
}

// (A NaN score, which finite data cannot produce, would sort as +Inf rather
// than break the ordering std::sort relies on.)
inline double sortable_score(double score) {
  return std::isnan(score) ? std::numeric_limits<double>::infinity() : score;
}

// The reference rows a row is searched among: [begin, end), less the row
// itself and `skip` (a row number, or -1).
struct SearchRange {
  std::size_t begin, end;
  int skip;
  bool excludes(std::size_t i, std::size_t j) const {
    return j == i || static_cast<int>(j) == skip;
  }
  std::size_t count(std::size_t i) const {
    std::size_t c = end - begin;
    if (i >= begin && i < end) --c;
    if (skip >= 0 && static_cast<std::size_t>(skip) != i && static_cast<std::size_t>(skip) >= begin &&
        static_cast<std::size_t>(skip) < end) {
      --c;
    }
    return c;
  }
};

// Row i's `others` nearest candidates when its candidate list cannot prove
// itself: every row whose float score is within the error bound of the best
// k-th exact score found so far (`bound`) is a candidate for the true
// neighbours, so those are scored exactly; rows whose float scores mean
// nothing (zero rows under cosine) are searched exhaustively in double
// precision, and so is any row the float scores leave with fewer than
// `others` candidates (which the error bound rules out; the fallback keeps
// the result exact regardless). Output by (exact score, index).
inline void refine_row(const RowData& data, std::size_t i, const SearchRange& among, std::size_t others,
                       double bound, TileBuffers& buf, std::vector<std::pair<double, int>>& out) {
  out.clear();
  const float cut = static_cast<float>(bound + data.score_tolerance(i));
  if (!data.needs_exact_search(i) && !std::isnan(cut)) {
    const std::size_t chunk = 1024;
    for (std::size_t b0 = among.begin; b0 < among.end; b0 += chunk) {
      const std::size_t b1 = std::min(among.end, b0 + chunk);
      score_tile(data, i, i + 1, b0, b1, buf);
      for (std::size_t b = b0; b < b1; ++b) {
        if (!among.excludes(i, b) && buf.score[b - b0] <= cut) {
          out.emplace_back(sortable_score(data.exact_score(i, b)), static_cast<int>(b));
        }
      }
    }
  }
  if (out.size() < others) {
    out.clear();
    for (std::size_t j = among.begin; j < among.end; ++j) {
      if (!among.excludes(i, j)) out.emplace_back(sortable_score(data.exact_score(i, j)), static_cast<int>(j));
    }
  }
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(others), out.end());
  out.resize(others);
}

// The all-pairs search with the candidate list of row i in heap row h
// (both searches): sorts the list by exact score, checks the proof of
// exactness and, where it fails, refines the row; the `others` nearest
// candidates, by (exact score, index), end in cand[0, others). Returns
// whether the row needed refining.
//
// A list under a ceiling (NeighbourHeaps::set_ceiling) that still has room
// holds every row whose float score is at or below the ceiling; it is
// complete as it is, and may end with fewer than `others` candidates
// (cand holds them all, nearest first).
inline bool finish_row(const RowData& data, std::size_t i, const NeighbourHeaps<>& heaps, std::size_t h,
                       const SearchRange& among, std::size_t others, TileBuffers& buf,
                       std::vector<std::pair<double, int>>& cand) {
  const std::size_t size = heaps.size(h);
  cand.resize(size);
  const int* ix = heaps.indices(h);
  for (std::size_t c = 0; c < size; ++c) {
    cand[c] = {sortable_score(data.exact_score(i, static_cast<std::size_t>(ix[c]))), ix[c]};
  }
  std::sort(cand.begin(), cand.end());
  if (size < heaps.capacity() && heaps.ceiling(h) < std::numeric_limits<float>::infinity()) {
    if (size > others) cand.resize(others);
    return false;
  }
  // A row can hold fewer than `others` candidates only if some float
  // scores were not numbers; it is then refined like an unproven row.
  const bool enough = size >= others;
  // Scores equal to the exact ones (hamming) leave nothing to prove: the
  // list holds the first rows by (exact score, row number) of all offered.
  bool proven = size == among.count(i) || (enough && data.exact_scores());
  if (!proven && enough && !data.needs_exact_search(i)) {
    // Every row left out scored at least the largest kept score.
    const double kth = cand[others - 1].first;
    proven = kth + data.score_tolerance(i) < static_cast<double>(heaps.top_value(h));
  }
  if (proven) {
    cand.resize(others);
    return false;
  }
  const double bound = enough ? cand[others - 1].first : std::numeric_limits<double>::infinity();
  refine_row(data, i, among, others, bound, buf, cand);
  return true;
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

  NeighbourHeaps<> heaps(n, detail::candidate_capacity(others, n - 1), data.kernels());

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
        detail::offer_to_rows(data, heaps, 0, a0, a1, b0, b1, detail::Exclusion(), buf);
        if (a0 != b0) detail::offer_to_columns(data, heaps, a0, a1, b0, b1, buf);
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
      refined[i] = detail::finish_row(data, i, heaps, i, {0, n, -1}, others, buf, cand);
      data.report_distances(cand, others);
      for (std::size_t c = 0; c < others; ++c) {
        graph.index(i, c + 1) = cand[c].second;
        graph.distance(i, c + 1) = cand[c].first;
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
