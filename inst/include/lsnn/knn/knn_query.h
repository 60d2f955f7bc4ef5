// Nearest reference rows of query rows: the exact search and the search over
// the reference's neighbour graph.
//
// Both take ONE RowData holding the reference rows and the query rows (for
// lsnn's index: the reference rows [0, n_ref) stacked over the query rows).
// Exact distances are computed from the data as given (times exact powers
// of two), so they do not depend on which other rows share the RowData: a
// search over any stack of rows reports the same distances, bit for bit.
// Row numbers in and out are those of the RowData.
//
// exact_knn_query(): the reference rows are a range of the RowData, the
// query rows another range, which may overlap it or equal it (a query row
// never lists itself). Blocks of query rows are scored against blocks of
// reference rows by the float tiles of exact_knn.h, each query block owned
// by one task; then each query row's candidates are recomputed in double,
// proven or refined (exact_knn.h's finish_row()). The result is, for every
// query row, the k nearest reference rows by (exact distance, row number),
// as brute force gives them, ties included. It serves a sharded search too:
// a shard's query rows against a shard's reference rows, with `exclude`
// naming, per query row, a reference row to leave out (the query row's own
// copy among the reference rows).
//
// approx_knn_query(): a best-first search over the reference's kNN graph
// augmented with its reverse edges (SearchGraph), as pynndescent and
// rnndescent query: each query starts from a seeded random sample of
// reference rows (the entry points, scored by one matrix product per block
// of queries), keeps its k best rows found so far and a queue of rows to
// expand, nearest first, and stops when the nearest unexpanded row is
// farther than the k-th best by more than the slack `epsilon` (relative,
// in score space). Candidates are ranked on single-precision scores
// (score_space.h); the distances returned are recomputed in double.
// Queries are independent: the result is the same for any number of threads.
#ifndef LSNN_KNN_QUERY_H
#define LSNN_KNN_QUERY_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "distance.h"
#include "exact_knn.h"
#include "../base/graph.h"
#include "neighbour_heaps.h"
#include "../base/parallel.h"
#include "../base/random.h"
#include "score_space.h"

namespace lsnn {

// Rows [begin, end) of a RowData.
struct RowRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
};

struct KnnQueryStats {
  std::size_t query_block_rows = 0;
  std::size_t reference_block_rows = 0;
  std::size_t rows_refined = 0;     // exact: rows whose proof failed
  std::size_t rows_exhaustive = 0;  // approximate: rows searched by brute force
  double mean_scored = 0.0;         // approximate: reference rows scored per query
};

namespace detail {

inline void check_query_ranges(const RowData& data, const RowRange& reference, const RowRange& query,
                               std::size_t k) {
  if (reference.begin > reference.end || reference.end > data.n() || query.begin > query.end ||
      query.end > data.n()) {
    throw std::invalid_argument("the reference and query rows must be ranges of the data");
  }
  if (k < 1 || k > reference.size()) {
    throw std::invalid_argument("k must be between 1 and the number of reference rows");
  }
}

// The reference rows query row i is searched among, less what it excludes;
// throws when fewer than k remain.
inline SearchRange query_range(const RowRange& reference, std::size_t i, const Exclusion& exclude,
                               std::size_t k) {
  const SearchRange among{reference.begin, reference.end, exclude.row_skip(i)};
  if (among.count(i) < k) {
    throw std::invalid_argument("k is more than the reference rows left once a query row's own are excluded");
  }
  return among;
}

// The k nearest candidates of each row of `rows` (its list in heap row
// i - rows.begin, searched among(i)) into graph row i - rows.begin, by
// finish_row(); a row under a ceiling with fewer ends in index -1 at
// distance +inf. Returns how many rows needed refining.
template <typename Among, typename Executor>
std::size_t finish_query_rows(const RowData& data, const RowRange& rows, const NeighbourHeaps<>& heaps,
                              std::size_t k, Among among, KnnGraph& graph, Executor& executor) {
  std::vector<unsigned char> refined(rows.size(), 0);
  batched_for(executor, rows.size(), 4096, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> cand;
    TileBuffers buf;
    for (std::size_t q = begin; q < end; ++q) {
      const std::size_t i = rows.begin + q;
      refined[q] = finish_row(data, i, heaps, q, among(i), k, buf, cand);
      data.report_distances(cand, cand.size());
      for (std::size_t c = 0; c < cand.size(); ++c) {
        graph.index(q, c) = cand[c].second;
        graph.distance(q, c) = cand[c].first;
      }
      for (std::size_t c = cand.size(); c < k; ++c) {
        graph.index(q, c) = -1;
        graph.distance(q, c) = std::numeric_limits<double>::infinity();
      }
    }
  });
  std::size_t n_refined = 0;
  for (unsigned char e : refined) n_refined += e;
  return n_refined;
}

