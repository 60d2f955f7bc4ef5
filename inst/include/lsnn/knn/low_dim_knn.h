// Exact k nearest neighbours of the points of a 2-D or 3-D embedding by a
// k-d tree (used by the quality measures, quality.h).
#ifndef LSNN_LOW_DIM_KNN_H
#define LSNN_LOW_DIM_KNN_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "../base/graph.h"
#include "../base/parallel.h"

namespace lsnn {

// Exact k nearest neighbours of every row of a low-dimensional embedding (a
// dense n x d matrix, column-major as R stores it), by a k-d tree searched
// in double precision: for 2-D and 3-D embeddings this is far faster than
// the tiled search of exact_knn(), whose float error bound cannot separate
// the many nearly coincident points that UMAP and t-SNE layouts produce
// (every such row falls back to a pass over all rows). The result is the
// same graph: self first, then the others by (distance, row number).
class LowDimKnn {
 public:
  LowDimKnn(const double* y, std::size_t n, std::size_t d) : n_(n), d_(d), pts_(n * d), perm_(n) {
    for (std::size_t i = 0; i < n; ++i) {
      perm_[i] = static_cast<int>(i);
      for (std::size_t c = 0; c < d; ++c) pts_[i * d + c] = y[i + c * n];
    }
    if (n > 0) build(0, n);
  }

  template <typename Executor>
  KnnGraph knn(std::size_t k, Executor& executor) const {
    if (k < 1 || k > n_) throw std::invalid_argument("k must be between 1 and the number of rows");
    KnnGraph graph(n_, k);
    const std::size_t others = k - 1;
    batched_for(executor, n_, 8192, [&](std::size_t begin, std::size_t end) {
      std::vector<std::pair<double, int>> heap;
      for (std::size_t i = begin; i < end; ++i) {
        heap.clear();
        if (others > 0) search(0, i, others, heap);
        std::sort_heap(heap.begin(), heap.end());
        graph.index(i, 0) = static_cast<int>(i);
        graph.distance(i, 0) = 0.0;
        for (std::size_t c = 0; c < others; ++c) {
          graph.index(i, c + 1) = heap[c].second;
          graph.distance(i, c + 1) = std::sqrt(heap[c].first);
        }
      }
    });
    return graph;
  }

 private:
  struct Node {
    std::size_t begin, end;
    int left = -1, right = -1;  // children (-1 in a leaf)
    std::size_t dim = 0;
    double split = 0.0;
  };

  // Splits [begin, end) of perm_ at the median of its widest coordinate;
  // returns the node's number.
  int build(std::size_t begin, std::size_t end) {
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back(Node{begin, end});
    if (end - begin <= 16) return id;
    std::size_t dim = 0;
    double widest = -1.0;
    for (std::size_t c = 0; c < d_; ++c) {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (std::size_t p = begin; p < end; ++p) {
        const double v = pts_[static_cast<std::size_t>(perm_[p]) * d_ + c];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      if (hi - lo > widest) {
        widest = hi - lo;
        dim = c;
      }
    }
    if (!(widest > 0.0)) return id;  // all rows equal: one leaf
    const std::size_t mid = begin + (end - begin) / 2;
    std::nth_element(perm_.begin() + static_cast<std::ptrdiff_t>(begin),
                     perm_.begin() + static_cast<std::ptrdiff_t>(mid),
                     perm_.begin() + static_cast<std::ptrdiff_t>(end), [&](int a, int b) {
                       return pts_[static_cast<std::size_t>(a) * d_ + dim] <
                              pts_[static_cast<std::size_t>(b) * d_ + dim];
                     });
    const double split = pts_[static_cast<std::size_t>(perm_[mid]) * d_ + dim];
    const int left = build(begin, mid);
    const int right = build(mid, end);
    nodes_[id].left = left;
    nodes_[id].right = right;
    nodes_[id].dim = dim;
    nodes_[id].split = split;
    return id;
  }

  double sqdist(std::size_t i, std::size_t j) const {
    double s = 0.0;
    for (std::size_t c = 0; c < d_; ++c) {
      const double t = pts_[i * d_ + c] - pts_[j * d_ + c];
      s += t * t;
    }
    return s;
  }

  // Rows on the far side of a split are at least |q - split| away along its
  // coordinate, and rounding is monotone, so their computed squared
  // distances are at least the computed square of that gap; "<=" keeps
  // equally distant rows with smaller numbers reachable.
  void search(int id, std::size_t i, std::size_t others,
              std::vector<std::pair<double, int>>& heap) const {
    const Node& node = nodes_[static_cast<std::size_t>(id)];
    if (node.left < 0) {
      for (std::size_t p = node.begin; p < node.end; ++p) {
        const std::size_t j = static_cast<std::size_t>(perm_[p]);
        if (j == i) continue;
        const std::pair<double, int> cand(sqdist(i, j), static_cast<int>(j));
        if (heap.size() < others) {
          heap.push_back(cand);
          std::push_heap(heap.begin(), heap.end());
        } else if (cand < heap.front()) {
          std::pop_heap(heap.begin(), heap.end());
          heap.back() = cand;
          std::push_heap(heap.begin(), heap.end());
        }
      }
      return;
    }
    const double gap = pts_[i * d_ + node.dim] - node.split;
    const int near = gap <= 0.0 ? node.left : node.right;
    const int far = gap <= 0.0 ? node.right : node.left;
    search(near, i, others, heap);
    if (heap.size() < others || gap * gap <= heap.front().first) search(far, i, others, heap);
  }

  std::size_t n_, d_;
  std::vector<double> pts_;
  std::vector<int> perm_;
  std::vector<Node> nodes_;
};

}  // namespace lsnn

#endif  // LSNN_LOW_DIM_KNN_H
