// A numbering of the points in which neighbours are near in memory, for
// the large layouts whose pair sums read each pair's partner: PaCMAP's
// tiles (pacmap.h) hold a block's coordinates and gradients, the sampled
// steps (sampled_sgd.h) read an edge's two ends and the density term
// (density.h) every edge's partner, and a partner far from its row in the
// numbering is a cache miss. The layout
// runs in the new numbering; its caller returns the rows in the user's.
//
// The order is a breadth-first walk of the neighbour graph: points of one
// cluster (one component of the graph) come out together, and each point
// after the one that reached it. A point that no other lists as a
// neighbour (many do, in high dimensions) would be reached by nothing and
// left for the end of the walk, far from its neighbours; it is placed
// right after its first neighbour instead. Roots are taken in the order
// of the points, so the order depends on the graph alone (no seed, one
// thread).
#ifndef LSNN_RENUMBER_H
#define LSNN_RENUMBER_H

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../base/sparse.h"

namespace lsnn {

// order[p]: the point at position p of the new numbering (0-based);
// rank[i]: the position of point i (rank[order[p]] = p).
struct Renumbering {
  std::vector<int> order, rank;
};

// The breadth-first order of the n points of a graph whose point i has
// degree(i) neighbours: nb(i, c), c < degree(i), is point i's c-th
// neighbour (0-based; the point itself and out-of-range entries are
// ignored).
template <typename Degree, typename Neighbour>
Renumbering breadth_first_order_of_rows(std::size_t n, Degree degree, Neighbour nb) {
  if (n > static_cast<std::size_t>(2147483647)) throw std::invalid_argument("too many points to renumber");
  const auto valid = [n](int j, std::size_t i) {
    return j >= 0 && static_cast<std::size_t>(j) < n && static_cast<std::size_t>(j) != i;
  };
  // the points listed by none: attached, in their own order, to their
  // first neighbour (a linked list per host)
  std::vector<char> listed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0, k = degree(i); c < k; ++c) {
      const int j = nb(i, c);
      if (valid(j, i)) listed[static_cast<std::size_t>(j)] = 1;
    }
  }
  std::vector<int> first_guest(n, -1), next_guest(n, -1), last_guest(n, -1);
  std::vector<char> placed(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (listed[i]) continue;
    for (std::size_t c = 0, k = degree(i); c < k; ++c) {
      const int h = nb(i, c);
      if (!valid(h, i)) continue;
      const int g = static_cast<int>(i);
      if (last_guest[h] < 0) {
        first_guest[h] = g;
      } else {
        next_guest[last_guest[h]] = g;
      }
      last_guest[h] = g;
      placed[i] = 1;  // (it is placed with its host)
      break;
    }
  }
  std::vector<char>().swap(listed);
  std::vector<int>().swap(last_guest);
  Renumbering r;
  r.order.reserve(n);
  // the order doubles as the queue: each point is expanded in its turn
  const auto place = [&](int p) {
    r.order.push_back(p);
    for (int g = first_guest[p]; g >= 0; g = next_guest[g]) r.order.push_back(g);
  };
  std::size_t head = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (placed[root]) continue;
    placed[root] = 1;
    place(static_cast<int>(root));
    for (; head < r.order.size(); ++head) {
      const std::size_t i = static_cast<std::size_t>(r.order[head]);
      for (std::size_t c = 0, k = degree(i); c < k; ++c) {
        const int j = nb(i, c);
        if (!valid(j, i) || placed[j]) continue;
        placed[j] = 1;
        place(j);
      }
    }
  }
  // (every host is listed by its guest, so no host is a guest: each guest is
  // placed with its host)
  if (r.order.size() != n) throw std::logic_error("the renumbering lost points");
  r.rank.assign(n, 0);
  for (std::size_t p = 0; p < n; ++p) r.rank[static_cast<std::size_t>(r.order[p])] = static_cast<int>(p);
  return r;
}

// The same for a graph with k neighbours a point.
template <typename Neighbour>
Renumbering breadth_first_order(std::size_t n, std::size_t k, Neighbour nb) {
  return breadth_first_order_of_rows(n, [k](std::size_t) { return k; }, nb);
}

// The breadth-first order of the points of a square sparse matrix, over
// its stored entries (the affinities of a layout: their pattern is the
// graph's).
inline Renumbering breadth_first_order(const SparseRows& P) {
  return breadth_first_order_of_rows(
      P.n,
      [&P](std::size_t i) { return static_cast<std::size_t>(P.ptr[i + 1] - P.ptr[i]); },
      [&P](std::size_t i, std::size_t c) { return P.col[static_cast<std::size_t>(P.ptr[i]) + c]; });
}

// The square sparse matrix P with its rows and columns renumbered by r
// (entry (i, j) moves to (rank[i], rank[j])), each row's columns in
// increasing order, as the points' own order keeps them: a layout of the
// renumbered P is the layout of the renumbered points.
inline CsrMatrix renumbered(const SparseRows& P, const Renumbering& r) {
  if (r.order.size() != P.n || P.d != P.n) throw std::invalid_argument("the renumbering does not fit P");
  CsrMatrix out;
  out.n = P.n;
  out.ptr.assign(P.n + 1, 0);
  const std::size_t nnz = static_cast<std::size_t>(P.ptr[P.n]);
  out.col.resize(nnz);
  out.val.resize(nnz);
  std::vector<std::pair<int, double>> row;
  std::size_t e = 0;
  for (std::size_t p = 0; p < P.n; ++p) {
    const std::size_t i = static_cast<std::size_t>(r.order[p]);
    row.clear();
    for (int t = P.ptr[i]; t < P.ptr[i + 1]; ++t) {
      const int j = P.col[t];
      if (j < 0 || static_cast<std::size_t>(j) >= P.n) throw std::invalid_argument("a column of P lies outside it");
      row.emplace_back(r.rank[static_cast<std::size_t>(j)], P.val[t]);
    }
    std::sort(row.begin(), row.end(),
              [](const std::pair<int, double>& x, const std::pair<int, double>& y) { return x.first < y.first; });
    for (const auto& entry : row) {
      out.col[e] = entry.first;
      out.val[e] = entry.second;
      ++e;
    }
    out.ptr[p + 1] = checked_nnz(e);
  }
  return out;
}

}  // namespace lsnn

#endif  // LSNN_RENUMBER_H