// Ceilings from bounds on the distance (one per row of `rows`, null for
// none): every row whose exact distance is within the bound scores at most
// bound + score_tolerance in float, so nothing within it is refused. Rows
// the float scores cannot rank, and infinite bounds, get none.
inline void set_ceilings(const RowData& data, const RowRange& rows, const double* bound,
                         NeighbourHeaps<>& heaps) {
  if (bound == nullptr) return;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t i = rows.begin + r;
    if (!(bound[r] >= 0.0) || !std::isfinite(bound[r]) || data.needs_exact_search(i)) continue;
    const double score = data.score_bound_of_distance(bound[r]) + data.score_tolerance(i);
    const float ceiling = std::nextafter(static_cast<float>(score), std::numeric_limits<float>::infinity());
    if (std::isfinite(ceiling)) heaps.set_ceiling(r, ceiling);
  }
}

}  // namespace detail

// The k nearest rows of `reference` for every row of `query`, by (exact
// distance, row number): a (query.size() x k) graph of RowData row numbers
// and distances, nearest first, with no self column. A query row never lists
// itself (when the ranges overlap) nor, when `exclude` is given,
// exclude[q - query.begin] (a row number, or -1 for none). `block_rows` = 0
// picks the query block size automatically.
template <typename Executor>
KnnGraph exact_knn_query(const RowData& data, const RowRange& reference, const RowRange& query,
                         std::size_t k, const int* exclude, Executor& executor,
                         KnnQueryStats* stats = nullptr, std::size_t block_rows = 0) {
  detail::check_query_ranges(data, reference, query, k);
  const std::size_t m = query.size();
  const detail::Exclusion excl{exclude, query.begin};
  for (std::size_t i = query.begin; i < query.end; ++i) detail::query_range(reference, i, excl, k);
  KnnQueryStats local;
  KnnQueryStats& st = stats ? *stats : local;
  KnnGraph graph(m, k);
  if (m == 0) return graph;

  NeighbourHeaps<> heaps(m, detail::candidate_capacity(k, reference.size()), data.kernels());
  // Query blocks are the parallel tasks (each owns its rows' lists): small
  // enough that every thread has several; reference blocks as large as the
  // all-pairs search uses.
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::size_t rb = data.sparse() ? 256 : 512;
  std::size_t qb = block_rows;
  if (qb == 0) {
    qb = rb;
    while (qb > 32 && m < qb * 4 * n_threads) qb /= 2;
  }
  const std::size_t n_qblocks = (m + qb - 1) / qb;
  const std::size_t n_rblocks = (reference.size() + rb - 1) / rb;
  st.query_block_rows = qb;
  st.reference_block_rows = rb;
  // A batch runs every query block against a span of reference blocks, about
  // 32 tiles per thread, so that Ctrl-C is seen between batches.
  const std::size_t span = std::max<std::size_t>(1, (32 * n_threads + n_qblocks - 1) / n_qblocks);
  Phase<Executor> phase(executor, "exact kNN query", n_rblocks);
  for (std::size_t r = 0; r < n_rblocks; r += span) {
    const std::size_t r_end = std::min(n_rblocks, r + span);
    executor.parallel_for(0, n_qblocks, [&](std::size_t g0, std::size_t g1) {
      detail::TileBuffers buf;
      for (std::size_t g = g0; g < g1; ++g) {
        const std::size_t a0 = query.begin + g * qb, a1 = std::min(query.end, a0 + qb);
        for (std::size_t t = r; t < r_end; ++t) {
          const std::size_t b0 = reference.begin + t * rb, b1 = std::min(reference.end, b0 + rb);
          detail::score_tile(data, a0, a1, b0, b1, buf);
          detail::offer_to_rows(data, heaps, query.begin, a0, a1, b0, b1, excl, buf);
        }
      }
    });
    phase.set(r_end);
  }

  st.rows_refined = detail::finish_query_rows(
      data, query, heaps, k, [&](std::size_t i) { return detail::query_range(reference, i, excl, k); },
      graph, executor);
  std::ostringstream msg;
  msg << "exact kNN query: " << m << " rows against " << reference.size() << ", k = " << k << " ("
      << data.kernels().name << " kernels); " << st.rows_refined << " rows needed a second, wider pass";
  phase.finish(msg.str());
  return graph;
}

