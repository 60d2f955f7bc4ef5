// Approximate k-nearest neighbours by nearest-neighbour descent.
//
// 1. Initial lists from a forest of random-projection trees (rp_forest.h):
//    every leaf is searched exhaustively, as one small matrix product of its
//    gathered rows, the same kernels as the exact search.
// 2. Nearest-neighbour descent (Dong, Moses and Li, 2011): each row's
//    neighbours and reverse neighbours are candidates for each other (the
//    "local join"), as the neighbour of a neighbour is likely a neighbour.
//    Each list entry carries a flag, new until it has taken part in a join,
//    and a join only scores pairs with at least one new member. At most
//    `max_candidates` new and as many old candidates per row are sampled
//    each iteration (random priorities). A local join is again one small
//    matrix product: the new candidates against all candidates of the row.
//    The descent stops after `n_iters` iterations or when an iteration
//    changes fewer than delta * n * (k - 1) list entries.
// 3. The final pass recomputes each kept neighbour's distance in double
//    precision from the data as given, and sorts each row by (distance,
//    index) after the row itself.
//
// Candidates are ranked on single-precision scores (RowData's score space);
// only the reported distances are exact.
//
// Determinism: randomness comes from a seed (hash64 of the seed and of the
// iteration and row); joins run in fixed batches of rows, and the list
// updates a batch produces are applied per row in a fixed order, so the
// result is the same for any number of threads.
#ifndef LSNN_NNDESCENT_H
#define LSNN_NNDESCENT_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "distance.h"
#include "exact_knn.h"
#include "graph.h"
#include "parallel.h"
#include "random.h"
#include "rp_forest.h"

namespace lsnn {

struct ApproxKnnParams {
  // `automatic` means "choose from n, d and k" for the four sizes.
  static constexpr std::size_t automatic = static_cast<std::size_t>(-1);
  std::size_t n_trees = automatic;
  std::size_t leaf_size = automatic;
  std::size_t max_candidates = automatic;
  std::size_t n_iters = automatic;
  double delta = 0.03;
  std::uint64_t seed = 0;
  std::size_t max_old = automatic;  // DEV
};

struct ApproxKnnStats {
  ApproxKnnParams used;              // the parameters after defaults
  bool exact = false;                // small problem handed to exact_knn()
  std::size_t iterations = 0;        // descent iterations run
  std::vector<std::size_t> updates;  // list changes: trees, then per iteration
  std::size_t rows_searched_exhaustively = 0;
};

// Bounded per-row max-heaps of (score, index) with a "new" flag per entry,
// under the (score, index) total order of graph.h. Callers keep indices
// unique within a row (contains()).
class FlaggedHeaps {
 public:
  FlaggedHeaps(std::size_t n, std::size_t capacity, const DistanceKernels& kernels)
      : cap_(capacity), value_(n * capacity), index_(n * capacity), flag_(n * capacity), size_(n, 0),
        contains_(kernels.contains_index) {}

  std::size_t capacity() const { return cap_; }
  std::size_t size(std::size_t row) const { return size_[row]; }
  float threshold(std::size_t row) const {
    return size_[row] == cap_ ? value_[row * cap_] : std::numeric_limits<float>::infinity();
  }
  const float* values(std::size_t row) const { return &value_[row * cap_]; }
  const int* indices(std::size_t row) const { return &index_[row * cap_]; }
  int* mutable_indices(std::size_t row) { return &index_[row * cap_]; }
  std::uint8_t* flags(std::size_t row) { return &flag_[row * cap_]; }
  const std::uint8_t* flags(std::size_t row) const { return &flag_[row * cap_]; }

