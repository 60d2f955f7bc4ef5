// Approximate k-nearest neighbours: a random-projection forest, then
// nearest-neighbour descent. approx_knn() is a short driver over the steps
// below (in detail::), each a function of its own:
//
// 1. Forest initialisation (build_forest, search_leaves). `n_trees`
//    random-projection trees (rp_forest.h) with leaves of at most
//    `leaf_size` rows; every leaf is searched exhaustively as one matrix
//    product of its gathered rows, and each row keeps its k - 1 best
//    candidates in a bounded heap.
// 2. Random fill (random_fill): rows left with short lists get random rows.
// 3. Descent (descend; Dong, Moses and Li, 2011). In each iteration, every
//    row's neighbours and reverse neighbours (reverse_lists) are candidates
//    for each other (the local join: the neighbour of a neighbour is likely
//    a neighbour). Each list entry carries a flag, new until it has taken
//    part in a join; up to `max_candidates` new and as many old candidates
//    per row are sampled by random priority (sample_candidates), and a join
//    (local_join) scores the new ones against all of them (one small matrix
//    product), never two old ones. Two entries found in the same leaf of the
//    same tree were compared there and are not paired again. The updates a
//    join finds are applied afterwards (apply_updates). The descent stops
//    after `n_iters` iterations, when an iteration changes fewer than
//    delta * n * (k - 1) list entries, or once the recall estimated on a
//    fixed random sample of rows, whose true k-th neighbour distances are
//    found by brute force at the start, reaches `target_recall`.
// 4. Final pass (final_pass). Each kept neighbour's distance is recomputed
//    in double precision from the data as given (RowData::exact_score, as
//    the exact search does), and each row is sorted by (distance, index)
//    after the row itself.
//
// Candidates are ranked on single-precision scores (RowData's score space);
// only the reported distances are exact.
//
// Locality: the lists are kept under new row numbers, the order of the first
// tree's leaves, so rows that are close get close numbers; the joins and the
// final pass visit rows in that order, and the lists and data of the rows
// they read are mostly in cache.
//
// Determinism: everything random derives from `seed` through hash64 of the
// work item (tree, iteration, row). Joins run in fixed batches of rows; the
// list updates of a batch are applied afterwards, to each row in a fixed
// order. The result is the same for any number of threads.
#ifndef LSNN_NNDESCENT_H
#define LSNN_NNDESCENT_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <memory>
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
#include "principal.h"
#include "../base/random.h"
#include "rp_forest.h"