// Both halves of the all-pairs search between two disjoint ranges of rows,
// each pair scored once (as exact_knn() does within one range): for every
// row of `a` its k_a nearest rows of `b`, and for every row of `b` its k_b
// nearest rows of `a`, by (exact distance, row number), without self
// columns. The lists of a row of `a` are those exact_knn_query(data, b, a,
// k_a) gives, bit for bit; this one does half the work of the two queries,
// which is what makes a sharded exact search (every pair of shards) cost no
// more than the search in memory. Returns {a's graph, b's graph}.
//
// Bounds (optional, one distance per row of a and of b; null for none): a
// row lists only rows at most its bound away, so fewer than k where fewer
// are that near (index -1, distance +inf fill the rest). In a search split
// into parts, a row's k-th distance among the rows of its own part bounds
// its distance to any of its true k nearest: most candidates fall away
// before they reach a list, and no true neighbour is lost.
template <typename Executor>
std::pair<KnnGraph, KnnGraph> exact_knn_between(const RowData& data, const RowRange& a,
                                                const RowRange& b, std::size_t k_a,
                                                std::size_t k_b, Executor& executor,
                                                const double* bound_a = nullptr,
                                                const double* bound_b = nullptr) {
  detail::check_query_ranges(data, b, a, k_a);
  detail::check_query_ranges(data, a, b, k_b);
  if (a.begin < b.end && b.begin < a.end && a.size() > 0 && b.size() > 0) {
    throw std::invalid_argument("the two ranges of rows must not overlap");
  }
  std::pair<KnnGraph, KnnGraph> out{KnnGraph(a.size(), k_a), KnnGraph(b.size(), k_b)};
  if (a.size() == 0 || b.size() == 0) return out;
  NeighbourHeaps<> heaps_a(a.size(), detail::candidate_capacity(k_a, b.size()), data.kernels());
  NeighbourHeaps<> heaps_b(b.size(), detail::candidate_capacity(k_b, a.size()), data.kernels());
  detail::set_ceilings(data, a, bound_a, heaps_a);
  detail::set_ceilings(data, b, bound_b, heaps_b);
  const std::size_t bs = data.sparse() ? 256 : 512;
  const std::size_t na = (a.size() + bs - 1) / bs, nb = (b.size() + bs - 1) / bs;
  // Round t holds the tiles (i, j) with (i - j) mod L == t, L = max(na, nb):
  // no two share a block of either range, so a round runs without locks.
  const std::size_t L = std::max(na, nb);
  Phase<Executor> phase(executor, "exact kNN between ranges", L);
  for (std::size_t t = 0; t < L; ++t) {
    executor.parallel_for(0, na, [&](std::size_t i0, std::size_t i1) {
      detail::TileBuffers buf;
      for (std::size_t i = i0; i < i1; ++i) {
        const std::size_t j = (i + L - t) % L;
        if (j >= nb) continue;
        const std::size_t a0 = a.begin + i * bs, a1 = std::min(a.end, a0 + bs);
        const std::size_t b0 = b.begin + j * bs, b1 = std::min(b.end, b0 + bs);
        detail::score_tile(data, a0, a1, b0, b1, buf);
        detail::offer_to_rows(data, heaps_a, a.begin, a0, a1, b0, b1, detail::Exclusion(), buf);
        detail::offer_to_columns(data, heaps_b, a0, a1, b0, b1, buf, b.begin);
      }
    });
    phase.set(t + 1);
  }
  detail::finish_query_rows(
      data, a, heaps_a, k_a, [&](std::size_t) { return detail::SearchRange{b.begin, b.end, -1}; },
      out.first, executor);
  detail::finish_query_rows(
      data, b, heaps_b, k_b, [&](std::size_t) { return detail::SearchRange{a.begin, a.end, -1}; },
      out.second, executor);
  std::ostringstream msg;
  msg << "exact kNN between ranges: " << a.size() << " and " << b.size() << " rows, k = " << k_a
      << " and " << k_b << " (" << data.kernels().name << " kernels)";
  phase.finish(msg.str());
  return out;
}

