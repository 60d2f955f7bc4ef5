// Embedding quality measures: how well an embedding Y keeps the neighbours,
// the neighbour ranks and the distance order of the data X it came from.
//
// Everything here works from RowData (distance.h), one for each space, and
// never forms an n x n matrix:
//  - neighbour_preservation(): the share of each row's k nearest neighbours
//    in X that are among its k nearest in Y, from two exact kNN graphs;
//  - rank_penalties(): the sums behind trustworthiness and continuity (Venna
//    and Kaski, 2001) for a list of evaluated rows. Each evaluated row is
//    scored against every row in both spaces (float matrix products over
//    blocks of evaluated rows, memory O(block x n)); its k nearest
//    neighbours and the ranks of its intruders and extruders are then
//    decided on exact double-precision scores, using the float error bound
//    of RowData::score_tolerance() to recompute only the rows whose order
//    the float scores leave in doubt. The results are therefore exactly
//    those of a brute-force computation in double precision;
//  - triplet_accuracy() and distance_spearman(): random triplets and pairs of
//    rows, drawn from a seed with counter-based random numbers, or all of
//    them when asked for at least as many as there are.
//
// Ranks: rank(i, j) = 1 + #{l != i : (s(i, l), l) < (s(i, j), j)}, where s is
// the exact score (monotone in the distance) and ties go to the smaller row
// number, the order exact_knn() uses, so the k nearest neighbours are exactly
// the rows of rank 1 to k.
//
// Results do not depend on the number of threads: each output element is
// written from one index of a parallel range, and sums are taken serially
// afterwards in a fixed order.
#ifndef LSNN_QUALITY_H
#define LSNN_QUALITY_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../knn/distance.h"
#include "../knn/exact_knn.h"
#include "../base/graph.h"
#include "neighbour_overlap.h"
#include "../base/parallel.h"
#include "../base/random.h"
#include "../knn/scorer.h"

