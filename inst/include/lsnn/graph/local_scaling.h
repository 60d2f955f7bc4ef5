// Locally scaled nearest neighbours (Zelnik-Manor and Perona's local scale,
// as TriMap and PaCMAP use it to pick neighbours).
//
// sigma_i is the mean distance from row i to the neighbours in columns
// scale_from..scale_to of its extended graph (columns counted from 1 with the
// row itself in column 1, so the default 5..7 are the 4th to 6th other
// neighbours), floored at 1e-10 so rows of duplicates stay finite (an
// absolute floor, as in PaCMAP: on data whose distances are near or below
// 1e-10 it replaces the real local scales and changes the result). Each
// candidate j of row i gets the scaled value d_ij^2 / sigma_i / sigma_j; the
// locally scaled graph keeps the row itself and the n_neighbors - 1 others
// with the smallest scaled values, then lists them by distance.
//
// The arithmetic follows R's definitions exactly (the mean accumulates in
// long double as rowMeans() does; the two divisions happen in that order),
// and equal scaled values are chosen by their position in the input row, as
// R's stable order() would: the results match a plain R implementation value
// for value. The chosen neighbours are listed as every graph of lsnn lists
// them, by (distance, row number).
#ifndef LSNN_LOCAL_SCALING_H
#define LSNN_LOCAL_SCALING_H

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <numeric>
#include <utility>
#include <vector>

#include "graph_sort.h"
#include "../base/parallel.h"

namespace lsnn {

constexpr double min_local_scale = 1e-10;

// sigma for every row; scale_from and scale_to are 1-based columns.
template <typename Executor>
std::vector<double> local_scales(const GraphView& g, std::size_t scale_from,
                                 std::size_t scale_to, Executor& executor) {
  if (scale_from < 1 || scale_from > scale_to || scale_to > g.k) {
    throw std::invalid_argument("the local scale's columns must satisfy 1 <= from <= to <= the graph's columns");
  }
  std::vector<double> sigma(g.n);
  const long double count = static_cast<long double>(scale_to - scale_from + 1);
  executor.parallel_for(0, g.n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      long double sum = 0.0L;
      for (std::size_t c = scale_from - 1; c < scale_to; ++c) sum += g.dist[i + c * g.n];
      sigma[i] = std::max(static_cast<double>(sum / count), min_local_scale);
    }
  }, 1024);
  return sigma;
}

// As R computes it, unless d^2 overflows (distances beyond 1e154): then in
// an order that stays finite.
inline double locally_scaled(double d, double sigma_i, double sigma_j) {
  const double d2 = d * d;
  if (d2 <= std::numeric_limits<double>::max()) return d2 / sigma_i / sigma_j;
  return (d / sigma_i) * (d / sigma_j);
}

// out (column-major n x k): d_ij^2 / sigma_i / sigma_j for every entry.
template <typename Executor>
void locally_scaled_distances(const GraphView& g, std::size_t scale_from,
                              std::size_t scale_to, double* out, Executor& executor) {
  const std::vector<double> sigma = local_scales(g, scale_from, scale_to, executor);
  batched_for(executor, g.n, 16384, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t c = 0; c < g.k; ++c) {
        const std::size_t e = i + c * g.n;
        out[e] = locally_scaled(g.dist[e], sigma[i], sigma[g.idx[e] - g.base]);
      }
    }
  });
}

namespace detail {

// A chosen neighbour, listed by (distance, row number); a graph lists a
// row once, and the column settles anything else.
struct ScaledChoice {
  double dist;
  int row;
  std::size_t col;
  bool operator<(const ScaledChoice& o) const {
    if (dist != o.dist) return dist < o.dist;
    if (row != o.row) return row < o.row;
    return col < o.col;
  }
};

// Of a row's candidates in columns [first, k) (distances dist[], reference
// rows idx[] counted from 0), the `keep` with the smallest locally scaled
// values d^2 / sigma_i / sigma_j, into chosen[0, keep) by (distance, row
// number). (value, column) pairs in lexicographic order are R's stable order
// by value, so the chosen set is the `keep` smallest pairs.
inline void choose_locally_scaled(const double* dist, const int* idx, std::size_t first, std::size_t k,
                                  double sigma_i, const double* sigma, std::size_t keep,
                                  std::vector<std::pair<double, std::size_t>>& by_scaled,
                                  std::vector<ScaledChoice>& chosen) {
  by_scaled.resize(k - first);
  for (std::size_t c = first; c < k; ++c) {
    by_scaled[c - first] = {locally_scaled(dist[c], sigma_i, sigma[idx[c]]), c};
  }
  if (keep < by_scaled.size()) {
    std::nth_element(by_scaled.begin(), by_scaled.begin() + static_cast<std::ptrdiff_t>(keep), by_scaled.end());
  }
  chosen.resize(keep);
  for (std::size_t r = 0; r < keep; ++r) {
    const std::size_t c = by_scaled[r].second;
    chosen[r] = {dist[c], idx[c], c};
  }
  std::sort(chosen.begin(), chosen.end());
}

}  // namespace detail