  // Hints that the row's entries are needed soon.
  void prefetch(std::size_t row, bool all = false) const {
#if defined(__GNUC__) || defined(__clang__)
    const char* ix = reinterpret_cast<const char*>(&index_[row * cap_]);
    for (std::size_t b = 0; b < cap_ * sizeof(int); b += 64) __builtin_prefetch(ix + b);
    const char* v = reinterpret_cast<const char*>(&value_[row * cap_]);
    if (!all) {
      __builtin_prefetch(v);
      return;
    }
    for (std::size_t b = 0; b < cap_ * sizeof(float); b += 64) __builtin_prefetch(v + b);
    const char* f = reinterpret_cast<const char*>(&flag_[row * cap_]);
    for (std::size_t b = 0; b < cap_; b += 64) __builtin_prefetch(f + b);
#else
    (void)row;
#endif
  }

  bool contains(std::size_t row, int index) const {
#ifdef COUNT_CONTAINS
    ++g_contains;
#endif
    return contains_(indices(row), size_[row], index);
  }

  // Inserts (value, index) when it ranks below the current largest entry or
  // the list has room, and the index is not already listed.
  bool push(std::size_t row, float value, int index, std::uint8_t flag) {
    if (cap_ == 0) return false;
    if (size_[row] == cap_ && !neighbour_before(value, index, value_[row * cap_], index_[row * cap_])) return false;
    if (contains(row, index)) return false;
    return push_new(row, value, index, flag);
  }

  // Fills an empty row with distinct (value, index) pairs, at most capacity.
  void fill_new(std::size_t row, const std::pair<float, int>* entries, std::size_t count,
                std::uint8_t flag) {
    float* v = &value_[row * cap_];
    int* ix = &index_[row * cap_];
    std::uint8_t* fl = &flag_[row * cap_];
    for (std::size_t c = 0; c < count; ++c) {
      v[c] = entries[c].first;
      ix[c] = entries[c].second;
      fl[c] = flag;
    }
    size_[row] = static_cast<std::uint32_t>(count);
    // Floyd's heap construction over the three arrays.
    for (std::size_t start = count / 2; start-- > 0;) {
      std::size_t c = start;
      const float value = v[c];
      const int index = ix[c];
      for (;;) {
        std::size_t child = 2 * c + 1;
        if (child >= count) break;
        if (child + 1 < count && neighbour_before(v[child], ix[child], v[child + 1], ix[child + 1])) ++child;
        if (!neighbour_before(value, index, v[child], ix[child])) break;
        v[c] = v[child];
        ix[c] = ix[child];
        c = child;
      }
      v[c] = value;
      ix[c] = index;
    }
  }

  // push() for an index known not to be listed.
  bool push_new(std::size_t row, float value, int index, std::uint8_t flag) {
    if (cap_ == 0) return false;
    float* v = &value_[row * cap_];
    int* ix = &index_[row * cap_];
    std::uint8_t* fl = &flag_[row * cap_];
    std::uint32_t& n = size_[row];
    if (n == cap_ && !neighbour_before(value, index, v[0], ix[0])) return false;
    std::size_t c;
    if (n < cap_) {
      c = n++;
      while (c > 0) {
        const std::size_t p = (c - 1) / 2;
        if (!neighbour_before(v[p], ix[p], value, index)) break;
        v[c] = v[p];
        ix[c] = ix[p];
        fl[c] = fl[p];
        c = p;
      }
    } else {
      c = 0;
      for (;;) {
        std::size_t child = 2 * c + 1;
        if (child >= n) break;
        if (child + 1 < n && neighbour_before(v[child], ix[child], v[child + 1], ix[child + 1])) ++child;
        if (!neighbour_before(value, index, v[child], ix[child])) break;
        v[c] = v[child];
        ix[c] = ix[child];
        fl[c] = fl[child];
        c = child;
      }
    }
    v[c] = value;
    ix[c] = index;
    fl[c] = flag;
    return true;
  }