namespace lsnn {

struct ApproxKnnParams {
  // `automatic`: chosen from n and k (resolve_approx_params()).
  static constexpr std::size_t automatic = static_cast<std::size_t>(-1);
  std::size_t n_trees = automatic;
  std::size_t leaf_size = automatic;
  std::size_t max_candidates = automatic;
  std::size_t n_iters = automatic;
  double delta = 0.001;
  double target_recall = 0.99;  // 1 or more: no recall-based stop
  std::uint64_t seed = 0;
};

struct ApproxKnnStats {
  ApproxKnnParams used;              // the parameters after defaults
  bool exact = false;                // small problem handed to exact_knn()
  std::size_t iterations = 0;        // descent iterations run
  std::vector<std::size_t> updates;  // list changes: forest, then per iteration
  std::vector<double> recall;        // estimated recall: forest, then per iteration
  std::size_t rows_searched_exhaustively = 0;
};

namespace detail {

// The defaults (bench/README.md, "How the defaults were chosen":
// `approx_control()`; documented with approx_control() in R). The forest
// does most of the work, the descent only finishes it. With few columns the per-row work of a leaf
// outweighs its matrix product, so fewer, larger leaves pay; with many, the
// product dominates and smaller leaves in more trees find more per flop.
inline ApproxKnnParams resolve_approx_params(ApproxKnnParams p, std::size_t n, std::size_t d,
                                             std::size_t k) {
  const std::size_t au = ApproxKnnParams::automatic;
  const std::size_t others = k > 0 ? k - 1 : 0;
  const bool few_columns = d <= 128;
  if (p.leaf_size == au) p.leaf_size = std::max<std::size_t>(few_columns ? 512 : 256, 3 * k);
  if (p.n_trees == au) p.n_trees = few_columns ? 10 : 20;
  if (p.max_candidates == au) p.max_candidates = std::max(std::min<std::size_t>(others, 40), (others + 2) / 3);
  p.max_candidates = std::max<std::size_t>(p.max_candidates, 1);
  if (p.n_iters == au) {
    std::size_t lg = 0;
    while ((std::size_t(1) << lg) < n) ++lg;
    p.n_iters = std::max<std::size_t>(5, lg);
  }
  return p;
}

// Keeps the k entries of v that come first in the (score, index) order of
// graph.h, in no particular order. The selection compares scores alone, the
// cheap test; only entries tied with the k-th score are ordered by index.
inline void keep_smallest(std::vector<std::pair<float, int>>& v, std::size_t k) {
  if (v.size() <= k) return;
  if (k == 0) {
    v.clear();
    return;
  }
  typedef std::pair<float, int> Entry;
  const auto kth = v.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(v.begin(), kth, v.end(), [](const Entry& a, const Entry& b) { return a.first < b.first; });
  const float cut = kth->first;
  // Scores below the cut are kept; entries equal to it may lie on either
  // side of the k-th place, and the smallest indices among them win.
  const auto ties = std::partition(v.begin(), kth, [cut](const Entry& e) { return e.first < cut; });
  const auto end_right = std::partition(kth + 1, v.end(), [cut](const Entry& e) { return e.first == cut; });
  if (end_right != kth + 1) {
    std::vector<Entry> tied(ties, end_right);
    const std::size_t room = static_cast<std::size_t>(kth + 1 - ties);
    std::partial_sort(tied.begin(), tied.begin() + static_cast<std::ptrdiff_t>(room), tied.end(),
                      [](const Entry& a, const Entry& b) { return a.second < b.second; });
    std::copy(tied.begin(), tied.begin() + static_cast<std::ptrdiff_t>(room), ties);
  }
  v.resize(k);
}

// A list update found by a local join: `source` may enter `target`'s list.
struct ListUpdate {
  int target;
  int source;
  float score;
};

struct JoinWorkspace {
  ScoreWorkspace score_ws;
  std::vector<int> ids, orig;
  std::vector<float> tile, thr;
  std::vector<std::uint32_t> pos;
};

// The rows of the recall sample and the score of each one's (k-1)-th nearest
// other row, by brute force over all rows.
struct RecallSample {
  std::vector<int> rows;
  std::vector<float> kth;
};

template <typename Executor>
RecallSample recall_sample(const ScoreSpace& space, std::size_t size, std::size_t others,
                           std::uint64_t seed, Executor& executor) {
  const std::size_t n = space.n();
  RecallSample sample;
  size = std::min(size, n);
  // Distinct rows: the first `size` of a seeded partial shuffle.
  {
    std::vector<int> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<int>(i);
    SplitMix64 rng(seed);
    for (std::size_t s = 0; s < size; ++s) std::swap(all[s], all[s + rng.below(n - s)]);
    sample.rows.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(size));
    std::sort(sample.rows.begin(), sample.rows.end());
  }
  sample.kth.assign(size, 0.0f);
  const std::size_t group = 32, block = 1024;  // products of 32 rows; 4 tasks for 128 rows
  const std::size_t n_groups = (size + group - 1) / group;
  const DistanceKernels& kern = space.data().kernels();
  executor.parallel_for(0, n_groups, [&](std::size_t g0, std::size_t g1) {
    ScoreWorkspace ws;
    std::vector<float> tile;
    std::vector<std::uint32_t> pos(block);
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t s0 = g * group, s1 = std::min(size, s0 + group);
      NeighbourHeaps<> best(s1 - s0, others, kern);
      for (std::size_t b0 = 0; b0 < n; b0 += block) {
        const std::size_t b1 = std::min(n, b0 + block), m = b1 - b0;
        tile.resize((s1 - s0) * m);
        space.scorer().score_block(RowSet::list(&sample.rows[s0], s1 - s0), RowSet::range(b0, b1), ws, tile.data());
        for (std::size_t a = 0; a < s1 - s0; ++a) {
          const std::size_t self = static_cast<std::size_t>(sample.rows[s0 + a]);
          const float* sc = &tile[a * m];
          const float t = best.threshold(a);
          const std::size_t np = kern.positions_at_most(sc, &t, true, m, pos.data());
          for (std::size_t c = 0; c < np; ++c) {
            const std::size_t b = b0 + pos[c];
            if (b != self) best.push_new(a, sc[pos[c]], static_cast<int>(b));
          }
        }
      }
      for (std::size_t a = 0; a < s1 - s0; ++a) sample.kth[s0 + a] = best.top_value(a);
    }
  });
  return sample;
}

// The fraction of the sample rows' list entries that score no worse than
// the true (k-1)-th neighbour (a recall that does not depend on how ties
// are broken).
inline double estimate_recall(const NeighbourHeaps<true>& heaps, const RecallSample& sample,
                              const std::vector<int>& inv) {
  if (sample.rows.empty() || heaps.capacity() == 0) return 1.0;
  std::size_t hits = 0;
  for (std::size_t s = 0; s < sample.rows.size(); ++s) {
    const std::size_t slot = static_cast<std::size_t>(inv[static_cast<std::size_t>(sample.rows[s])]);
    const float kth = sample.kth[s];
    const float cut = kth + 1e-5f * std::fabs(kth);
    const float* v = heaps.values(slot);
    for (std::size_t c = 0; c < heaps.size(slot); ++c) hits += v[c] <= cut;
  }
  return static_cast<double>(hits) /
         (static_cast<double>(sample.rows.size()) * static_cast<double>(heaps.capacity()));
}


// ---- The steps of the search, in the order approx_knn() runs them. ----

// The forest: `n_trees` trees built in parallel. Many columns: the trees
// split rows on their first principal coordinates (principal.h): far less
// memory traffic than all the columns, and leaves as good, since the
// leading coordinates carry most of every distance.
template <typename Executor>
std::vector<RpTree> build_forest(const ScoreSpace& space, const ApproxKnnParams& par,
                                 Executor& executor) {
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::size_t tree_dims = space.d() > 128 ? 64 : 32;
  const PrincipalRows principal(space, tree_dims, hash64(par.seed, 5), executor);
  checkpoint(executor);
  std::vector<RpTree> trees(par.n_trees);
  batched_for(executor, par.n_trees, n_threads, [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      trees[t] = principal.available()
                     ? build_rp_tree(space, par.leaf_size, hash64(par.seed, 1, t), principal.row(0), principal.d())
                     : build_rp_tree(space, par.leaf_size, hash64(par.seed, 1, t));
    }
  });
  return trees;
}

