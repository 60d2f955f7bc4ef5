// The kNN graph every lsnn function returns, and the bounded candidate lists
// searches build it from.
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

// The total order of neighbours: by value, then by index.
template <typename T>
inline bool neighbour_before(T a_value, int a_index, T b_value, int b_index) {
  return a_value < b_value || (a_value == b_value && a_index < b_index);
}

// For every row, the `capacity` smallest (value, index) pairs pushed so far,
// as max-heaps in one flat array. The kept set depends only on what was
// pushed, never on the order, so parallel schedules give identical results.
template <typename T>
class NeighbourHeaps {
 public:
  NeighbourHeaps(std::size_t n, std::size_t capacity)
      : capacity_(capacity), value_(n * capacity), index_(n * capacity), size_(n, 0) {}

  std::size_t capacity() const { return capacity_; }
  std::size_t size(std::size_t row) const { return size_[row]; }
  bool full(std::size_t row) const { return size_[row] == capacity_; }

  // The largest kept value, or +inf while the list has room.
  T threshold(std::size_t row) const {
    return full(row) && capacity_ > 0 ? value_[row * capacity_] : std::numeric_limits<T>::infinity();
  }
  T top_value(std::size_t row) const { return value_[row * capacity_]; }
  int top_index(std::size_t row) const { return index_[row * capacity_]; }

  const T* values(std::size_t row) const { return &value_[row * capacity_]; }
  const int* indices(std::size_t row) const { return &index_[row * capacity_]; }

  bool contains(std::size_t row, int index) const {
    const int* ix = indices(row);
    return std::find(ix, ix + size_[row], index) != ix + size_[row];
  }

  // Returns true when (value, index) entered the list. Callers that may push
  // the same index twice check contains() first.
  bool push(std::size_t row, T value, int index) {
    if (capacity_ == 0) return false;
    T* v = &value_[row * capacity_];
    int* ix = &index_[row * capacity_];
    std::size_t& n = size_[row];
    if (n < capacity_) {
      std::size_t c = n++;
      while (c > 0) {
        const std::size_t p = (c - 1) / 2;
        if (!neighbour_before(v[p], ix[p], value, index)) break;
        v[c] = v[p];
        ix[c] = ix[p];
        c = p;
      }
      v[c] = value;
      ix[c] = index;
      return true;
    }
    if (!neighbour_before(value, index, v[0], ix[0])) return false;
    std::size_t c = 0;
    for (;;) {
      std::size_t child = 2 * c + 1;
      if (child >= n) break;
      if (child + 1 < n && neighbour_before(v[child], ix[child], v[child + 1], ix[child + 1])) ++child;
      if (!neighbour_before(value, index, v[child], ix[child])) break;
      v[c] = v[child];
      ix[c] = ix[child];
      c = child;
    }
    v[c] = value;
    ix[c] = index;
    return true;
  }

 private:
  std::size_t capacity_;
  std::vector<T> value_;
  std::vector<int> index_;
  std::vector<std::size_t> size_;
};

}  // namespace lsnn

#endif  // LSNN_GRAPH_H
