// Ordering the neighbours within each row of a graph: reordering a graph's
// rows, and choosing each row's best neighbours from lists of candidates.
//
// Orders are stable: neighbours with equal sort values keep their order in
// the input row (as R's order() does, in both directions).
#ifndef LSNN_GRAPH_SORT_H
#define LSNN_GRAPH_SORT_H

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <numeric>
#include <vector>

#include "../base/graph.h"
#include "../base/large_buffer.h"
#include "../base/parallel.h"

namespace lsnn {

// Writes the graph with each row reordered by `sort_values` (column-major
// n x k; null means by distance) into out_idx / out_dist (n x k). With
// `self_first`, column 0 stays in place and only the others are sorted.
template <typename Executor>
void sort_graph_rows(const GraphView& g, const double* sort_values, bool decreasing,
                     bool self_first, int* out_idx, double* out_dist, Executor& executor) {
  const std::size_t n = g.n, k = g.k;
  const double* values = sort_values ? sort_values : g.dist;
  batched_for(executor, n, 8192, [&](std::size_t begin, std::size_t end) {
    std::vector<std::size_t> order(k);
    std::vector<double> v(k);
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t c = 0; c < k; ++c) v[c] = values[i + c * n];
      std::iota(order.begin(), order.end(), std::size_t(0));
      const auto first = order.begin() + ((self_first && k > 0) ? 1 : 0);
      if (decreasing) {
        std::stable_sort(first, order.end(), [&](std::size_t a, std::size_t b) { return v[a] > v[b]; });
      } else {
        std::stable_sort(first, order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
      }
      for (std::size_t c = 0; c < k; ++c) {
        out_idx[i + c * n] = g.idx[i + order[c] * n];
        out_dist[i + c * n] = g.dist[i + order[c] * n];
      }
    }
  });
}


// Candidate neighbours of n rows in compressed form: row i's candidates are
// entries [start[i], start[i + 1]) of `id` (1-based row numbers) and `dist`.
// (A sharded merge fills tens of millions of entries per call; large_vector
// spares the page faults of that much new memory.)
struct CandidateLists {
  std::vector<std::size_t> start;  // n + 1 offsets
  large_vector<int> id;
  large_vector<double> dist;
};

// The best k candidates of each row by (distance, row number), each row
// number once (its smallest distance kept) and row self[i] left out (self may
// be null; 0 there means none). Writes n x k column-major idx / dist, 0 / Inf
// where a row has fewer than k, and returns how many rows have fewer. The
// order is the exact search's tie rule, so lists merged from blocks of an
// exact search are the exact lists.
//
// Only the head of each row's list is sorted: the best m entries are
// selected (m = k, more when ids repeat among them), sorted, and each id's
// first entry kept, which is its smallest distance; a row's candidates from
// many blocks (a sharded search merges one list per shard) cost linear
// time, not a sort of them all.
template <typename Executor>
std::size_t best_candidates(const CandidateLists& c, std::size_t n, std::size_t k,
                            const int* self, int* out_idx, double* out_dist,
                            Executor& executor) {
  std::vector<unsigned char> short_row(n, 0);
  batched_for(executor, n, 4096, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> by_dist;
    std::vector<std::pair<int, std::size_t>> ids;
    std::vector<unsigned char> repeated;
    for (std::size_t i = begin; i < end; ++i) {
      const int own = self ? self[i] : 0;
      by_dist.clear();
      for (std::size_t e = c.start[i]; e < c.start[i + 1]; ++e) {
        if (c.id[e] > 0 && c.id[e] != own) by_dist.emplace_back(c.dist[e], c.id[e]);
      }
      const std::size_t size = by_dist.size();
      std::size_t m = std::min(k, size), distinct = 0;
      for (;;) {
        const auto head = by_dist.begin() + static_cast<std::ptrdiff_t>(m);
        if (m < size) std::nth_element(by_dist.begin(), head, by_dist.end());
        std::sort(by_dist.begin(), head);
        // An id's first entry in (distance, id) order is its nearest.
        ids.resize(m);
        for (std::size_t e = 0; e < m; ++e) ids[e] = {by_dist[e].second, e};
        std::sort(ids.begin(), ids.end());
        repeated.assign(m, 0);
        for (std::size_t e = 1; e < m; ++e) {
          if (ids[e].first == ids[e - 1].first) repeated[ids[e].second] = 1;
        }
        distinct = m - static_cast<std::size_t>(std::count(repeated.begin(), repeated.end(), 1));
        if (distinct >= k || m == size) break;
        m = std::min(size, m + 2 * (k - distinct) + 8);
      }
      std::size_t col = 0;
      for (std::size_t e = 0; e < m && col < k; ++e) {
        if (repeated[e]) continue;
        out_idx[i + col * n] = by_dist[e].second;
        out_dist[i + col * n] = by_dist[e].first;
        ++col;
      }
      short_row[i] = col < k;
      for (; col < k; ++col) {
        out_idx[i + col * n] = 0;
        out_dist[i + col * n] = std::numeric_limits<double>::infinity();
      }
    }
  });
  return static_cast<std::size_t>(std::count(short_row.begin(), short_row.end(), 1));
}

// The exact graph of k columns (the row itself first, at distance 0, then
// its k - 1 nearest other rows by (distance, row number), the exact search's
// tie rule) of n points given by their distances as R's dist object stores
// them: the pairs i > j column by column, d(i, j) at position
// j n - j (j + 1) / 2 + i - j - 1. Row i reads its distances to the rows
// after it in one run and those before it one per column; O(n) per row.
template <typename Executor>
KnnGraph knn_of_distances(const double* d, std::size_t n, std::size_t k, Executor& executor) {
  KnnGraph g(n, k);
  if (k == 0) return g;
  batched_for(executor, n, 1024, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> row;
    for (std::size_t i = begin; i < end; ++i) {
      row.clear();
      for (std::size_t j = 0; j < i; ++j) {
        row.emplace_back(d[j * n - j * (j + 1) / 2 + i - j - 1], static_cast<int>(j));
      }
      const double* after = d + (i * n - i * (i + 1) / 2);
      for (std::size_t j = i + 1; j < n; ++j) row.emplace_back(after[j - i - 1], static_cast<int>(j));
      const auto head = row.begin() + static_cast<std::ptrdiff_t>(k - 1);
      if (k - 1 < row.size()) std::nth_element(row.begin(), head, row.end());
      std::sort(row.begin(), head);
      g.index(i, 0) = static_cast<int>(i);
      g.distance(i, 0) = 0.0;
      for (std::size_t c = 1; c < k; ++c) {
        g.index(i, c) = row[c - 1].second;
        g.distance(i, c) = row[c - 1].first;
      }
    }
  });
  return g;
}

}  // namespace lsnn

#endif  // LSNN_GRAPH_SORT_H