// The flag of the entries found in a leaf of tree t: two entries of a row
// with the same such flag shared the row's leaf, so they were compared there
// already and the first local join can skip the pair. Flags 0 and 1 mean old
// and new.
inline std::uint8_t tree_flag(std::size_t t) { return static_cast<std::uint8_t>(t + 2 < 256 ? t + 2 : 1); }

// One thread's state for search_leaves().
struct LeafWorkspace {
  JoinWorkspace join;
  std::vector<std::uint32_t> seen;  // seen[q] == stamp: q is listed
  std::uint32_t stamp = 0;
  std::vector<std::pair<float, int>> take;
  std::vector<float> cut_scratch;
  std::vector<HeapEntry> merge_scratch;
  std::vector<float> merge_values;
};

// Leaf row a (list `row`) offers its best leaf-mates to its list, from its
// scores sc against the leaf's m rows (ws.join.ids, under their list
// numbers). Returns the number of list changes.
inline std::size_t offer_leaf_mates(std::size_t a, std::size_t row, const float* sc, std::size_t m,
                                    std::uint8_t flag, NeighbourHeaps<true>& heaps,
                                    const DistanceKernels& kern, LeafWorkspace& ws) {
  const std::size_t K = heaps.capacity();
  const std::vector<int>& ids = ws.join.ids;
  float t_row = heaps.threshold(row);
  if (heaps.size(row) == 0 && m - 1 > K) {
    // An empty list (first tree): only the K best leaf-mates can enter, so
    // the cut is the K-th smallest score, found on the scores alone (cheaper
    // than ranking all the pairs).
    ws.cut_scratch.assign(sc, sc + m);
    ws.cut_scratch[a] = std::numeric_limits<float>::infinity();  // the row itself
    t_row = kth_smallest(kern, ws.cut_scratch.data(), m, K);
  }
  const std::size_t np = kern.positions_at_most(sc, &t_row, true, m, ws.join.pos.data());
  // The leaf's rows that may enter, less those listed; at most K. Few of
  // them (the usual case once the lists are good): each is looked up in the
  // list; many: the list is marked first.
  ws.take.clear();
  if (np <= 4) {
    for (std::size_t c = 0; c < np; ++c) {
      const std::size_t b = ws.join.pos[c];
      if (b != a && !heaps.contains(row, ids[b])) ws.take.emplace_back(sc[b], ids[b]);
    }
  } else {
    ++ws.stamp;
    const int* listed = heaps.indices(row);
    for (std::size_t c = 0; c < heaps.size(row); ++c) ws.seen[static_cast<std::size_t>(listed[c])] = ws.stamp;
    for (std::size_t c = 0; c < np; ++c) {
      const std::size_t b = ws.join.pos[c];
      if (b != a && ws.seen[static_cast<std::size_t>(ids[b])] != ws.stamp) ws.take.emplace_back(sc[b], ids[b]);
    }
  }
  keep_smallest(ws.take, K);
  std::size_t count = 0;
  if (heaps.size(row) == 0) {
    heaps.fill_new(row, ws.take.data(), ws.take.size(), flag);
    count += ws.take.size();
  } else if (ws.take.size() > 8) {
    count += heaps.merge_new(row, ws.take.data(), ws.take.size(), flag, ws.merge_scratch, ws.merge_values);
  } else {
    for (const auto& c : ws.take) count += heaps.push_new(row, c.first, c.second, flag);
  }
  return count;
}

// One leaf, the rows ids[0, m) of `space`: scored as one matrix product,
// each row offering its best leaf-mates to its list. Returns the number of
// list changes.
inline std::size_t search_leaf(const ScoreSpace& space, const int* ids, std::size_t m, std::uint8_t flag,
                               const std::vector<int>& inv, NeighbourHeaps<true>& heaps, LeafWorkspace& ws) {
  const DistanceKernels& kern = space.data().kernels();
  JoinWorkspace& jw = ws.join;
  jw.tile.resize(m * m);
  jw.pos.resize(m);
  jw.ids.resize(m);
  for (std::size_t a = 0; a < m; ++a) jw.ids[a] = inv[static_cast<std::size_t>(ids[a])];
  space.scorer().score_block(RowSet::list(ids, m), RowSet::list(ids, m), jw.score_ws, jw.tile.data());
  // The lists are fetched a few rows ahead (fetched before the product,
  // they would be evicted by it).
  const std::size_t ahead = 4;
  for (std::size_t a = 0; a < std::min(ahead, m); ++a) heaps.prefetch(static_cast<std::size_t>(jw.ids[a]), true);
  std::size_t count = 0;
  for (std::size_t a = 0; a < m; ++a) {
    if (a + ahead < m) heaps.prefetch(static_cast<std::size_t>(jw.ids[a + ahead]), true);
    count += offer_leaf_mates(a, static_cast<std::size_t>(jw.ids[a]), &jw.tile[a * m], m, flag, heaps, kern, ws);
  }
  return count;
}