namespace lsnn {

// Per row, |A_i n B_i| / k, where A_i and B_i are columns 1..k of the two
// graphs (column 0, the row itself, excluded; so is the row should it appear
// again); the mean over rows is returned. Both graphs need k + 1 columns.
template <typename Executor>
double neighbour_preservation(const GraphView& a, const GraphView& b, std::size_t k,
                              Executor& executor) {
  if (b.n != a.n) throw std::invalid_argument("the graphs must have the same number of rows");
  if (k < 1 || a.k < k + 1 || b.k < k + 1) {
    throw std::invalid_argument("both graphs need k + 1 columns");
  }
  return mean_shared_neighbours(a, b, 1, k, true, executor);
}

// The sums of Venna and Kaski's penalties for each evaluated row i:
// trust[r] = sum over j in U_k(i) \ N_k(i) of (rank_X(i, j) - k) (intruders:
// near in Y, not in X), cont[r] = sum over j in N_k(i) \ U_k(i) of
// (rank_Y(i, j) - k) (extruders), where N_k and U_k are the k nearest
// neighbours in X and in Y.
struct RankPenalties {
  std::vector<double> trust;
  std::vector<double> cont;
};

namespace detail {

// Float scores of the rows `rows[0..m)` of `data` against all its rows,
// into out (row r at out[r * n], converted to double).
inline void score_rows_against_all(const RowData& data, const int* rows, std::size_t m,
                                   std::vector<double>& out, TileBuffers& buf) {
  const std::size_t n = data.n();
  const std::size_t chunk = 2048;
  out.resize(m * n);
  buf.score.resize(m * chunk);
  const Scorer scorer(data);
  for (std::size_t b0 = 0; b0 < n; b0 += chunk) {
    const std::size_t b1 = std::min(n, b0 + chunk), mb = b1 - b0;
    scorer.score_block(RowSet::list(rows, m), RowSet::range(b0, b1), buf.rows, buf.score.data());
    for (std::size_t r = 0; r < m; ++r) {
      const float* s = &buf.score[r * mb];
      double* o = &out[r * n + b0];
      for (std::size_t c = 0; c < mb; ++c) o[c] = s[c];
    }
  }
}

// The error bound of row i's approximate scores `f` (length n). Rows whose
// float scores mean nothing (zero rows under cosine) get exact scores
// instead, and a bound of 0.
inline double prepare_scores(const RowData& data, std::size_t i, double* f) {
  if (!data.needs_exact_search(i)) return data.score_tolerance(i);
  for (std::size_t l = 0; l < data.n(); ++l) f[l] = data.exact_score(i, l);
  return 0.0;
}

// The k nearest rows to i other than i, as (exact score, index) in order:
// only rows whose score is within 2 tol of the k-th smallest approximate
// score can be among them (each of the k rows at or below that score is
// within tol of it exactly, so the true k-th exact score is at most
// f_k + tol, and a true neighbour's approximate score at most f_k + 2 tol).
inline void nearest_from_scores(const RowData& data, std::size_t i, const double* f, double tol,
                                bool exact, std::size_t k, std::vector<double>& scratch,
                                std::vector<std::pair<double, int>>& out) {
  const std::size_t n = data.n();
  // The k-th smallest score by one pass with a max-heap of the k smallest:
  // after the first rows, almost every score fails the comparison with its
  // top, which is cheaper than a selection over a copy of all n.
  scratch.clear();
  for (std::size_t l = 0; l < n; ++l) {
    if (l == i) continue;
    if (scratch.size() < k) {
      scratch.push_back(f[l]);
      std::push_heap(scratch.begin(), scratch.end());
    } else if (f[l] < scratch.front()) {
      std::pop_heap(scratch.begin(), scratch.end());
      scratch.back() = f[l];
      std::push_heap(scratch.begin(), scratch.end());
    }
  }
  const double cut = scratch.front() + 2.0 * tol;
  out.clear();
  for (std::size_t l = 0; l < n; ++l) {
    if (l != i && f[l] <= cut) {
      out.emplace_back(exact ? f[l] : data.exact_score(i, l), static_cast<int>(l));
    }
  }
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), out.end());
  out.resize(k);
}

// Sum over the targets (exact score, index), sorted, of rank(i, target) - k.
// A row l counts towards target j's rank when (s_l, l) < (S_j, j): certainly
// when its approximate score is below S_j - tol, certainly not when above
// S_j + tol; only rows within tol of some target are scored exactly.
inline double rank_penalty(const RowData& data, std::size_t i, const double* f, double tol,
                           bool exact, std::size_t k, const std::vector<std::pair<double, int>>& targets,
                           std::vector<double>& key, std::vector<std::size_t>& diff) {
  const std::size_t m = targets.size();
  if (m == 0) return 0.0;
  key.resize(m);
  for (std::size_t t = 0; t < m; ++t) key[t] = targets[t].first;
  diff.assign(m + 1, 0);
  const double top = key[m - 1] + tol, bottom = key[0] - tol;
  const std::size_t n = data.n();
  for (std::size_t l = 0; l < n; ++l) {
    const double fl = f[l];
    if (fl > top || l == i) continue;
    if (fl < bottom) {  // before every target
      ++diff[0];
      continue;
    }
    // Targets [0, lo) are certainly before l, [hi, m) certainly after it.
    const std::size_t lo = static_cast<std::size_t>(
        std::lower_bound(key.begin(), key.end(), fl - tol) - key.begin());
    const std::size_t hi = static_cast<std::size_t>(
        std::upper_bound(key.begin(), key.end(), fl + tol) - key.begin());
    if (lo == hi) {
      ++diff[hi];
      continue;
    }
    const std::pair<double, int> me(exact ? fl : data.exact_score(i, l), static_cast<int>(l));
    const std::size_t p = static_cast<std::size_t>(
        std::upper_bound(targets.begin(), targets.end(), me) - targets.begin());
    ++diff[p];
  }
  double penalty = 0.0;
  std::size_t before = 0;
  for (std::size_t t = 0; t < m; ++t) {
    before += diff[t];
    penalty += static_cast<double>(before + 1) - static_cast<double>(k);
  }
  return penalty;
}

