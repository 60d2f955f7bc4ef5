// The overlap of two neighbour graphs: how many of each row's first k
// neighbours the two share.
#ifndef LSNN_NEIGHBOUR_OVERLAP_H
#define LSNN_NEIGHBOUR_OVERLAP_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "graph.h"
#include "parallel.h"

namespace lsnn {

// Mean over rows of |first k of a ∩ first k of b| / k.
template <typename Executor>
double neighbour_overlap(const GraphView& a, const GraphView& b, std::size_t k,
                         Executor& executor) {
  std::vector<double> row_overlap(a.n);
  executor.parallel_for(0, a.n, [&](std::size_t begin, std::size_t end) {
    std::vector<int> x(k), y(k);
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t c = 0; c < k; ++c) {
        x[c] = a.idx[i + c * a.n];
        y[c] = b.idx[i + c * b.n];
      }
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      // Duplicated indices within a row count once.
      const auto xe = std::unique(x.begin(), x.end());
      const auto ye = std::unique(y.begin(), y.end());
      std::size_t common = 0;
      for (auto p = x.begin(), q = y.begin(); p != xe && q != ye;) {
        if (*p < *q) {
          ++p;
        } else if (*q < *p) {
          ++q;
        } else {
          ++common;
          ++p;
          ++q;
        }
      }
      row_overlap[i] = static_cast<double>(common) / static_cast<double>(k);
    }
  }, 1024);
  // Summed in row order so the result does not depend on the threads.
  double total = 0.0;
  for (double v : row_overlap) total += v;
  return a.n > 0 ? total / static_cast<double>(a.n) : 0.0;
}

}  // namespace lsnn

#endif  // LSNN_NEIGHBOUR_OVERLAP_H