 private:
  std::size_t cap_;
  std::vector<float> value_;
  std::vector<int> index_;
  std::vector<std::uint8_t> flag_;
  std::vector<std::uint32_t> size_;
  bool (*contains_)(const int*, std::size_t, int);
};

namespace detail {

// Defaults, chosen by measurement (bench/bench-approx.R; see approx_control()
// in R for the figures).
inline ApproxKnnParams resolve_approx_params(ApproxKnnParams p, std::size_t n, std::size_t d,
                                             std::size_t k) {
  (void)d;
  const std::size_t au = ApproxKnnParams::automatic;
  const std::size_t others = k > 0 ? k - 1 : 0;
  if (p.leaf_size == au) p.leaf_size = std::max<std::size_t>(256, 3 * k);
  if (p.n_trees == au) p.n_trees = 16;
  if (p.max_candidates == au) {
    p.max_candidates = std::max(std::min<std::size_t>(others, 32), (others + 2) / 3);
    p.max_candidates = std::max<std::size_t>(p.max_candidates, 1);
  }
  if (p.n_iters == au) {
    std::size_t lg = 0;
    while ((std::size_t(1) << lg) < n) ++lg;
    p.n_iters = std::max<std::size_t>(5, lg);
  }
  return p;
}

// One list update found by a local join: `source` may enter `target`'s list.
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

}  // namespace detail

// The k nearest neighbours of every row, the row itself first, by
// nearest-neighbour descent.
template <typename Executor>
KnnGraph approx_knn(const RowData& data, std::size_t k, const ApproxKnnParams& params_in,
                    Executor& executor, ApproxKnnStats* stats = nullptr) {
  const std::size_t n = data.n();
  if (k < 1 || k > n) throw std::invalid_argument("k must be between 1 and the number of rows");
  ApproxKnnStats local;
  ApproxKnnStats& st = stats ? *stats : local;
  const ApproxKnnParams par = detail::resolve_approx_params(params_in, n, data.d(), k);
  st.used = par;
  const std::size_t others = k - 1;

  // Small problems, or lists covering a large part of the data: the exact
  // search costs about as much and is exact.
  if (others == 0 || n <= 2 * par.leaf_size || 4 * others >= n) {
    st.exact = true;
    ExactKnnStats es;
    KnnGraph g = exact_knn(data, k, executor, &es);
    st.rows_searched_exhaustively = es.rows_refined;
    return g;
  }

  const std::size_t K = others;
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  {
    std::ostringstream msg;
    msg << "approx kNN: " << n << " rows, " << data.d() << " columns, k = " << k << "; "
        << par.n_trees << " trees (leaves of at most " << par.leaf_size << " rows), "
        << par.max_candidates << " candidates, at most " << par.n_iters << " iterations, delta "
        << par.delta << ", " << data.kernels().name << " kernels";
    executor.report(msg.str());
  }

  ScoreSpace space(data, executor);
  if (executor.interrupted()) throw interrupted_error();
  FlaggedHeaps heaps(n, K, data.kernels());

  // 1. The forest: trees built in parallel (one per task), then the leaves of
  // each tree in parallel (a tree's leaves hold disjoint rows).
  std::vector<RpTree> trees(par.n_trees);
  batched_for(executor, par.n_trees, n_threads, [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      trees[t] = build_rp_tree(space, par.leaf_size, hash64(par.seed, 1, t));
    }
  });
#ifdef LSNN_DEV_HOOK
  executor.report("(trees built)");
#endif
  // The lists are kept under new row numbers: the order of the first tree's
  // leaves (perm[s] is the row numbered s). Rows close together then have
  // close numbers, so the lists a local join reads lie close together in
  // memory, and rows processed one after the other share most neighbours.
  const std::vector<int> perm = trees[0].order;
  std::vector<int> inv(n);
  for (std::size_t s = 0; s < n; ++s) inv[static_cast<std::size_t>(perm[s])] = static_cast<int>(s);