// The rows of `from` that are not in `other`, with their exact scores from
// row i in `space`, sorted.
inline void missing_from(const RowData& space, std::size_t i,
                         const std::vector<std::pair<double, int>>& from,
                         const std::vector<std::pair<double, int>>& other,
                         std::vector<int>& other_sorted,
                         std::vector<std::pair<double, int>>& out) {
  other_sorted.clear();
  for (const auto& o : other) other_sorted.push_back(o.second);
  std::sort(other_sorted.begin(), other_sorted.end());
  out.clear();
  for (const auto& e : from) {
    if (!std::binary_search(other_sorted.begin(), other_sorted.end(), e.second)) {
      out.emplace_back(space.exact_score(i, static_cast<std::size_t>(e.second)), e.second);
    }
  }
  std::sort(out.begin(), out.end());
}

}  // namespace detail

// Trustworthiness and continuity penalties for the evaluated rows `rows`
// (0-based, m of them) of X and Y (the same n rows), with k < n.
template <typename Executor>
RankPenalties rank_penalties(const RowData& x, const RowData& y, const std::vector<int>& rows,
                             std::size_t k, Executor& executor) {
  const std::size_t n = x.n();
  if (y.n() != n) throw std::invalid_argument("X and Y must have the same number of rows");
  if (k < 1 || k >= n) throw std::invalid_argument("k must be between 1 and n - 1");
  for (int r : rows) {
    if (r < 0 || static_cast<std::size_t>(r) >= n) throw std::invalid_argument("row out of range");
  }
  const std::size_t m = rows.size();
  RankPenalties out;
  out.trust.assign(m, 0.0);
  out.cont.assign(m, 0.0);
  // Blocks of rows share one pass over the data; 32 keeps the score buffers
  // (2 x 32 x n doubles) within a few tens of MB at n = 70,000.
  const std::size_t block = 32;
  const std::size_t n_blocks = (m + block - 1) / block;
  batched_for(executor, n_blocks, std::max<std::size_t>(executor.n_threads(), 1) * 4,
              [&](std::size_t begin, std::size_t end) {
    detail::TileBuffers buf;
    std::vector<double> fx, fy, scratch, key;
    std::vector<std::size_t> diff;
    std::vector<int> sorted;
    std::vector<std::pair<double, int>> nx, ny, targets;
    for (std::size_t blk = begin; blk < end; ++blk) {
      const std::size_t r0 = blk * block, r1 = std::min(m, r0 + block);
      detail::score_rows_against_all(x, &rows[r0], r1 - r0, fx, buf);
      detail::score_rows_against_all(y, &rows[r0], r1 - r0, fy, buf);
      for (std::size_t r = r0; r < r1; ++r) {
        const std::size_t i = static_cast<std::size_t>(rows[r]);
        double* fxi = &fx[(r - r0) * n];
        double* fyi = &fy[(r - r0) * n];
        const bool ex = x.needs_exact_search(i), ey = y.needs_exact_search(i);
        const double tx = detail::prepare_scores(x, i, fxi);
        const double ty = detail::prepare_scores(y, i, fyi);
        detail::nearest_from_scores(x, i, fxi, tx, ex, k, scratch, nx);
        detail::nearest_from_scores(y, i, fyi, ty, ey, k, scratch, ny);
        detail::missing_from(x, i, ny, nx, sorted, targets);
        out.trust[r] = detail::rank_penalty(x, i, fxi, tx, ex, k, targets, key, diff);
        detail::missing_from(y, i, nx, ny, sorted, targets);
        out.cont[r] = detail::rank_penalty(y, i, fyi, ty, ey, k, targets, key, diff);
      }
    }
  });
  return out;
}