// Forest initialisation, one tree: every leaf is searched by search_leaf()
// (rows under their new numbers, inv[original row]). Leaves hold disjoint
// rows, so they run in parallel. Returns the number of list changes.
template <typename Executor>
std::size_t search_leaves(const ScoreSpace& space, const RpTree& tree, std::uint8_t flag,
                          const std::vector<int>& inv, NeighbourHeaps<true>& heaps, Executor& executor) {
  const std::size_t n = space.n();
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::size_t n_leaves = tree.n_leaves();
  // Parts of at most 64 leaves, run in batches with an interrupt check
  // between them (a whole tree of a large data set is too long to leave an
  // interrupt waiting).
  const std::size_t n_parts = std::min(n_leaves, std::max(16 * n_threads, (n_leaves + 63) / 64));
  std::vector<std::size_t> part_updates(n_parts, 0);
  batched_for(executor, n_parts, 16 * n_threads, [&](std::size_t g0, std::size_t g1) {
    LeafWorkspace ws;
    ws.seen.assign(n, 0);
    for (std::size_t g = g0; g < g1; ++g) {
      std::size_t count = 0;
      for (std::size_t l = n_leaves * g / n_parts; l < n_leaves * (g + 1) / n_parts; ++l) {
        const std::size_t b0 = tree.leaf_start[l], m = tree.leaf_start[l + 1] - b0;
        count += search_leaf(space, &tree.order[b0], m, flag, inv, heaps, ws);
      }
      part_updates[g] = count;
    }
  });
  std::size_t total = 0;
  for (std::size_t c : part_updates) total += c;
  return total;
}

// Random fill: rows the forest left with fewer than K entries (leaves
// smaller than k) get random rows, so that the descent can reach beyond
// their leaves. Returns the number of list changes.
template <typename Executor>
std::size_t random_fill(const ScoreSpace& space, const std::vector<int>& perm, std::uint64_t seed,
                        NeighbourHeaps<true>& heaps, Executor& executor) {
  const std::size_t n = space.n(), K = heaps.capacity();
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::size_t n_parts = std::min(n, 4 * n_threads);
  std::vector<std::size_t> part_updates(n_parts, 0);
  executor.parallel_for(0, n_parts, [&](std::size_t g0, std::size_t g1) {
    ScoreWorkspace ws;
    std::vector<int> ids, slots;
    std::vector<float> scores;
    for (std::size_t g = g0; g < g1; ++g) {
      for (std::size_t p = n * g / n_parts; p < n * (g + 1) / n_parts; ++p) {
        if (heaps.size(p) >= K) continue;
        SplitMix64 rng(hash64(seed, 4, p));
        const std::size_t want = 2 * (K - heaps.size(p));
        ids.assign(1, perm[p]);
        slots.assign(1, static_cast<int>(p));
        for (std::size_t draw = 0; draw < want; ++draw) {
          const std::size_t q = rng.below(n);
          if (q == p) continue;
          ids.push_back(perm[q]);
          slots.push_back(static_cast<int>(q));
        }
        scores.resize(ids.size());
        space.scorer().score_block(RowSet::list(ids.data(), 1), RowSet::list(ids.data(), ids.size()), ws, scores.data());
        for (std::size_t c = 1; c < ids.size(); ++c) part_updates[g] += heaps.push(p, scores[c], slots[c], 1);
      }
    }
  });
  std::size_t total = 0;
  for (std::size_t c : part_updates) total += c;
  return total;
}

// Reverse lists: for every row p, the rows whose lists hold p (in
// increasing order) and the flags of those entries, as CSR.
struct ReverseLists {
  std::vector<std::size_t> ptr;  // n + 1
  std::vector<int> source;
  std::vector<std::uint8_t> flag;
};

// A counting sort of all list entries by the row they list, each part of
// the source rows counted and placed by its own task; a row's reverse
// entries come in increasing source order for any number of parts.
template <typename Executor>
void reverse_lists(const NeighbourHeaps<true>& heaps, ReverseLists& rev, Executor& executor) {
  const std::size_t n = heaps.n_rows();
  const std::size_t parts = std::max<std::size_t>(1, executor.n_threads());
  rev.ptr.resize(n + 1);
  rev.source.resize(n * heaps.capacity());
  rev.flag.resize(n * heaps.capacity());
  std::vector<std::vector<std::size_t>> counts(parts);
  executor.parallel_for(0, parts, [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      std::vector<std::size_t>& c = counts[t];
      c.assign(n, 0);
      for (std::size_t q = n * t / parts; q < n * (t + 1) / parts; ++q) {
        const int* ix = heaps.indices(q);
        for (std::size_t e = 0; e < heaps.size(q); ++e) ++c[static_cast<std::size_t>(ix[e])];
      }
    }
  });
  // counts[t][p] becomes where part t's entries for row p start.
  std::size_t total = 0;
  for (std::size_t p = 0; p < n; ++p) {
    rev.ptr[p] = total;
    for (std::size_t t = 0; t < parts; ++t) {
      const std::size_t c = counts[t][p];
      counts[t][p] = total;
      total += c;
    }
  }
  rev.ptr[n] = total;
  executor.parallel_for(0, parts, [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      std::vector<std::size_t>& next = counts[t];
      for (std::size_t q = n * t / parts; q < n * (t + 1) / parts; ++q) {
        const int* ix = heaps.indices(q);
        const std::uint8_t* fl = heaps.flags(q);
        for (std::size_t e = 0; e < heaps.size(q); ++e) {
          const std::size_t at = next[static_cast<std::size_t>(ix[e])]++;
          rev.source[at] = static_cast<int>(q);
          rev.flag[at] = fl[e];
        }
      }
    }
  });
}

