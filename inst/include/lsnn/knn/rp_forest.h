// Random-projection trees over the rows in score space (score_space.h).
//
// A random-projection tree splits the rows recursively by the hyperplane
// half-way between two random rows of the node (sparse rows and rows of
// bits: by which of the two is closer), until a node holds at most
// `leaf_size` rows. Rows close together tend to share a leaf, so each leaf is
// a good set of candidate neighbours for its rows (Dasgupta and Freund,
// 2008).
#ifndef LSNN_RP_FOREST_H
#define LSNN_RP_FOREST_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "distance.h"
#include "../base/random.h"
#include "score_space.h"

namespace lsnn {

// The leaves of one tree: rows order[leaf_start[l]] .. order[leaf_start[l+1] - 1].
struct RpTree {
  std::vector<int> order;
  std::vector<std::size_t> leaf_start;
  std::size_t n_leaves() const { return leaf_start.empty() ? 0 : leaf_start.size() - 1; }
};

namespace detail {

inline void prefetch_line(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Splits order[lo, hi) into two non-empty parts, returning the first index of
// the second part. Rows on the hyperplane go to a random side; when every
// row lands on one side (duplicates, constant data), the split is random.
inline std::size_t rp_split(const ScoreSpace& space, const float* rows, std::size_t d,
                            std::vector<int>& order, std::size_t lo,
                            std::size_t hi, SplitMix64& rng, std::vector<float>& hyperplane,
                            std::vector<float>& margin, std::vector<int>& scratch) {
  const std::size_t size = hi - lo;
  const std::size_t a = lo + rng.below(size);
  std::size_t b = lo + rng.below(size - 1);
  if (b >= a) ++b;
  const std::size_t pa = static_cast<std::size_t>(order[a]);
  const std::size_t pb = static_cast<std::size_t>(order[b]);
  margin.resize(size);
  auto row = [&](std::size_t i) { return rows + i * d; };
  if (rows != nullptr) {
    const float* xa = row(pa);
    const float* xb = row(pb);
    hyperplane.resize(d);
    double offset = 0.0;
    for (std::size_t k = 0; k < d; ++k) {
      hyperplane[k] = xa[k] - xb[k];
      offset += 0.5 * static_cast<double>(hyperplane[k]) * (static_cast<double>(xa[k]) + xb[k]);
    }
    const float off = static_cast<float>(offset);
    const DistanceKernels& kern = space.data().kernels();
    const std::size_t ahead = 4;  // rows prefetched ahead (their first lines)
    const std::size_t lines = std::min<std::size_t>(4, (d * sizeof(float) + 63) / 64);
    for (std::size_t t = lo; t < hi; ++t) {
      if (t + ahead < hi) {
        const char* next = reinterpret_cast<const char*>(row(static_cast<std::size_t>(order[t + ahead])));
        for (std::size_t l = 0; l < lines; ++l) prefetch_line(next + 64 * l);
      }
      margin[t - lo] = kern.dot_f32(hyperplane.data(), row(static_cast<std::size_t>(order[t])), d) - off;
    }
  } else {
    const RowData& data = space.data();
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t i = static_cast<std::size_t>(order[t]);
      margin[t - lo] = static_cast<float>(data.exact_score(i, pb) - data.exact_score(i, pa));
    }
  }
  // Stable partition: margin > 0 (the side of row a) first, ties by a coin.
  // Rows keep their relative order, so every node's rows stay in increasing
  // order and the projections read the data forwards.
  std::size_t left = lo;
  scratch.clear();
  for (std::size_t t = lo; t < hi; ++t) {
    const float m = margin[t - lo];
    if (m > 0.0f || (m == 0.0f && rng.coin())) {
      order[left++] = order[t];
    } else {
      scratch.push_back(order[t]);
    }
  }
  std::copy(scratch.begin(), scratch.end(), order.begin() + static_cast<std::ptrdiff_t>(left));
  if (left == lo || left == hi) {
    // Every row on one side (duplicates, constant data): random halves, in
    // increasing order again.
    for (std::size_t s = size; s > 1; --s) {
      const std::size_t r = rng.below(s);
      std::swap(order[lo + s - 1], order[lo + r]);
    }
    left = lo + size / 2;
    std::sort(order.begin() + static_cast<std::ptrdiff_t>(lo), order.begin() + static_cast<std::ptrdiff_t>(left));
    std::sort(order.begin() + static_cast<std::ptrdiff_t>(left), order.begin() + static_cast<std::ptrdiff_t>(hi));
  }
  return left;
}

}  // namespace detail

// One random-projection tree over all rows, its randomness a function of
// `seed` only. Rows in single precision are split on `rows` (n x d) when
// given (shorter rows that stand for them, such as principal coordinates),
// else on the space's own rows.
inline RpTree build_rp_tree(const ScoreSpace& space, std::size_t leaf_size, std::uint64_t seed,
                            const float* rows = nullptr, std::size_t d = 0) {
  if (rows == nullptr && space.float_rows()) {
    rows = space.row(0);
    d = space.d();
  }
  const std::size_t n = space.n();
  leaf_size = std::max<std::size_t>(leaf_size, 1);
  RpTree tree;
  tree.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) tree.order[i] = static_cast<int>(i);
  SplitMix64 rng(seed);
  std::vector<float> hyperplane, margin;
  std::vector<int> scratch;
  // Depth-first with an explicit stack; the second part is pushed first so
  // that leaves come out left to right.
  std::vector<std::pair<std::size_t, std::size_t>> stack;
  stack.emplace_back(0, n);
  tree.leaf_start.clear();
  while (!stack.empty()) {
    const auto node = stack.back();
    stack.pop_back();
    if (node.second - node.first <= leaf_size) {
      tree.leaf_start.push_back(node.first);
      continue;
    }
    const std::size_t mid = detail::rp_split(space, rows, d, tree.order, node.first, node.second,
                                             rng, hyperplane, margin, scratch);
    stack.emplace_back(mid, node.second);
    stack.emplace_back(node.first, mid);
  }
  tree.leaf_start.push_back(n);
  return tree;
}

}  // namespace lsnn

#endif  // LSNN_RP_FOREST_H