// The graph the approximate query walks: for each reference row, its first
// `degree` neighbours and up to `degree` reverse neighbours (the rows that
// list it among theirs, nearest first), as adjacency lists of reference
// row numbers counted from 0.
struct SearchGraph {
  std::vector<std::size_t> start;  // n + 1 offsets into adj
  std::vector<int> adj;
  std::size_t n() const { return start.empty() ? 0 : start.size() - 1; }
};

// From a kNN graph of the reference rows (the row itself in column 0).
inline SearchGraph build_search_graph(const GraphView& g, std::size_t degree) {
  const std::size_t n = g.n, f = std::min(degree, g.k > 0 ? g.k - 1 : 0);
  for (std::size_t e = 0; e < n * g.k; ++e) {
    const long v = static_cast<long>(g.idx[e]) - g.base;
    if (v < 0 || v >= static_cast<long>(n)) throw std::invalid_argument("the graph has indices outside its rows");
  }
  auto fwd = [&](std::size_t i, std::size_t c) { return g.idx[i + (c + 1) * n] - g.base; };
  // Reverse edges, gathered by target in order of (distance, source).
  std::vector<std::size_t> rcount(n + 1, 0);
  for (std::size_t c = 0; c < f; ++c) {
    for (std::size_t i = 0; i < n; ++i) ++rcount[static_cast<std::size_t>(fwd(i, c)) + 1];
  }
  for (std::size_t j = 0; j < n; ++j) rcount[j + 1] += rcount[j];
  std::vector<std::pair<double, int>> rev(rcount[n]);
  {
    std::vector<std::size_t> fill(rcount.begin(), rcount.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t c = 0; c < f; ++c) {
        rev[fill[static_cast<std::size_t>(fwd(i, c))]++] = {g.dist[i + (c + 1) * n], static_cast<int>(i)};
      }
    }
  }
  SearchGraph sg;
  sg.start.assign(n + 1, 0);
  sg.adj.reserve(n * 2 * f);
  std::vector<int> mark(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    sg.start[i] = sg.adj.size();
    mark[i] = static_cast<int>(i);
    for (std::size_t c = 0; c < f; ++c) {
      const int v = fwd(i, c);
      if (mark[static_cast<std::size_t>(v)] != static_cast<int>(i)) {
        mark[static_cast<std::size_t>(v)] = static_cast<int>(i);
        sg.adj.push_back(v);
      }
    }
    auto r0 = rev.begin() + static_cast<std::ptrdiff_t>(rcount[i]);
    auto r1 = rev.begin() + static_cast<std::ptrdiff_t>(rcount[i + 1]);
    std::sort(r0, r1);
    std::size_t added = 0;
    for (auto r = r0; r != r1 && added < f; ++r) {
      if (mark[static_cast<std::size_t>(r->second)] != static_cast<int>(i)) {
        mark[static_cast<std::size_t>(r->second)] = static_cast<int>(i);
        sg.adj.push_back(r->second);
        ++added;
      }
    }
  }
  sg.start[n] = sg.adj.size();
  return sg;
}