  std::size_t tree_updates = 0;
  for (std::size_t t = 0; t < par.n_trees; ++t) {
    const RpTree& tree = trees[t];
    // Entries found in a leaf of tree t are flagged 2 + t: two entries of a
    // row with the same such flag shared the row's leaf, so they were
    // compared there already and the first local join can skip them.
    const std::uint8_t tree_flag = static_cast<std::uint8_t>(t + 2 < 256 ? t + 2 : 1);
    const std::size_t n_leaves = tree.n_leaves();
    const std::size_t n_parts = std::min(n_leaves, 4 * n_threads);
    std::vector<std::size_t> part_updates(n_parts, 0);
    executor.parallel_for(0, n_parts, [&](std::size_t g0, std::size_t g1) {
      detail::JoinWorkspace ws;
      const DistanceKernels& kern = data.kernels();
#ifdef DEV_TIMERS
      auto dtp = std::chrono::steady_clock::now();
#endif
      std::vector<std::uint32_t> seen(n, 0);
      std::uint32_t stamp = 0;
      std::vector<std::pair<float, int>> take;
      for (std::size_t g = g0; g < g1; ++g) {
        std::size_t count = 0;
        for (std::size_t l = n_leaves * g / n_parts; l < n_leaves * (g + 1) / n_parts; ++l) {
          const std::size_t b0 = tree.leaf_start[l], b1 = tree.leaf_start[l + 1];
          const std::size_t m = b1 - b0;
          const int* ids = &tree.order[b0];
          ws.tile.resize(m * m);
          ws.pos.resize(m);
          ws.ids.resize(m);
          for (std::size_t a = 0; a < m; ++a) {
            ws.ids[a] = inv[static_cast<std::size_t>(ids[a])];
            heaps.prefetch(static_cast<std::size_t>(ws.ids[a]), true);  // read after the product
          }
#ifdef DEV_TIMERS
          auto dt0 = std::chrono::steady_clock::now();
#endif
          space.score_block(ids, m, m, ws.score_ws, ws.tile.data());
#ifdef DEV_TIMERS
          auto dt1 = std::chrono::steady_clock::now();
          g_timer[0] += std::chrono::duration<double>(dt1 - dt0).count();
#endif
          for (std::size_t a = 0; a < m; ++a) {
#ifdef DEV_TIMERS
            unsigned long long c0 = __rdtsc();
#endif
            const std::size_t row = static_cast<std::size_t>(ws.ids[a]);
            const float* sc = &ws.tile[a * m];
            const float t_row = heaps.threshold(row);
#ifdef DEV_TIMERS
            unsigned long long c1 = __rdtsc();
#endif
            const std::size_t np = kern.positions_at_most(sc, &t_row, true, m, ws.pos.data());
#ifdef DEV_TIMERS
            unsigned long long c2 = __rdtsc();
#endif
#ifdef COUNT_NP
            g_np[t] += np; g_rows[t] += 1;
#endif
            // The leaf's rows that may enter, best first, less those listed.
            ++stamp;
            const int* listed = heaps.indices(row);
            for (std::size_t c = 0; c < heaps.size(row); ++c) seen[static_cast<std::size_t>(listed[c])] = stamp;
#ifdef DEV_TIMERS
            unsigned long long c3 = __rdtsc();
#endif
            take.clear();
            for (std::size_t c = 0; c < np; ++c) {
              const std::size_t b = ws.pos[c];
              if (b != a && seen[static_cast<std::size_t>(ws.ids[b])] != stamp) take.emplace_back(sc[b], ws.ids[b]);
            }
            if (take.size() > K) {
              std::nth_element(take.begin(), take.begin() + static_cast<std::ptrdiff_t>(K), take.end());
              take.resize(K);
            }
#ifdef DEV_TIMERS
            unsigned long long c4 = __rdtsc();
#endif
            if (heaps.size(row) == 0) {
              heaps.fill_new(row, take.data(), take.size(), tree_flag);
              count += take.size();
            } else {
              for (const auto& c : take) count += heaps.push_new(row, c.first, c.second, tree_flag);
            }
#ifdef DEV_TIMERS
            unsigned long long c5 = __rdtsc();
            g_cyc[0] += c1 - c0; g_cyc[1] += c2 - c1; g_cyc[2] += c3 - c2; g_cyc[3] += c4 - c3; g_cyc[4] += c5 - c4; g_cyc[5] += 1;
#endif
          }
        }
        part_updates[g] = count;
      }
#ifdef DEV_TIMERS
      g_timer[1] += std::chrono::duration<double>(std::chrono::steady_clock::now() - dtp).count();
#endif
    });
    for (std::size_t c : part_updates) tree_updates += c;
    if (executor.interrupted()) throw interrupted_error();
  }
  trees.clear();
  trees.shrink_to_fit();
#ifdef DEV_TIMERS
  fprintf(stderr, "leaf GEMM %.3f s, leaves total %.3f s\n", g_timer[0], g_timer[1]);
  fprintf(stderr, "cycles per row: threshold %.0f positions %.0f stamps %.0f take %.0f push %.0f\n", g_cyc[0]/g_cyc[5], g_cyc[1]/g_cyc[5], g_cyc[2]/g_cyc[5], g_cyc[3]/g_cyc[5], g_cyc[4]/g_cyc[5]);
#endif
#ifdef COUNT_NP
  for (std::size_t t = 0; t < par.n_trees; ++t) fprintf(stderr, "tree %zu: mean passing %.1f\n", t, double(g_np[t]) / g_rows[t]);
#endif
  st.updates.push_back(tree_updates);
#ifdef COUNT_CONTAINS
    fprintf(stderr, "contains calls after trees: %zu\n", g_contains);
#endif
#ifdef LSNN_DEV_HOOK
  LSNN_DEV_HOOK(heaps, 0, perm);
#endif
  {
    std::ostringstream msg;
    msg << "approx kNN: " << par.n_trees << " trees done";
    executor.report(msg.str());
  }