// The candidates of one iteration: for row p, new_count[p] new ones (with
// their flags) and old_count[p] old ones, each in a slot of `c_max`.
struct Candidates {
  explicit Candidates(std::size_t n, std::size_t c_max_)
      : c_max(c_max_), new_ids(n * c_max_), old_ids(n * c_max_), new_flag(n * c_max_),
        new_count(n), old_count(n) {}
  std::size_t c_max;
  std::vector<int> new_ids, old_ids;
  std::vector<std::uint8_t> new_flag;
  std::vector<std::uint32_t> new_count, old_count;
  const int* fresh(std::size_t p) const { return &new_ids[p * c_max]; }
  const int* stale(std::size_t p) const { return &old_ids[p * c_max]; }
  const std::uint8_t* fresh_flags(std::size_t p) const { return &new_flag[p * c_max]; }
};

// Candidate sampling: up to c_max new and c_max old candidates per row,
// forward and reverse entries merged, chosen by a random priority drawn
// from (seed, iteration, row, candidate); the new forward entries sampled
// are flagged old in the lists.
template <typename Executor>
void sample_candidates(NeighbourHeaps<true>& heaps, const ReverseLists& rev, std::uint64_t seed,
                       std::size_t iter, Candidates& cand, Executor& executor) {
  const std::size_t n = heaps.n_rows(), c_max = cand.c_max;
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::size_t n_parts = std::min(n, 16 * n_threads);
  executor.parallel_for(0, n_parts, [&](std::size_t g0, std::size_t g1) {
    struct Entry {
      std::uint64_t key;  // priority
      int q;
      int slot;  // forward slot, or -1
      std::uint8_t flag;
    };
    std::vector<Entry> all, fresh, stale;
    // Rows met while gathering row p's entries: seen[q] == p + 1, at
    // position where[q].
    std::vector<std::uint32_t> seen(n, 0), where(n);
    auto by_key = [](const Entry& a, const Entry& b) { return a.key < b.key; };
    for (std::size_t g = g0; g < g1; ++g) {
      for (std::size_t p = n * g / n_parts; p < n * (g + 1) / n_parts; ++p) {
        const std::uint32_t stamp = static_cast<std::uint32_t>(p + 1);
        all.clear();
        const int* ix = heaps.indices(p);
        std::uint8_t* fl = heaps.flags(p);
        for (std::size_t s = 0; s < heaps.size(p); ++s) {
          const std::size_t q = static_cast<std::size_t>(ix[s]);
          seen[q] = stamp;
          where[q] = static_cast<std::uint32_t>(all.size());
          all.push_back({0, ix[s], static_cast<int>(s), fl[s]});
        }
        // A reverse entry of a listed row merges with it: new if either
        // is, with the forward entry's flag first.
        for (std::size_t r = rev.ptr[p]; r < rev.ptr[p + 1]; ++r) {
          const std::size_t q = static_cast<std::size_t>(rev.source[r]);
          if (seen[q] == stamp) {
            Entry& e = all[where[q]];
            if (e.flag == 0) e.flag = rev.flag[r];
          } else {
            seen[q] = stamp;
            where[q] = static_cast<std::uint32_t>(all.size());
            all.push_back({0, rev.source[r], -1, rev.flag[r]});
          }
        }
        fresh.clear();
        stale.clear();
        for (Entry& x : all) {
          x.key = hash64(seed, 2 + iter, p, static_cast<std::uint64_t>(x.q));
          (x.flag != 0 ? fresh : stale).push_back(x);
        }
        if (fresh.size() > c_max) {
          std::nth_element(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(c_max), fresh.end(), by_key);
          fresh.resize(c_max);
        }
        if (stale.size() > c_max) {
          std::nth_element(stale.begin(), stale.begin() + static_cast<std::ptrdiff_t>(c_max), stale.end(), by_key);
          stale.resize(c_max);
        }
        cand.new_count[p] = static_cast<std::uint32_t>(fresh.size());
        cand.old_count[p] = static_cast<std::uint32_t>(stale.size());
        for (std::size_t c = 0; c < fresh.size(); ++c) {
          cand.new_ids[p * c_max + c] = fresh[c].q;
          cand.new_flag[p * c_max + c] = fresh[c].flag;
          if (fresh[c].slot >= 0) fl[fresh[c].slot] = 0;
        }
        for (std::size_t c = 0; c < stale.size(); ++c) cand.old_ids[p * c_max + c] = stale[c].q;
      }
    }
  });
}

// Hints that the lists of row p's candidates are needed soon.
inline void prefetch_join(const Candidates& cand, const NeighbourHeaps<true>& heaps, std::size_t p) {
  for (std::size_t c = 0; c < cand.new_count[p]; ++c) heaps.prefetch(static_cast<std::size_t>(cand.fresh(p)[c]));
  for (std::size_t c = 0; c < cand.old_count[p]; ++c) heaps.prefetch(static_cast<std::size_t>(cand.stale(p)[c]));
}

