// The kNN graph every lsnn function returns, the view of a graph the caller
// owns, and the order of neighbours.
//
// A graph stores, for each of n rows, k neighbours: column 0 is the row itself
// at distance 0, the other columns follow in increasing distance, ties broken
// by the smaller index. The layout is R's (column-major n x k) with 0-based
// indices; the glue adds 1.
#ifndef LSNN_GRAPH_H
#define LSNN_GRAPH_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace lsnn {

struct KnnGraph {
  std::size_t n = 0;
  std::size_t k = 0;
  std::vector<int> idx;      // n x k, column-major, 0-based
  std::vector<double> dist;  // n x k, column-major

  KnnGraph() = default;
  KnnGraph(std::size_t n_rows, std::size_t n_cols)
      : n(n_rows), k(n_cols), idx(n_rows * n_cols), dist(n_rows * n_cols) {}

  int& index(std::size_t i, std::size_t j) { return idx[i + j * n]; }
  double& distance(std::size_t i, std::size_t j) { return dist[i + j * n]; }
  int index(std::size_t i, std::size_t j) const { return idx[i + j * n]; }
  double distance(std::size_t i, std::size_t j) const { return dist[i + j * n]; }
};

// A graph owned by the caller (R's matrices, read in place): column-major
// n x k idx and dist, indices counted from `base` (1 when they come from R).
// Without `self_first` every column is a neighbour: the graph of new rows
// against reference rows, whose indices are the reference's.
struct GraphView {
  const int* idx;
  const double* dist;
  std::size_t n;
  std::size_t k;
  int base;
  bool self_first = true;
};

// The total order of neighbours: by value, then by index.
template <typename T>
inline bool neighbour_before(T a_value, int a_index, T b_value, int b_index) {
  return a_value < b_value || (a_value == b_value && a_index < b_index);
}

}  // namespace lsnn

#endif  // LSNN_GRAPH_H