  // 2. The descent.
  const std::size_t c_max = par.max_candidates;
  std::vector<int> new_cand(n * c_max), old_cand(n * c_max);
  std::vector<std::uint32_t> new_count(n), old_count(n);
  std::vector<std::uint8_t> new_tag(n * c_max);
  std::vector<std::size_t> rev_ptr(n + 1);
  std::vector<int> rev_src(n * K);
  std::vector<std::uint8_t> rev_flag(n * K);
  const std::size_t chunk = 64;             // rows per join task
  const std::size_t chunks_per_batch = 64;  // tasks per batch of joins
  const std::size_t probe_stride = 16;      // 1 in 16 chunks probe an iteration
  const std::size_t total_chunks = (n + chunk - 1) / chunk;
  std::vector<std::size_t> chunk_order;
  std::vector<std::vector<detail::ListUpdate>> chunk_updates(chunks_per_batch);
  const double stop_below = par.delta * static_cast<double>(n) * static_cast<double>(K);

  for (std::size_t iter = 0; iter < par.n_iters; ++iter) {
    // Reverse lists (a counting sort, in order of the source row).
    std::fill(rev_ptr.begin(), rev_ptr.end(), 0);
    for (std::size_t q = 0; q < n; ++q) {
      const int* ix = heaps.indices(q);
      for (std::size_t s = 0; s < heaps.size(q); ++s) ++rev_ptr[static_cast<std::size_t>(ix[s]) + 1];
    }
    for (std::size_t i = 0; i < n; ++i) rev_ptr[i + 1] += rev_ptr[i];
    {
      std::vector<std::size_t> fill(rev_ptr.begin(), rev_ptr.end() - 1);
      for (std::size_t q = 0; q < n; ++q) {
        const int* ix = heaps.indices(q);
        const std::uint8_t* fl = heaps.flags(q);
        for (std::size_t s = 0; s < heaps.size(q); ++s) {
          const std::size_t p = static_cast<std::size_t>(ix[s]);
          rev_src[fill[p]] = static_cast<int>(q);
          rev_flag[fill[p]] = fl[s];
          ++fill[p];
        }
      }
    }
    // Candidates of the rows of chunks chunk_order[c0, c1): up to c_max new
    // and c_max old per row, by random priority; the new forward entries
    // sampled are marked old.
    auto build_candidates = [&](std::size_t c0, std::size_t c1) {
    const std::size_t n_parts = std::min(c1 - c0, 4 * n_threads);
    executor.parallel_for(0, n_parts, [&](std::size_t g0, std::size_t g1) {
      struct Entry {
        std::uint64_t key;  // priority
        int q;
        int slot;  // forward slot, or -1
        std::uint8_t flag;
      };
      std::vector<Entry> all, fresh, stale;
      // Rows already met while gathering row p's entries: seen[q] == p + 1,
      // at position where[q].
      std::vector<std::uint32_t> seen(n, 0), where(n);
      for (std::size_t g = g0; g < g1; ++g) {
        for (std::size_t ci = c0 + (c1 - c0) * g / n_parts; ci < c0 + (c1 - c0) * (g + 1) / n_parts; ++ci) {
        const std::size_t row0 = chunk_order[ci] * chunk, row1 = std::min(n, row0 + chunk);
        for (std::size_t p = row0; p < row1; ++p) {
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
          // Reverse entries: merged with the forward entry of the same row
          // (new if either is, with the forward entry's flag first).
          for (std::size_t r = rev_ptr[p]; r < rev_ptr[p + 1]; ++r) {
            const std::size_t q = static_cast<std::size_t>(rev_src[r]);
            if (seen[q] == stamp) {
              Entry& e = all[where[q]];
              if (e.flag == 0) e.flag = rev_flag[r];
            } else {
              seen[q] = stamp;
              where[q] = static_cast<std::uint32_t>(all.size());
              all.push_back({0, rev_src[r], -1, rev_flag[r]});
            }
          }
          fresh.clear();
          stale.clear();
          for (Entry& x : all) {
            x.key = hash64(par.seed, 2 + iter, p, static_cast<std::uint64_t>(x.q));
            (x.flag != 0 ? fresh : stale).push_back(x);
          }
          auto by_key = [](const Entry& a, const Entry& b) { return a.key < b.key; };
          if (fresh.size() > c_max) {
            std::nth_element(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(c_max), fresh.end(), by_key);
            fresh.resize(c_max);
          }
          const std::size_t o_max = par.max_old == ApproxKnnParams::automatic ? c_max : std::min(c_max, par.max_old);
          if (stale.size() > o_max) {
            std::nth_element(stale.begin(), stale.begin() + static_cast<std::ptrdiff_t>(o_max), stale.end(), by_key);
            stale.resize(o_max);
          }
          new_count[p] = static_cast<std::uint32_t>(fresh.size());
          old_count[p] = static_cast<std::uint32_t>(stale.size());
          for (std::size_t c = 0; c < fresh.size(); ++c) {
            new_cand[p * c_max + c] = fresh[c].q;
            new_tag[p * c_max + c] = fresh[c].flag;
            if (fresh[c].slot >= 0) fl[fresh[c].slot] = 0;
          }
          for (std::size_t c = 0; c < stale.size(); ++c) old_cand[p * c_max + c] = stale[c].q;
        }
        }
      }
    });
    };

    // Local joins in batches; each batch's updates are applied before the
    // next batch reads the thresholds.
    //
    // The first joins of an iteration are a probe: every probe_stride-th
    // chunk of rows. When the updates they make, scaled to all rows, fall
    // below delta * n * (k - 1), the iteration would not be worth finishing,
    // and the descent stops there. The candidates of the other rows are only
    // gathered after the probe.
    std::size_t iter_updates = 0, probe_rows = 0;
    bool stopped_early = false;
    chunk_order.clear();
    const std::size_t probe_offset = iter % probe_stride;
    if (total_chunks >= 2 * probe_stride) {
      for (std::size_t c = probe_offset; c < total_chunks; c += probe_stride) chunk_order.push_back(c);
    }
    const std::size_t probe_end = chunk_order.size();
    for (std::size_t c = 0; c < total_chunks; ++c) {
      if (probe_end == 0 || c % probe_stride != probe_offset) chunk_order.push_back(c);
    }
    build_candidates(0, probe_end > 0 ? probe_end : total_chunks);
    if (executor.interrupted()) throw interrupted_error();
    for (std::size_t pos = 0; pos < total_chunks;) {
      const std::size_t boundary = pos < probe_end ? probe_end : total_chunks;
      const std::size_t pos_end = std::min(boundary, pos + chunks_per_batch);
      const std::size_t n_chunks = pos_end - pos;
      executor.parallel_for(0, n_chunks, [&](std::size_t c0, std::size_t c1) {
        detail::JoinWorkspace ws;
        const DistanceKernels& kern = data.kernels();
        for (std::size_t ch = c0; ch < c1; ++ch) {
          std::vector<detail::ListUpdate>& out = chunk_updates[ch];
          out.clear();
          const std::size_t t0 = chunk_order[pos + ch] * chunk, t1 = std::min(n, t0 + chunk);
          for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t p = t;
            if (t + 1 < t1) {
              // Warm the caches for the next join: its rows' lists and data.
              const std::size_t pn = t + 1;
              const int* nc = &new_cand[pn * c_max];
              const int* oc = &old_cand[pn * c_max];
              for (std::size_t c = 0; c < new_count[pn]; ++c) heaps.prefetch(static_cast<std::size_t>(nc[c]));
              for (std::size_t c = 0; c < old_count[pn]; ++c) heaps.prefetch(static_cast<std::size_t>(oc[c]));
            }
            const std::size_t a = new_count[p], b = old_count[p];
            if (a == 0) continue;
            const std::size_t m = a + b;
            ws.ids.resize(m);
            std::copy(&new_cand[p * c_max], &new_cand[p * c_max] + a, ws.ids.begin());
            std::copy(&old_cand[p * c_max], &old_cand[p * c_max] + b, ws.ids.begin() + static_cast<std::ptrdiff_t>(a));
            ws.tile.resize(a * m);
            ws.thr.resize(m);
            ws.pos.resize(m);
            for (std::size_t j = 0; j < m; ++j) ws.thr[j] = heaps.threshold(static_cast<std::size_t>(ws.ids[j]));
            ws.orig.resize(m);
            for (std::size_t j = 0; j < m; ++j) ws.orig[j] = perm[static_cast<std::size_t>(ws.ids[j])];
#ifdef DEV_TIMERS
            unsigned long long j0c = __rdtsc();
#endif
            space.score_block(ws.orig.data(), a, m, ws.score_ws, ws.tile.data());
#ifdef DEV_TIMERS
            unsigned long long j1c = __rdtsc();
            g_cyc[6] += j1c - j0c;
#endif
            const std::uint8_t* tag = &new_tag[p * c_max];
            for (std::size_t i = 0; i < a; ++i) {
              const float* s = &ws.tile[i * m];
              const std::size_t j0 = i + 1;
              if (j0 >= m) continue;
              const int u = ws.ids[i];
              const std::uint8_t tag_u = tag[i];
              // Same leaf of the same tree: already compared.
              auto compared = [&](std::size_t j) { return tag_u >= 2 && j < a && tag[j] == tag_u; };
              // u takes v.
              std::size_t np = kern.positions_at_most(s + j0, &ws.thr[i], true, m - j0, ws.pos.data());
              for (std::size_t c = 0; c < np; ++c) {
                const std::size_t j = j0 + ws.pos[c];
                const int v = ws.ids[j];
                if (v != u && !compared(j) && !heaps.contains(static_cast<std::size_t>(u), v)) out.push_back({u, v, s[j]});
              }
              // v takes u.
              np = kern.positions_at_most(s + j0, &ws.thr[j0], false, m - j0, ws.pos.data());
              for (std::size_t c = 0; c < np; ++c) {
                const std::size_t j = j0 + ws.pos[c];
                const int v = ws.ids[j];
                if (v != u && !compared(j) && !heaps.contains(static_cast<std::size_t>(v), u)) out.push_back({v, u, s[j]});
              }
            }
#ifdef DEV_TIMERS
            g_cyc[7] += __rdtsc() - j1c;
#endif
          }
        }
      });
      // Apply: each part owns a range of target rows and reads every chunk's
      // updates in order, so each row sees its updates in a fixed order.
      std::vector<std::size_t> part_updates(n_threads, 0);
      executor.parallel_for(0, n_threads, [&](std::size_t t0, std::size_t t1) {
        for (std::size_t t = t0; t < t1; ++t) {
          const int lo = static_cast<int>(n * t / n_threads);
          const int hi = static_cast<int>(n * (t + 1) / n_threads);
          std::size_t count = 0;
          for (std::size_t ch = 0; ch < n_chunks; ++ch) {
            for (const detail::ListUpdate& u : chunk_updates[ch]) {
              if (u.target < lo || u.target >= hi) continue;
              count += heaps.push(static_cast<std::size_t>(u.target), u.score, u.source, 1);
            }
          }
          part_updates[t] = count;
        }
      });
      for (std::size_t c : part_updates) iter_updates += c;
      for (std::size_t ch = 0; ch < n_chunks; ++ch) {
        const std::size_t t0 = chunk_order[pos + ch] * chunk;
        if (pos < probe_end) probe_rows += std::min(n, t0 + chunk) - t0;
      }
      pos = pos_end;
      if (executor.interrupted()) throw interrupted_error();
      if (pos == probe_end && probe_end > 0) {
        if (static_cast<double>(iter_updates) * static_cast<double>(n) / static_cast<double>(probe_rows) < stop_below) {
          stopped_early = true;
          break;
        }
        build_candidates(probe_end, total_chunks);
        if (executor.interrupted()) throw interrupted_error();
      }
    }
    st.updates.push_back(iter_updates);
    st.iterations = iter + 1;
    {
      std::ostringstream msg;
      msg << "approx kNN: iteration " << (iter + 1) << " of at most " << par.n_iters << ", "
          << iter_updates << " list updates";
      if (stopped_early) msg << " in a probe of " << probe_rows << " rows: converged";
      executor.report(msg.str());
    }
#ifdef LSNN_DEV_HOOK
    LSNN_DEV_HOOK(heaps, iter + 1, perm);
#endif
#ifdef COUNT_CONTAINS
    fprintf(stderr, "contains calls so far: %zu\n", g_contains);
#endif
    if (stopped_early || static_cast<double>(iter_updates) < stop_below) break;
  }