// The local join of row p: its new candidates are scored against all its
// candidates (one small matrix product) and every pair that would enter a
// list becomes an update in `out`; two old candidates are never paired.
// `original` maps list numbers to the rows of `space` (null: the same).
inline void local_join(std::size_t p, const Candidates& cand, const NeighbourHeaps<true>& heaps,
                       const ScoreSpace& space, const int* original, JoinWorkspace& ws,
                       std::vector<ListUpdate>& out) {
  const DistanceKernels& kern = space.data().kernels();
  const std::size_t a = cand.new_count[p], b = cand.old_count[p];
  if (a == 0) return;
  const std::size_t m = a + b;
  ws.ids.resize(m);
  ws.orig.resize(m);
  ws.thr.resize(m);
  ws.pos.resize(m);
  ws.tile.resize(a * m);
  std::copy(cand.fresh(p), cand.fresh(p) + a, ws.ids.begin());
  std::copy(cand.stale(p), cand.stale(p) + b, ws.ids.begin() + static_cast<std::ptrdiff_t>(a));
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t q = static_cast<std::size_t>(ws.ids[j]);
    ws.thr[j] = heaps.threshold(q);
    ws.orig[j] = original != nullptr ? original[q] : static_cast<int>(q);
  }
  // The new candidates against all: the pairs (i, j), i < j.
  space.scorer().score_block(RowSet::list(ws.orig.data(), a), RowSet::list(ws.orig.data(), m), ws.score_ws,
                               ws.tile.data());
  const std::uint8_t* flag = cand.fresh_flags(p);
  for (std::size_t i = 0; i < a; ++i) {
    const std::size_t j0 = i + 1;
    if (j0 >= m) continue;
    const float* sc = &ws.tile[i * m];
    const int u = ws.ids[i];
    const std::uint8_t tree_u = flag[i];
    // Both from the row's leaf in one tree: compared there.
    auto compared = [&](std::size_t j) { return tree_u >= 2 && j < a && flag[j] == tree_u; };
    // u takes v ...
    std::size_t np = kern.positions_at_most(sc + j0, &ws.thr[i], true, m - j0, ws.pos.data());
    for (std::size_t c = 0; c < np; ++c) {
      const std::size_t j = j0 + ws.pos[c];
      const int v = ws.ids[j];
      if (v != u && !compared(j) && !heaps.contains(static_cast<std::size_t>(u), v)) {
        out.push_back({u, v, sc[j]});
      }
    }
    // ... and v takes u.
    np = kern.positions_at_most(sc + j0, &ws.thr[j0], false, m - j0, ws.pos.data());
    for (std::size_t c = 0; c < np; ++c) {
      const std::size_t j = j0 + ws.pos[c];
      const int v = ws.ids[j];
      if (v != u && !compared(j) && !heaps.contains(static_cast<std::size_t>(v), u)) {
        out.push_back({v, u, sc[j]});
      }
    }
  }
}

// Applying updates: each part owns a range of target rows and reads every
// chunk's updates in order, so each row sees its updates in a fixed order
// whatever the number of threads. Returns the number of list changes.
template <typename Executor>
std::size_t apply_updates(const std::vector<std::vector<ListUpdate>>& updates, std::size_t n_chunks,
                          NeighbourHeaps<true>& heaps, Executor& executor) {
  const std::size_t n = heaps.n_rows();
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  std::vector<std::size_t> part_updates(n_threads, 0);
  executor.parallel_for(0, n_threads, [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      const int lo = static_cast<int>(n * t / n_threads);
      const int hi = static_cast<int>(n * (t + 1) / n_threads);
      std::size_t count = 0;
      for (std::size_t ch = 0; ch < n_chunks; ++ch) {
        for (const ListUpdate& u : updates[ch]) {
          if (u.target >= lo && u.target < hi) {
            count += heaps.push(static_cast<std::size_t>(u.target), u.score, u.source, 1);
          }
        }
      }
      part_updates[t] = count;
    }
  });
  std::size_t total = 0;
  for (std::size_t c : part_updates) total += c;
  return total;
}