struct GraphQueryParams {
  double epsilon = 0.02;       // relative slack of the stopping rule
  std::size_t n_entry = 0;     // entry points; 0: sqrt(n_ref), within [64, 256]
  std::uint64_t seed = 0;
};

namespace detail {

// One thread's state for the graph search.
struct GraphSearchState {
  std::vector<std::uint32_t> visited;  // visited[j] == stamp: j was scored
  std::uint32_t stamp = 0;
  std::vector<std::pair<float, int>> best;   // max-heap of the k best
  std::vector<std::pair<float, int>> queue;  // min-heap of rows to expand
  std::vector<float> entry_scores;
  std::vector<int> query_ids;
  ScoreWorkspace score_ws;
  std::vector<int> fresh;
  std::vector<std::pair<double, int>> cand;
  TileBuffers buf;
  std::size_t scored = 0;

  void next_query(std::size_t n_ref) {
    if (visited.size() != n_ref || ++stamp == 0) {
      visited.assign(n_ref, 0);
      stamp = 1;
    }
    best.clear();
    queue.clear();
  }
};

struct WorseFirst {  // max-heap on (score, index)
  bool operator()(const std::pair<float, int>& a, const std::pair<float, int>& b) const {
    return neighbour_before(a.first, a.second, b.first, b.second);
  }
};
struct NearerFirst {  // min-heap on (score, index)
  bool operator()(const std::pair<float, int>& a, const std::pair<float, int>& b) const {
    return neighbour_before(b.first, b.second, a.first, a.second);
  }
};

// Offers reference row j (scored s) to the search of one query: it enters
// the k best and the queue when it beats the current bound.
inline void offer_found(GraphSearchState& st, std::size_t k, double epsilon, float s, int j) {
  if (st.best.size() == k) {
    const float top = st.best.front().first;
    const float bound = top + static_cast<float>(epsilon) * std::fabs(top);
    if (!(s < bound)) return;
    if (neighbour_before(s, j, top, st.best.front().second)) {
      std::pop_heap(st.best.begin(), st.best.end(), WorseFirst());
      st.best.back() = {s, j};
      std::push_heap(st.best.begin(), st.best.end(), WorseFirst());
    }
  } else {
    st.best.emplace_back(s, j);
    std::push_heap(st.best.begin(), st.best.end(), WorseFirst());
  }
  st.queue.emplace_back(s, j);
  std::push_heap(st.queue.begin(), st.queue.end(), NearerFirst());
}

// The best-first search of query row q (a RowData row) over the graph of the
// reference rows [ref0, ref0 + graph.n()), from entry points already
// scored (entries[e] with scores entry_scores[e]).
inline void graph_search(const SearchGraph& graph, const Scorer& score, std::size_t ref0, std::size_t q,
                         const int* entries, const float* entry_scores, std::size_t n_entries, std::size_t k,
                         double epsilon, GraphSearchState& st) {
  st.next_query(graph.n());
  for (std::size_t e = 0; e < n_entries; ++e) {
    st.visited[static_cast<std::size_t>(entries[e])] = st.stamp;
    offer_found(st, k, epsilon, entry_scores[e], entries[e]);
  }
  while (!st.queue.empty()) {
    const std::pair<float, int> c = st.queue.front();
    if (st.best.size() == k) {
      const float top = st.best.front().first;
      if (!(c.first < top + static_cast<float>(epsilon) * std::fabs(top))) break;
    }
    std::pop_heap(st.queue.begin(), st.queue.end(), NearerFirst());
    st.queue.pop_back();
    const std::size_t u = static_cast<std::size_t>(c.second);
    // The row's unvisited neighbours, all fetched before any is scored: the
    // rows are far apart in memory, and their loads then overlap.
    st.fresh.clear();
    for (std::size_t t = graph.start[u]; t < graph.start[u + 1]; ++t) {
      const std::size_t v = static_cast<std::size_t>(graph.adj[t]);
      if (st.visited[v] == st.stamp) continue;
      st.visited[v] = st.stamp;
      st.fresh.push_back(static_cast<int>(v));
      score.prefetch(ref0 + v);
    }
    st.scored += st.fresh.size();
    for (const int v : st.fresh) {
      offer_found(st, k, epsilon, score.score_pair(q, ref0 + static_cast<std::size_t>(v)), v);
    }
  }
}

// Each reference row's part of the search graph (rows joined by edges,
// either way), named by its first row (the lowest number).
inline std::vector<int> graph_parts(const SearchGraph& graph) {
  const std::size_t n = graph.n();
  std::vector<int> part(n);
  for (std::size_t i = 0; i < n; ++i) part[i] = static_cast<int>(i);
  auto root = [&](std::size_t i) {
    while (part[i] != static_cast<int>(i)) {
      part[i] = part[static_cast<std::size_t>(part[i])];
      i = static_cast<std::size_t>(part[i]);
    }
    return i;
  };
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t t = graph.start[i]; t < graph.start[i + 1]; ++t) {
      const std::size_t a = root(i), b = root(static_cast<std::size_t>(graph.adj[t]));
      if (a != b) part[std::max(a, b)] = static_cast<int>(std::min(a, b));
    }
  }
  for (std::size_t i = 0; i < n; ++i) part[i] = static_cast<int>(root(i));
  return part;
}

