// Reordering the neighbours within each row of a graph.
//
// Orders are stable: neighbours with equal sort values keep their order in
// the input row (as R's order() does, in both directions).
#ifndef LSNN_GRAPH_SORT_H
#define LSNN_GRAPH_SORT_H

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

#include "graph.h"
#include "parallel.h"

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

}  // namespace lsnn

#endif  // LSNN_GRAPH_SORT_H