// The descent (Dong, Moses and Li, 2011) from the forest's lists, until
// `n_iters` iterations, too few changes or the target recall. Its buffers
// (and the renumbered copy of the rows) live only here, so they are freed
// before the final pass allocates the graph. Rows in single precision are
// copied in the order of their new numbers first: a row's candidates mostly
// have numbers near its own, so the joins then read rows that are close in
// memory.
// Progress: `phase` counts n steps per iteration.
template <typename Executor>
double descend(const ScoreSpace& space, const std::vector<int>& perm, const std::vector<int>& inv,
               const ApproxKnnParams& par, const RecallSample& sample, double recall,
               NeighbourHeaps<true>& heaps, ApproxKnnStats& st, Phase<Executor>& phase,
               Executor& executor) {
  const std::size_t n = space.n(), K = heaps.capacity();
  const bool use_sample = par.target_recall < 1.0;
  const bool renumbered_rows = space.float_rows();
  std::unique_ptr<const ScoreSpace> renumbered;
  if (renumbered_rows) renumbered.reset(new ScoreSpace(space, perm, executor));
  const ScoreSpace& join_space = renumbered_rows ? *renumbered : space;
  const int* original = renumbered_rows ? nullptr : perm.data();
  ReverseLists rev;
  Candidates cand(n, par.max_candidates);
  const std::size_t chunk = 64;          // rows per join task
  const std::size_t batch = 64 * chunk;  // rows per batch of joins
  std::vector<std::vector<ListUpdate>> chunk_updates(batch / chunk);
  const double stop_below = par.delta * static_cast<double>(n) * static_cast<double>(K);

  for (std::size_t iter = 0; iter < par.n_iters && !(use_sample && recall >= par.target_recall); ++iter) {
    reverse_lists(heaps, rev, executor);
    sample_candidates(heaps, rev, par.seed, iter, cand, executor);
    phase.set(iter * n);
    // Local joins, in batches of rows; a batch's updates are applied before
    // the next batch reads the thresholds.
    std::size_t iter_updates = 0;
    for (std::size_t start = 0; start < n; start += batch) {
      const std::size_t stop = std::min(n, start + batch);
      const std::size_t n_chunks = (stop - start + chunk - 1) / chunk;
      executor.parallel_for(0, n_chunks, [&](std::size_t c0, std::size_t c1) {
        JoinWorkspace ws;
        for (std::size_t ch = c0; ch < c1; ++ch) {
          std::vector<ListUpdate>& out = chunk_updates[ch];
          out.clear();
          const std::size_t p0 = start + ch * chunk, p1 = std::min(stop, p0 + chunk);
          for (std::size_t p = p0; p < p1; ++p) {
            if (p + 1 < p1) prefetch_join(cand, heaps, p + 1);  // warm the caches for the next join
            local_join(p, cand, heaps, join_space, original, ws, out);
          }
        }
      });
      iter_updates += apply_updates(chunk_updates, n_chunks, heaps, executor);
      phase.set(iter * n + stop);
    }
    st.updates.push_back(iter_updates);
    st.iterations = iter + 1;
    recall = use_sample ? estimate_recall(heaps, sample, inv) : 0.0;
    st.recall.push_back(recall);
    if (static_cast<double>(iter_updates) < stop_below) break;
  }
  return recall;
}

// The final pass: exact distances, sorted, self first. Rows go in the order
// of their new numbers (neighbouring rows share neighbours, whose data stays
// in cache), into the lists' own index arrays and a buffer of distances;
// then into the graph by blocks of consecutive rows, so that R's
// column-major layout is written a cache line at a time. Rows with fewer
// than k - 1 entries, or whose float scores mean nothing, are searched
// exhaustively; returns how many were.
// Progress: `phase` counts one step per row.
template <typename Executor>
std::size_t final_pass(const RowData& data, const std::vector<int>& perm, const std::vector<int>& inv,
                       NeighbourHeaps<true>& heaps, KnnGraph& graph, Phase<Executor>& phase,
                       Executor& executor) {
  const std::size_t n = data.n(), K = heaps.capacity(), others = K;
  std::vector<double> sorted_dist(n * K);
  std::vector<unsigned char> exhaustive(n, 0);
  batched_for(executor, n, 4096, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> cand;
    TileBuffers buf;
    for (std::size_t t = begin; t < end; ++t) {
      const std::size_t i = static_cast<std::size_t>(perm[t]);
      const std::size_t size = heaps.size(t);
      if (size < others || data.needs_exact_search(i)) {
        exhaustive[t] = 1;
        refine_row(data, i, {0, n, -1}, others, std::numeric_limits<double>::infinity(), buf, cand);
      } else {
        cand.resize(size);
        const int* ix = heaps.indices(t);
        for (std::size_t c = 0; c < size; ++c) cand[c].second = perm[static_cast<std::size_t>(ix[c])];
        const std::size_t ahead = 4;
        for (std::size_t c = 0; c < std::min(ahead, size); ++c) data.prefetch_row(static_cast<std::size_t>(cand[c].second));
        for (std::size_t c = 0; c < size; ++c) {
          if (c + ahead < size) data.prefetch_row(static_cast<std::size_t>(cand[c + ahead].second));
          cand[c].first = data.exact_score(i, static_cast<std::size_t>(cand[c].second));
        }
        std::sort(cand.begin(), cand.end());
      }
      data.report_distances(cand, others);
      int* out = heaps.mutable_indices(t);
      for (std::size_t c = 0; c < others; ++c) {
        out[c] = cand[c].second;
        sorted_dist[t * K + c] = cand[c].first;
      }
    }
  }, [&](std::size_t done) { phase.set(done); });
  graph = KnnGraph(n, K + 1);
  const std::size_t block = 64;
  executor.parallel_for(0, (n + block - 1) / block, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t i0 = b * block, i1 = std::min(n, i0 + block);
      for (std::size_t i = i0; i < i1; ++i) {
        graph.index(i, 0) = static_cast<int>(i);
        graph.distance(i, 0) = 0.0;
      }
      for (std::size_t c = 0; c < others; ++c) {
        for (std::size_t i = i0; i < i1; ++i) {
          const std::size_t t = static_cast<std::size_t>(inv[i]);
          graph.index(i, c + 1) = heaps.indices(t)[c];
          graph.distance(i, c + 1) = sorted_dist[t * K + c];
        }
      }
    }
  });
  std::size_t count = 0;
  for (unsigned char e : exhaustive) count += e;
  return count;
}

