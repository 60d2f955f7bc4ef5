// The overlap of two neighbour graphs: how many of each row's first k
// neighbours the two share.
#ifndef LSNN_NEIGHBOUR_OVERLAP_H
#define LSNN_NEIGHBOUR_OVERLAP_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "../base/graph.h"
#include "../base/parallel.h"

namespace lsnn {

// Mean over rows of |A_i ∩ B_i| / k, where A_i and B_i are the row numbers
// in columns first..first + k - 1 of the two graphs, each counted once; with
// skip_self, the row itself is not counted (the quality measures compare the
// neighbours of a row, not the row).
template <typename Executor>
double mean_shared_neighbours(const GraphView& a, const GraphView& b, std::size_t first,
                              std::size_t k, bool skip_self, Executor& executor) {
  std::vector<double> row_share(a.n);
  executor.parallel_for(0, a.n, [&](std::size_t begin, std::size_t end) {
    std::vector<int> x(k), y(k);
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t c = 0; c < k; ++c) {
        x[c] = a.idx[i + (first + c) * a.n] - a.base;
        y[c] = b.idx[i + (first + c) * b.n] - b.base;
      }
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      const auto xe = std::unique(x.begin(), x.end());
      const auto ye = std::unique(y.begin(), y.end());
      const int self = skip_self ? static_cast<int>(i) : -1;
      std::size_t common = 0;
      for (auto p = x.begin(), q = y.begin(); p != xe && q != ye;) {
        if (*p < *q) {
          ++p;
        } else if (*q < *p) {
          ++q;
        } else {
          if (*p != self) ++common;
          ++p;
          ++q;
        }
      }
      row_share[i] = static_cast<double>(common) / static_cast<double>(k);
    }
  }, 1024);
  // Summed in row order so the result does not depend on the threads.
  double total = 0.0;
  for (double v : row_share) total += v;
  return a.n > 0 ? total / static_cast<double>(a.n) : 0.0;
}

// Mean over rows of |first k of a ∩ first k of b| / k (the row itself counts
// like any other entry).
template <typename Executor>
double neighbour_overlap(const GraphView& a, const GraphView& b, std::size_t k,
                         Executor& executor) {
  return mean_shared_neighbours(a, b, 0, k, false, executor);
}

}  // namespace lsnn

#endif  // LSNN_NEIGHBOUR_OVERLAP_H