// The entry points of the graph search (offsets in the reference range), in
// increasing order: a seeded sample of reference rows, and the first row of
// each part of the graph the sample misses, of the largest 4,096 parts (a
// walk never leaves its part: the clusters of a 2-D layout are parts).
inline std::vector<int> query_entry_points(const SearchGraph& graph, const GraphQueryParams& params) {
  const std::size_t n_ref = graph.n();
  std::size_t n_entry = params.n_entry;
  // (The walk finds its way from any entry point in its part, so a few
  // hundred suffice: more cost their scoring for every query without
  // raising the recall.)
  if (n_entry == 0) {
    n_entry = std::min<std::size_t>(256, std::max<std::size_t>(64, static_cast<std::size_t>(std::sqrt(static_cast<double>(n_ref)))));
  }
  n_entry = std::min(n_entry, n_ref);
  std::vector<int> entries(n_ref);
  for (std::size_t j = 0; j < n_ref; ++j) entries[j] = static_cast<int>(j);
  SplitMix64 rng(hash64(params.seed, 11));
  for (std::size_t s = 0; s < n_entry; ++s) std::swap(entries[s], entries[s + rng.below(n_ref - s)]);
  entries.resize(n_entry);
  const std::vector<int> part = graph_parts(graph);
  std::vector<std::size_t> size(n_ref, 0);
  for (std::size_t i = 0; i < n_ref; ++i) ++size[static_cast<std::size_t>(part[i])];
  std::vector<int> firsts;
  for (std::size_t i = 0; i < n_ref; ++i) {
    if (part[i] == static_cast<int>(i)) firsts.push_back(static_cast<int>(i));
  }
  if (firsts.size() > 1) {
    std::stable_sort(firsts.begin(), firsts.end(), [&](int a, int b) {
      return size[static_cast<std::size_t>(a)] > size[static_cast<std::size_t>(b)];
    });
    std::vector<unsigned char> hit(n_ref, 0);
    for (int e : entries) hit[static_cast<std::size_t>(part[static_cast<std::size_t>(e)])] = 1;
    const std::size_t most = 4096;
    for (std::size_t p = 0; p < std::min(most, firsts.size()); ++p) {
      if (!hit[static_cast<std::size_t>(firsts[p])]) entries.push_back(firsts[p]);
    }
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The entry points' scores for blocks of queries, by one matrix product per
// block: the entry points as data rows.
class EntryScores {
 public:
  EntryScores(const Scorer& score, const RowRange& reference, const RowRange& query,
              const std::vector<int>& entries)
      : score_(score), query_begin_(query.begin), entry_ids_(entries.size()) {
    for (std::size_t e = 0; e < entries.size(); ++e) entry_ids_[e] = static_cast<int>(reference.begin) + entries[e];
  }

  std::size_t n_entry() const { return entry_ids_.size(); }

  // The scores of the queries qs[0, mq) (offsets in the query range) into
  // state.entry_scores (mq x n_entry).
  void score(const std::size_t* qs, std::size_t mq, GraphSearchState& state) const {
    const std::size_t n_entry = entry_ids_.size();
    state.entry_scores.resize(mq * n_entry);
    state.query_ids.resize(mq);
    for (std::size_t a = 0; a < mq; ++a) state.query_ids[a] = static_cast<int>(query_begin_ + qs[a]);
    score_.score_block(RowSet::list(state.query_ids.data(), mq), RowSet::list(entry_ids_.data(), n_entry),
                       state.score_ws, state.entry_scores.data());
  }

 private:
  const Scorer& score_;
  std::size_t query_begin_;
  std::vector<int> entry_ids_;
};

// The queries [0, m) in the order of their nearest entry point (stable):
// queries searched one after the other then walk the same part of the
// graph, whose rows stay in cache.
template <typename Executor>
std::vector<std::size_t> queries_by_nearest_entry(const EntryScores& entry_scores, std::size_t m,
                                                  std::size_t block, Executor& executor) {
  const std::size_t n_entry = entry_scores.n_entry();
  const std::size_t n_blocks = (m + block - 1) / block;
  std::vector<std::size_t> order(m);
  std::vector<int> nearest(m);
  executor.parallel_for(0, n_blocks, [&](std::size_t g0, std::size_t g1) {
    GraphSearchState state;
    std::vector<std::size_t> qs;
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t q0 = g * block, q1 = std::min(m, q0 + block);
      qs.resize(q1 - q0);
      for (std::size_t a = 0; a < qs.size(); ++a) qs[a] = q0 + a;
      entry_scores.score(qs.data(), qs.size(), state);
      for (std::size_t a = 0; a < qs.size(); ++a) {
        const float* es = &state.entry_scores[a * n_entry];
        nearest[q0 + a] = static_cast<int>(std::min_element(es, es + n_entry) - es);
      }
    }
  });
  for (std::size_t q = 0; q < m; ++q) order[q] = q;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return nearest[a] < nearest[b]; });
  return order;
}