// How a sampled measure ran: the number of items (triplets or pairs) used
// and whether they were all of them.
struct SampleInfo {
  double n_items = 0;
  bool exhaustive = false;
};

// Distinct rows (i, j, l) from a seed and a counter, uniform over ordered
// triplets of distinct rows (n >= 3).
inline void random_triplet(std::uint64_t seed, std::uint64_t t, std::size_t n, std::size_t& i,
                           std::size_t& j, std::size_t& l) {
  SplitMix64 rng(hash64(seed, t));
  i = rng.below(n);
  j = rng.below(n - 1);
  if (j >= i) ++j;
  l = rng.below(n - 2);
  const std::size_t lo = std::min(i, j), hi = std::max(i, j);
  if (l >= lo) ++l;
  if (l >= hi) ++l;
}

inline int sign_of(double v) { return (v > 0.0) - (v < 0.0); }

// Share of triplets (i, j, l) of distinct rows whose order of distances
// d(i, j) vs d(i, l) is the same in X and Y (equal in both counts as kept;
// equal in one space only does not). `n_triplets` random triplets, or, when
// that is at least n (n - 1) (n - 2) / 2, every triplet with j < l once.
template <typename Executor>
double triplet_accuracy(const RowData& x, const RowData& y, double n_triplets,
                        std::uint64_t seed, Executor& executor, SampleInfo* info = nullptr) {
  const std::size_t n = x.n();
  if (y.n() != n) throw std::invalid_argument("X and Y must have the same number of rows");
  if (n < 3) throw std::invalid_argument("triplets need at least 3 rows");
  const double nd = static_cast<double>(n);
  const double all = nd * (nd - 1.0) * (nd - 2.0) / 2.0;
  auto kept = [&](std::size_t i, std::size_t j, std::size_t l) {
    const int sx = sign_of(x.exact_distance(i, j) - x.exact_distance(i, l));
    const int sy = sign_of(y.exact_distance(i, j) - y.exact_distance(i, l));
    return sx == sy;
  };
  SampleInfo local;
  SampleInfo& in = info ? *info : local;
  if (n_triplets >= all) {
    std::vector<double> count(n, 0.0);
    batched_for(executor, n, 256, [&](std::size_t begin, std::size_t end) {
      std::vector<double> dx(n), dy(n);
      for (std::size_t i = begin; i < end; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          dx[j] = x.exact_distance(i, j);
          dy[j] = y.exact_distance(i, j);
        }
        std::size_t c = 0;
        for (std::size_t j = 0; j < n; ++j) {
          if (j == i) continue;
          for (std::size_t l = j + 1; l < n; ++l) {
            if (l != i && sign_of(dx[j] - dx[l]) == sign_of(dy[j] - dy[l])) ++c;
          }
        }
        count[i] = static_cast<double>(c);
      }
    });
    double total = 0.0;
    for (double c : count) total += c;
    in.n_items = all;
    in.exhaustive = true;
    return total / all;
  }
  const std::size_t t_total = static_cast<std::size_t>(n_triplets);
  const std::size_t chunk = 4096;
  const std::size_t n_chunks = (t_total + chunk - 1) / chunk;
  std::vector<double> count(n_chunks, 0.0);
  batched_for(executor, n_chunks, 64, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      const std::size_t t0 = c * chunk, t1 = std::min(t_total, t0 + chunk);
      std::size_t kc = 0;
      for (std::size_t t = t0; t < t1; ++t) {
        std::size_t i, j, l;
        random_triplet(seed, t, n, i, j, l);
        if (kept(i, j, l)) ++kc;
      }
      count[c] = static_cast<double>(kc);
    }
  });
  double total = 0.0;
  for (double c : count) total += c;
  in.n_items = static_cast<double>(t_total);
  in.exhaustive = false;
  return total / static_cast<double>(t_total);
}