#ifdef DEV_TIMERS
  fprintf(stderr, "join cycles: score %.3f Gc, pairs %.3f Gc\n", g_cyc[6] * 1e-9, g_cyc[7] * 1e-9);
#endif
  // 3. Exact distances, sorted, self first. Rows are sorted in the order of
  // their new numbers (neighbouring rows share neighbours, whose data stays
  // in cache), into the lists' own index arrays and a buffer of distances,
  // then written to the graph by blocks of consecutive rows (R's column-major
  // layout then fills whole cache lines).
  std::vector<double> sorted_dist(n * K);
  std::vector<unsigned char> exhaustive(n, 0);
  batched_for(executor, n, 4096, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> cand;
    detail::TileBuffers buf;
    for (std::size_t t = begin; t < end; ++t) {
      const std::size_t i = static_cast<std::size_t>(perm[t]);
      const std::size_t size = heaps.size(t);
      if (size < others || data.needs_exact_search(i)) {
        exhaustive[t] = 1;
        detail::refine_row(data, i, others, std::numeric_limits<double>::infinity(), buf, cand);
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
      int* out = heaps.mutable_indices(t);
      for (std::size_t c = 0; c < others; ++c) {
        out[c] = cand[c].second;
        sorted_dist[t * K + c] = data.distance_from_exact_score(cand[c].first);
      }
    }
  });
  KnnGraph graph(n, k);
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
  st.rows_searched_exhaustively = 0;
  for (unsigned char e : exhaustive) st.rows_searched_exhaustively += e;
  executor.report("approx kNN: done");
  return graph;
}

}  // namespace lsnn

#endif  // LSNN_NNDESCENT_H