// What the search of one query row reads: the rows, the reference range and
// its graph, the entry points.
struct QueryWalk {
  const RowData& data;
  const RowRange& reference;
  const SearchGraph& graph;
  const Scorer& score;
  const std::vector<int>& entries;
  std::size_t k;
  double epsilon;
};

// The k nearest reference rows of query row i (RowData row number), by the
// graph search from the entry points' scores `entry_scores`, or exhaustively
// when the search cannot rank its rows or finds fewer than k, into
// state.cand as (reported distance, row number), nearest first. Returns
// whether the row was searched exhaustively.
inline bool answer_query_row(const QueryWalk& walk, std::size_t i, const float* entry_scores,
                             GraphSearchState& state) {
  const RowData& data = walk.data;
  const std::size_t k = walk.k;
  std::vector<std::pair<double, int>>& cand = state.cand;
  bool exhaustive;
  if (data.needs_exact_search(i)) {
    exhaustive = true;
  } else {
    graph_search(walk.graph, walk.score, walk.reference.begin, i, walk.entries.data(), entry_scores,
                 walk.entries.size(), k, walk.epsilon, state);
    exhaustive = state.best.size() < k;
  }
  if (exhaustive) {
    refine_row(data, i, {walk.reference.begin, walk.reference.end, -1}, k,
               std::numeric_limits<double>::infinity(), state.buf, cand);
  } else {
    cand.resize(k);
    for (std::size_t c = 0; c < k; ++c) {
      const std::size_t j = walk.reference.begin + static_cast<std::size_t>(state.best[c].second);
      cand[c] = {sortable_score(data.exact_score(i, j)), static_cast<int>(j)};
    }
    std::sort(cand.begin(), cand.end());
  }
  data.report_distances(cand, k);
  return exhaustive;
}