namespace detail {

// Ranks 1..m of v with ties given their average rank (as R's rank()).
inline std::vector<double> average_ranks(const std::vector<double>& v) {
  const std::size_t m = v.size();
  std::vector<std::uint32_t> order(m);
  for (std::size_t t = 0; t < m; ++t) order[t] = static_cast<std::uint32_t>(t);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return v[a] < v[b] || (v[a] == v[b] && a < b); });
  std::vector<double> rank(m);
  std::size_t s = 0;
  while (s < m) {
    std::size_t e = s + 1;
    while (e < m && v[order[e]] == v[order[s]]) ++e;
    const double r = 0.5 * static_cast<double>(s + 1 + e);  // mean of s + 1 .. e
    for (std::size_t t = s; t < e; ++t) rank[order[t]] = r;
    s = e;
  }
  return rank;
}

inline double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t m = a.size();
  double ma = 0.0, mb = 0.0;
  for (std::size_t t = 0; t < m; ++t) {
    ma += a[t];
    mb += b[t];
  }
  ma /= static_cast<double>(m);
  mb /= static_cast<double>(m);
  double sab = 0.0, saa = 0.0, sbb = 0.0;
  for (std::size_t t = 0; t < m; ++t) {
    const double da = a[t] - ma, db = b[t] - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  if (saa == 0.0 || sbb == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return sab / std::sqrt(saa * sbb);
}

}  // namespace detail

// Spearman's correlation between the distances in X and in Y over
// `n_pairs` random pairs of distinct rows (uniform over unordered pairs), or
// over every pair when that is at least n (n - 1) / 2. NaN when the
// distances are all equal in one space.
template <typename Executor>
double distance_spearman(const RowData& x, const RowData& y, double n_pairs, std::uint64_t seed,
                         Executor& executor, SampleInfo* info = nullptr) {
  const std::size_t n = x.n();
  if (y.n() != n) throw std::invalid_argument("X and Y must have the same number of rows");
  if (n < 2) throw std::invalid_argument("pairs need at least 2 rows");
  const double nd = static_cast<double>(n);
  const double all = nd * (nd - 1.0) / 2.0;
  const bool exhaustive = n_pairs >= all;
  const std::size_t m = exhaustive ? static_cast<std::size_t>(all) : static_cast<std::size_t>(n_pairs);
  std::vector<double> dx(m), dy(m);
  // Row i's pairs (i, j > i) start at position i n - i (i + 1) / 2.
  auto first_pair = [n](std::size_t i) { return i * n - i * (i + 1) / 2; };
  if (exhaustive) {
    batched_for(executor, n, 256, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        std::size_t t = first_pair(i);
        for (std::size_t j = i + 1; j < n; ++j, ++t) {
          dx[t] = x.exact_distance(i, j);
          dy[t] = y.exact_distance(i, j);
        }
      }
    });
  } else {
    batched_for(executor, m, 65536, [&](std::size_t begin, std::size_t end) {
      for (std::size_t t = begin; t < end; ++t) {
        SplitMix64 rng(hash64(seed, t));
        const std::size_t i = rng.below(n);
        std::size_t j = rng.below(n - 1);
        if (j >= i) ++j;
        dx[t] = x.exact_distance(i, j);
        dy[t] = y.exact_distance(i, j);
      }
    });
  }
  SampleInfo local;
  SampleInfo& in = info ? *info : local;
  in.n_items = static_cast<double>(m);
  in.exhaustive = exhaustive;
  const std::vector<double> rx = detail::average_ranks(dx);
  std::vector<double>().swap(dx);
  const std::vector<double> ry = detail::average_ranks(dy);
  std::vector<double>().swap(dy);
  return detail::pearson(rx, ry);
}

}  // namespace lsnn

#endif  // LSNN_QUALITY_H