// The locally scaled graph: n x n_neighbors into out_idx / out_dist, from the
// first g.k columns of an extended graph (self in column 0).
template <typename Executor>
void locally_scaled_graph(const GraphView& g, std::size_t n_neighbors,
                          std::size_t scale_from, std::size_t scale_to,
                          int* out_idx, double* out_dist, Executor& executor) {
  if (n_neighbors < 1 || n_neighbors > g.k) {
    throw std::invalid_argument("n_neighbors must be between 1 and the graph's columns");
  }
  const std::vector<double> sigma = local_scales(g, scale_from, scale_to, executor);
  const std::size_t n = g.n, k = g.k, keep = n_neighbors - 1;
  batched_for(executor, n, 8192, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, std::size_t>> by_scaled;
    std::vector<detail::ScaledChoice> chosen;
    // Rows are read a block at a time, column by column, into row-major
    // scratch: reading one row across k columns of R's column-major
    // matrices would touch k distant cache lines.
    constexpr std::size_t block = 128;
    std::vector<double> dist_rows(block * k);
    std::vector<int> idx_rows(block * k);
    for (std::size_t b0 = begin; b0 < end; b0 += block) {
      const std::size_t b1 = std::min(end, b0 + block);
      for (std::size_t c = 0; c < k; ++c) {
        for (std::size_t i = b0; i < b1; ++i) {
          dist_rows[(i - b0) * k + c] = g.dist[i + c * n];
          idx_rows[(i - b0) * k + c] = g.idx[i + c * n] - g.base;
        }
      }
      for (std::size_t i = b0; i < b1; ++i) {
        const double* dist = &dist_rows[(i - b0) * k];
        int* idx = &idx_rows[(i - b0) * k];
        detail::choose_locally_scaled(dist, idx, 1, k, sigma[i], sigma.data(), keep, by_scaled, chosen);
        for (std::size_t c = 0; c < keep; ++c) {
          const std::size_t col = chosen[c].col;
          out_idx[i + (c + 1) * n] = idx[col] + g.base;
          out_dist[i + (c + 1) * n] = dist[col];
        }
        out_idx[i] = idx[0] + g.base;
        out_dist[i] = dist[0];
      }
    }
  });
}

// The locally scaled neighbours of query rows among reference rows, defined
// as for a reference row: `q` (m x k) lists each query row's k nearest
// reference rows (no self column: a query row is not a reference row),
// `sigma` (n_ref) the reference rows' local scales. A query row's own scale
// is the mean distance to the neighbours a reference row's columns
// scale_from..scale_to would hold, counting the row itself as column 1
// (distance 0): by default its 4th to 6th nearest reference rows. Each
// candidate j scores d^2 / sigma_q / sigma_j; the n_neighbors best, by
// distance, go to out_idx / out_dist (m x n_neighbors, column-major,
// reference rows counted from q.base).
template <typename Executor>
void locally_scaled_query(const GraphView& q, const double* sigma, std::size_t n_ref, std::size_t n_neighbors,
                          std::size_t scale_from, std::size_t scale_to, int* out_idx, double* out_dist,
                          Executor& executor) {
  if (n_neighbors < 1 || n_neighbors > q.k) {
    throw std::invalid_argument("n_neighbors must be between 1 and the query graph's columns");
  }
  if (scale_from < 1 || scale_from > scale_to || scale_to > q.k + 1) {
    throw std::invalid_argument("the local scale's columns must satisfy 1 <= from <= to <= the query graph's columns + 1");
  }
  for (std::size_t e = 0; e < q.n * q.k; ++e) {
    const long v = static_cast<long>(q.idx[e]) - q.base;
    if (v < 0 || v >= static_cast<long>(n_ref)) throw std::invalid_argument("the query graph has indices outside the reference rows");
  }
  const std::size_t m = q.n, k = q.k;
  const long double count = static_cast<long double>(scale_to - scale_from + 1);
  batched_for(executor, m, 8192, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, std::size_t>> by_scaled;
    std::vector<detail::ScaledChoice> chosen;
    std::vector<double> dist(k);
    std::vector<int> idx(k);
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t c = 0; c < k; ++c) {
        dist[c] = q.dist[i + c * m];
        idx[c] = q.idx[i + c * m] - q.base;
      }
      // As local_scales() sums a reference row's columns, the row itself
      // (column 1, distance 0) included.
      long double sum = 0.0L;
      for (std::size_t c = scale_from; c <= scale_to; ++c) sum += c == 1 ? 0.0 : dist[c - 2];
      const double sigma_i = std::max(static_cast<double>(sum / count), min_local_scale);
      detail::choose_locally_scaled(dist.data(), idx.data(), 0, k, sigma_i, sigma, n_neighbors, by_scaled, chosen);
      for (std::size_t c = 0; c < n_neighbors; ++c) {
        out_idx[i + c * m] = idx[chosen[c].col] + q.base;
        out_dist[i + c * m] = dist[chosen[c].col];
      }
    }
  });
}

}  // namespace lsnn

#endif  // LSNN_LOCAL_SCALING_H