// The forest's leaves searched, tree after tree, then every list filled
// with random rows; the trees are freed before the filling, which does not
// read them. Returns the number of list updates.
// Progress: `phase` is at 2 + n_trees + t after tree t.
template <typename Executor>
std::size_t fill_from_forest(const ScoreSpace& space, std::vector<RpTree>& trees, const std::vector<int>& perm,
                             const std::vector<int>& inv, const ApproxKnnParams& par,
                             NeighbourHeaps<true>& heaps, Phase<Executor>& phase, Executor& executor) {
  std::size_t updates = 0;
  for (std::size_t t = 0; t < par.n_trees; ++t) {
    updates += search_leaves(space, trees[t], tree_flag(t), inv, heaps, executor);
    phase.set(2 + par.n_trees + t);
  }
  trees.clear();
  trees.shrink_to_fit();
  updates += random_fill(space, perm, par.seed, heaps, executor);
  return updates;
}

inline std::string forest_summary(const RowData& data, std::size_t k, const ApproxKnnParams& par,
                                  bool use_sample, double recall) {
  std::ostringstream msg;
  msg << std::setprecision(3) << "approx kNN: " << data.n() << " rows, " << data.d() << " columns, k = " << k << "; "
      << par.n_trees << " trees (leaves of at most " << par.leaf_size << " rows, "
      << data.kernels().name << " kernels)";
  if (use_sample) msg << ", estimated recall " << recall;
  return msg.str();
}

inline std::string descent_summary(const ApproxKnnParams& par, const ApproxKnnStats& st, bool use_sample,
                                   double recall) {
  std::ostringstream msg;
  msg << std::setprecision(3) << "approx kNN: descent, " << st.iterations << " of at most " << par.n_iters
      << " iterations (" << par.max_candidates << " candidates)";
  if (use_sample) msg << ", estimated recall " << recall;
  return msg.str();
}

}  // namespace detail

// The k nearest neighbours of every row, the row itself first, by a
// random-projection forest and nearest-neighbour descent.
template <typename Executor>
KnnGraph approx_knn(const RowData& data, std::size_t k, const ApproxKnnParams& params_in,
                    Executor& executor, ApproxKnnStats* stats = nullptr) {
  const std::size_t n = data.n();
  if (k < 1 || k > n) throw std::invalid_argument("k must be between 1 and the number of rows");
  ApproxKnnStats local;
  ApproxKnnStats& st = stats ? *stats : local;
  const ApproxKnnParams par = detail::resolve_approx_params(params_in, n, data.d(), k);
  st.used = par;
  const std::size_t K = k - 1;

  // Few rows, or lists covering a large part of the data: the exact search
  // costs about as much, and is exact.
  if (K == 0 || n <= 2 * par.leaf_size || 4 * K >= n) {
    st.exact = true;
    ExactKnnStats es;
    KnnGraph g = exact_knn(data, k, executor, &es);
    st.rows_searched_exhaustively = es.rows_refined;
    return g;
  }
  // 1. The forest, after the rows in score space and the recall sample
  // (sparse rows are scored pair by pair: a smaller one); one step for
  // those, then one per tree built and one per tree searched.
  Phase<Executor> forest_phase(executor, "approx kNN: forest", 2 * par.n_trees + 1);
  // (freed before the final pass, which scores pairs from `data`)
  std::unique_ptr<const ScoreSpace> space_owner(new ScoreSpace(data, executor));
  const ScoreSpace& space = *space_owner;
  checkpoint(executor);
  const bool use_sample = par.target_recall < 1.0;
  const detail::RecallSample sample =
      use_sample ? detail::recall_sample(space, data.sparse() ? 64 : 128, K, hash64(par.seed, 3), executor)
                 : detail::RecallSample();
  forest_phase.set(1);
  std::vector<RpTree> trees = detail::build_forest(space, par, executor);
  forest_phase.set(1 + par.n_trees);
  // The lists are kept under new row numbers, the order of the first tree's
  // leaves (perm[s] is the row numbered s, inv its inverse).
  const std::vector<int> perm = trees[0].order;
  std::vector<int> inv(n);
  for (std::size_t s = 0; s < n; ++s) inv[static_cast<std::size_t>(perm[s])] = static_cast<int>(s);
  NeighbourHeaps<true> heaps(n, K, data.kernels());
  st.updates.push_back(detail::fill_from_forest(space, trees, perm, inv, par, heaps, forest_phase, executor));
  double recall = use_sample ? detail::estimate_recall(heaps, sample, inv) : 0.0;
  st.recall.push_back(recall);
  forest_phase.finish(detail::forest_summary(data, k, par, use_sample, recall));

  // 2. The descent.
  {
    Phase<Executor> phase(executor, "approx kNN: descent", par.n_iters * n);
    recall = detail::descend(space, perm, inv, par, sample, recall, heaps, st, phase, executor);
    phase.finish(detail::descent_summary(par, st, use_sample, recall));
  }

  // 3. Exact distances. The score space and the lists' scores are not read
  // again: freed first, as the pass holds the lists, a buffer of distances
  // and the graph at once (at 1e6 rows of 50 columns and 90 neighbours: 0.2
  // GB of space, 0.8 of lists, 0.7 of distances, 1.1 of graph).
  space_owner.reset();
  heaps.release_scores();
  KnnGraph graph;
  {
    Phase<Executor> phase(executor, "approx kNN: exact distances", n);
    st.rows_searched_exhaustively = detail::final_pass(data, perm, inv, heaps, graph, phase, executor);
    std::ostringstream msg;
    msg << "approx kNN: exact distances, " << st.rows_searched_exhaustively
        << " rows searched exhaustively";
    phase.finish(msg.str());
  }
  return graph;
}

}  // namespace lsnn

#endif  // LSNN_NNDESCENT_H