inline std::string approx_query_summary(std::size_t m, std::size_t n_ref, std::size_t k, std::size_t n_entry,
                                        double epsilon, const KnnQueryStats& st) {
  std::ostringstream msg;
  msg << std::setprecision(3) << "approx kNN query: " << m << " rows against " << n_ref << ", k = " << k
      << "; " << st.mean_scored << " reference rows scored per query (" << n_entry << " entry points, epsilon "
      << epsilon << "); " << st.rows_exhaustive << " rows searched exhaustively";
  return msg.str();
}

}  // namespace detail

// The k nearest reference rows of every query row, approximately: the
// reference rows are [reference.begin, reference.end) of the RowData,
// `graph` their search graph (build_search_graph(), rows counted from
// reference.begin). Output as exact_knn_query()'s: RowData row numbers,
// exact distances, nearest first (by distance, then row number).
template <typename Executor>
KnnGraph approx_knn_query(const RowData& data, const RowRange& reference, const RowRange& query,
                          const SearchGraph& graph, std::size_t k, const GraphQueryParams& params,
                          Executor& executor, KnnQueryStats* stats = nullptr) {
  detail::check_query_ranges(data, reference, query, k);
  const std::size_t n_ref = reference.size(), m = query.size();
  if (graph.n() != n_ref) throw std::invalid_argument("the search graph must have one row per reference row");
  if (!(params.epsilon >= 0.0)) throw std::invalid_argument("epsilon must be at least 0");
  KnnQueryStats local;
  KnnQueryStats& st = stats ? *stats : local;
  KnnGraph out(m, k);
  if (m == 0) return out;
  Phase<Executor> phase(executor, "approx kNN query", m);
  const ScoreSpace space(data, executor);
  const Scorer& score = space.scorer();
  const std::vector<int> entries = detail::query_entry_points(graph, params);
  const std::size_t n_entry = entries.size();
  const detail::EntryScores entry_scores(score, reference, query, entries);

  const std::size_t block = 64;  // queries per task
  const std::size_t n_blocks = (m + block - 1) / block;
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::vector<std::size_t> order = detail::queries_by_nearest_entry(entry_scores, m, block, executor);
  checkpoint(executor);

  const detail::QueryWalk walk{data, reference, graph, score, entries, k, params.epsilon};
  std::vector<unsigned char> exhaustive(m, 0);
  std::vector<std::size_t> scored(n_blocks, 0);
  batched_for(executor, n_blocks, 8 * n_threads, [&](std::size_t g0, std::size_t g1) {
    detail::GraphSearchState state;
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t s0 = g * block, s1 = std::min(m, s0 + block), mq = s1 - s0;
      entry_scores.score(&order[s0], mq, state);
      state.scored = 0;
      for (std::size_t a = 0; a < mq; ++a) {
        const std::size_t q = order[s0 + a], i = query.begin + q;
        exhaustive[q] = detail::answer_query_row(walk, i, &state.entry_scores[a * n_entry], state);
        for (std::size_t c = 0; c < k; ++c) {
          out.index(q, c) = state.cand[c].second;
          out.distance(q, c) = state.cand[c].first;
        }
      }
      scored[g] = state.scored;
    }
  }, [&](std::size_t done) { phase.set(std::min(m, done * block)); });

  st.rows_exhaustive = 0;
  for (unsigned char e : exhaustive) st.rows_exhaustive += e;
  double total = 0.0;
  for (std::size_t s : scored) total += static_cast<double>(s);
  st.mean_scored = total / static_cast<double>(m) + static_cast<double>(n_entry);
  phase.finish(detail::approx_query_summary(m, n_ref, k, n_entry, params.epsilon, st));
  return out;
}

}  // namespace lsnn

#endif  // LSNN_KNN_QUERY_H
