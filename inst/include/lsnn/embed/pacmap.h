// PaCMAP (Wang et al. 2021) and LocalMAP (Wang et al. 2025): an embedding
// cost over three sets of pairs, and the phase hook that changes its weights
// (and LocalMAP's pairs) as the optimisation goes on. The optimiser is the
// driver of optimizer.h with the Adam stepper of adam.h.
//
// With s = |y_i - y_j|^2 and t = 1 + s, the cost is a weighted sum over
// the pairs (i, j) of each set:
//
//   near      w_near  t / (10 + t)                  (the LSNN graph)
//   mid-near  w_mid   t / (10000 + t)               (second nearest of 6
//                                                     random rows)
//   further   w_far   1 / (1 + t)                   (random non-neighbours)
//
// LocalMAP's last phase replaces the near term by one whose derivative in s
// is that of PaCMAP's times c / sqrt(t), c = low_dist_thres / 2 (the
// official source scales the near attraction so):
//
//   near      w_near c (sqrt(t) / (10 + t) + atan(sqrt(t / 10)) / sqrt(10))
//
// so that the gradient stays the exact gradient of the reported cost. Each
// pair (i, j) gives both points the gradient 2 w dL/ds (y_i - y_j) and
// (y_j - y_i); it is evaluated once and added to both (PairTiles below
// schedules the pairs so that the sums do not depend on the number of
// threads).
//
// The weight schedule (iterations counted from 0, phases p1, p2, p3):
//   phase 1: w_mid from 1000 down to 3 linearly, w_near 2, w_far 1;
//   phase 2: w_mid 3, w_near 3, w_far 1;
//   phase 3: w_mid 0, w_near 1, w_far 1; LocalMAP: the local near term
//            after the first step of the phase, and the further pairs
//            redrawn after every 10th step among points within
//            low_dist_thres in the embedding.
//
// Pairs are sampled from a seed and the row's index (random.h), so they do
// not depend on the number of threads either.
#ifndef LSNN_PACMAP_H
#define LSNN_PACMAP_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../knn/distance.h"
#include "../base/parallel.h"
#include "../base/random.h"
#include "../base/tile_schedule.h"

namespace lsnn {

// The pairs of one set: row r (r < rows) holds the k partners of point
// first + r (0-based point ids). They are stored row by row in `partner`,
// or read in place from a column-major matrix of 1-based ids (`columns`,
// column c of row r at columns[c * column_stride + r], as an R integer
// matrix holds them), so that a caller's large pair matrices are not copied.
// A view may also be read in a new numbering of the points (renumber.h):
// row r is then the matrix's row row_of[r], and a partner j read there is
// point renumber[j].
struct PairSet {
  std::size_t first = 0;
  std::size_t rows = 0;
  std::size_t k = 0;
  std::vector<int> partner;
  const int* columns = nullptr;
  std::size_t column_stride = 0;
  const int* row_of = nullptr;
  const int* renumber = nullptr;

  int at(std::size_t r, std::size_t c) const {
    if (columns == nullptr) return partner[r * k + c];
    if (row_of == nullptr) return columns[c * column_stride + r] - 1;
    return renumber[columns[c * column_stride + static_cast<std::size_t>(row_of[r])] - 1];
  }
  // Row r's partners into out[0, k).
  void row(std::size_t r, int* out) const {
    for (std::size_t c = 0; c < k; ++c) out[c] = at(r, c);
  }
  // Copies the partners of a view into `partner` (to change them).
  void own() {
    if (columns == nullptr) return;
    std::vector<int> copy(rows * k);
    for (std::size_t r = 0; r < rows; ++r) row(r, copy.data() + r * k);
    partner.swap(copy);
    columns = nullptr;
    column_stride = 0;
    row_of = renumber = nullptr;
  }
};

enum PairKind { kNear = 0, kMidNear = 1, kFurther = 2, kPairKinds = 3 };

// The losses of the three kinds as functions of s = |y_i - y_j|^2 (t = 1 +
// s): each returns dL/ds and, when Value, sets `value` to L (the
// evaluation skips L, and LocalMAP's atan, unless the cost is asked for).
struct PairLosses {
  template <bool Value>
  static double near(double s, double& value) {
    const double u = 1.0 / (s + 11.0);
    if (Value) value = (1.0 + s) * u;
    return 10.0 * u * u;
  }
  // LocalMAP's near term with c = local_scale: dL/ds = c 10 u^2 / sqrt(t),
  // u = 1 / (10 + t), from one division (q = 1 / (sqrt(t) (10 + t)), so
  // u = sqrt(t) q and u^2 / sqrt(t) = u q).
  template <bool Value>
  static double local_near(double s, double local_scale, double& value) {
    const double t = 1.0 + s, r = std::sqrt(t), q = 1.0 / (r * (10.0 + t)), u = r * q;
    if (Value) value = local_scale * (r * u + std::atan(std::sqrt(t / 10.0)) / std::sqrt(10.0));
    return local_scale * 10.0 * u * q;
  }
  template <bool Value>
  static double mid_near(double s, double& value) {
    const double u = 1.0 / (s + 10001.0);
    if (Value) value = (1.0 + s) * u;
    return 10000.0 * u * u;
  }
  template <bool Value>
  static double further(double s, double& value) {
    const double u = 1.0 / (2.0 + s);
    if (Value) value = u;
    return -u * u;
  }
};

struct PairWeights {
  double w[kPairKinds] = {1.0, 0.0, 1.0};
  // > 0: LocalMAP's near term with c = local_scale
  double local_scale = 0.0;
};

// The schedule of the weights and of LocalMAP's redraws.
struct PairSchedule {
  int phase1 = 100, phase2 = 100, phase3 = 250;
  double mid_start = 1000.0, mid_end = 3.0;
  bool local = false;          // LocalMAP
  double low_dist_thres = 10.0;
  int redraw_every = 10;
  // a constant schedule: the phase-3 weights throughout (placing new points)
  bool constant = false;

  PairWeights weights(int itr) const {
    PairWeights pw;
    if (constant) return pw;
    if (itr < phase1) {
      const double f = static_cast<double>(itr) / phase1;
      pw.w[kNear] = 2.0;
      pw.w[kMidNear] = (1.0 - f) * mid_start + f * mid_end;
      pw.w[kFurther] = 1.0;
    } else if (itr < phase1 + phase2) {
      pw.w[kNear] = 3.0;
      pw.w[kMidNear] = 3.0;
      pw.w[kFurther] = 1.0;
    } else if (local && itr > phase1 + phase2) {
      pw.local_scale = low_dist_thres / 2.0;
    }
    return pw;
  }
  // whether LocalMAP redraws the further pairs before step itr
  bool redraw(int itr) const {
    const int prev = itr - 1;
    return local && !constant && prev > phase1 + phase2 && prev % redraw_every == 0;
  }
};

// The pairs of the three sets grouped for their evaluation. The points are
// cut into blocks of 2^shift consecutive points; tile (a, b) holds the
// pairs of a set whose row's point is in block a and whose partner is in
// block b, each packed as the two points' offsets in their blocks (16 bits
// each), in the order of the rows and of their columns. The tiles {a, b}
// run in the rounds of tile_schedule.h: the tiles of a round touch
// disjoint blocks, so each adds to its points' gradients with no other
// thread writing there, and every sum is taken in the same order whatever
// the number of threads.
//
// Each pair is evaluated once, and a tile reads and writes only its two
// blocks, small enough (4096 points in 2-D) that their coordinates and
// gradients stay in a core's L2 cache while the tile's pairs stream past
// (4 bytes a pair). Evaluating each pair from both of its points instead
// would read all over the layout, a cache miss a pair (bench/CHANGELOG.md,
// "The pair sums").
class PairTiles {
 public:
  // The blocks for n points in d dimensions with `pairs` pairs in all: two
  // blocks' coordinates and gradients in 256 KiB, at least 8 blocks when
  // they can have 256 points (so that the rounds have tiles for several
  // threads), at most 1024 blocks unless they would exceed 2^16 points.
  // Then, while the tiles would hold fewer than 8 pairs per point of a block
  // and there are at least 16 blocks, the blocks double: a tile loads its two
  // blocks whole, so sparse tiles cost memory traffic rather than pair
  // evaluations (bench/README.md, "PaCMAP and LocalMAP": "Steps at 1e6
  // points", how the blocks were chosen). The
  // blocks depend only on n, d and the number of pairs, never on the
  // number of threads.
  void set_blocks(std::size_t n, std::size_t d, std::size_t pairs) {
    int shift = 0;
    while (shift < 16 && (std::size_t{2} << shift) * d <= 8192) ++shift;
    while (shift > 8 && (n >> shift) < 8) --shift;
    while (shift < 16 && (n >> shift) >= 1024) ++shift;
    const auto blocks_at = [n](int s) { return (n + (std::size_t{1} << s) - 1) >> s; };
    while (shift < 16 && blocks_at(shift + 1) >= 16 &&
           static_cast<double>(pairs) / (static_cast<double>(blocks_at(shift)) * blocks_at(shift)) <
               8.0 * static_cast<double>(std::size_t{1} << shift)) {
      ++shift;
    }
    shift_ = shift;
    blocks_ = blocks_at(shift);
    rounds_ = round_robin_rounds(blocks_);
  }

  std::size_t block_start(std::size_t b) const { return b << shift_; }
  const std::vector<TileRound>& rounds() const { return rounds_; }

  // The pairs of kind t in tile (a, b): `count` of them from the returned
  // pointer.
  const std::uint32_t* pairs(int t, std::size_t a, std::size_t b, std::size_t& count) const {
    const std::size_t x = a * blocks_ + b;
    count = ptr_[t][x + 1] - ptr_[t][x];
    return pair_[t].data() + ptr_[t][x];
  }

  // Groups the pairs of `set` as kind t (a counting sort over the tiles,
  // each block of rows counted and placed by one index).
  template <typename Executor>
  void build(int t, const PairSet& set, Executor& executor) {
    const std::size_t B = blocks_, k = set.k;
    const std::size_t mask = (std::size_t{1} << shift_) - 1;
    std::vector<std::size_t>& ptr = ptr_[t];
    ptr.assign(B * B + 1, 0);
    // rows [lo, hi) of the set are those of block a's points
    const auto rows_of = [&](std::size_t a, std::size_t& lo, std::size_t& hi) {
      const std::size_t p0 = std::max(block_start(a), set.first);
      const std::size_t p1 = std::min(block_start(a + 1), set.first + set.rows);
      lo = p0 - set.first;
      hi = p1 > p0 ? p1 - set.first : lo;
    };
    executor.parallel_for(
        0, B,
        [&](std::size_t b0, std::size_t b1) {
          for (std::size_t a = b0; a < b1; ++a) {
            std::size_t lo, hi;
            rows_of(a, lo, hi);
            std::size_t* count = ptr.data() + a * B + 1;
            for (std::size_t c = 0; c < k; ++c) {
              for (std::size_t r = lo; r < hi; ++r) {
                ++count[static_cast<std::size_t>(set.at(r, c)) >> shift_];
              }
            }
          }
        },
        1);
    for (std::size_t x = 0; x < B * B; ++x) ptr[x + 1] += ptr[x];
    pair_[t].resize(ptr[B * B]);
    std::uint32_t* out = pair_[t].data();
    executor.parallel_for(
        0, B,
        [&](std::size_t b0, std::size_t b1) {
          std::vector<std::size_t> at(B);
          for (std::size_t a = b0; a < b1; ++a) {
            std::size_t lo, hi;
            rows_of(a, lo, hi);
            std::copy(ptr.begin() + a * B, ptr.begin() + (a + 1) * B, at.begin());
            for (std::size_t r = lo; r < hi; ++r) {
              const std::uint32_t own = static_cast<std::uint32_t>((set.first + r) & mask);
              for (std::size_t c = 0; c < k; ++c) {
                const std::size_t j = static_cast<std::size_t>(set.at(r, c));
                out[at[j >> shift_]++] = own | static_cast<std::uint32_t>(j & mask) << 16;
              }
            }
          }
        },
        1);
  }

 private:
  int shift_ = 0;
  std::size_t blocks_ = 0;
  std::vector<TileRound> rounds_;
  std::vector<std::size_t> ptr_[kPairKinds];
  std::vector<std::uint32_t> pair_[kPairKinds];
};

// A set of at most `capacity` point ids (>= 0) whose membership test takes
// constant time: open addressing in a table at least twice the capacity.
class IdSet {
 public:
  explicit IdSet(std::size_t capacity) {
    while ((std::size_t{1} << bits_) < 2 * capacity) ++bits_;
    slot_.assign(std::size_t{1} << bits_, -1);
  }
  void clear() {
    for (std::size_t s : used_) slot_[s] = -1;
    used_.clear();
  }
  bool contains(int id) const {
    for (std::size_t s = home(id);; s = (s + 1) & mask()) {
      if (slot_[s] == id) return true;
      if (slot_[s] < 0) return false;
    }
  }
  void insert(int id) {
    std::size_t s = home(id);
    for (; slot_[s] >= 0; s = (s + 1) & mask()) {
      if (slot_[s] == id) return;
    }
    slot_[s] = id;
    used_.push_back(s);
  }

 private:
  std::size_t mask() const { return slot_.size() - 1; }
  std::size_t home(int id) const {
    return static_cast<std::uint32_t>(static_cast<std::uint32_t>(id) * 0x9E3779B1u) >> (32 - bits_);
  }
  int bits_ = 1;
  std::vector<int> slot_;
  std::vector<std::size_t> used_;
};

// Checks a set against n points: rows within [0, n), partners in range and
// never the row's own point.
inline void check_pair_set(const PairSet& set, std::size_t n, const char* name) {
  if (set.first + set.rows > n ||
      (set.columns == nullptr ? set.partner.size() != set.rows * set.k
                              : set.column_stride < set.rows)) {
    throw std::invalid_argument(std::string("the ") + name + " pairs do not fit the points");
  }
  for (std::size_t r = 0; r < set.rows; ++r) {
    for (std::size_t c = 0; c < set.k; ++c) {
      const int j = set.at(r, c);
      if (j < 0 || static_cast<std::size_t>(j) >= n || static_cast<std::size_t>(j) == set.first + r) {
        throw std::invalid_argument(std::string("the ") + name +
                                    " pairs hold an invalid partner");
      }
    }
  }
}

// The objective of PaCMAP and LocalMAP for the driver of optimizer.h: n
// points in d dimensions, of which [0, fixed) do not move (their pairs are
// then only those of the moving points' rows). The executor groups the
// pairs into tiles. Sets that are views (PairSet::columns) are read while
// the objective lives.
class PairObjective {
 public:
  template <typename Executor>
  PairObjective(std::size_t n, std::size_t d, std::size_t fixed, std::vector<PairSet> sets,
                const PairSchedule& schedule, std::uint64_t seed, Executor& executor)
      : n_(n), d_(d), fixed_(fixed), sets_(std::move(sets)), schedule_(schedule), seed_(seed) {
    if (d_ == 0 || n_ == 0) throw std::invalid_argument("the embedding needs points and dimensions");
    if (sets_.size() != kPairKinds) throw std::invalid_argument("PaCMAP needs three pair sets");
    static const char* names[kPairKinds] = {"near", "mid-near", "further"};
    if (schedule_.local) sets_[kFurther].own();  // LocalMAP redraws them
    std::size_t pairs = 0;
    for (const PairSet& set : sets_) pairs += set.rows * set.k;
    tiles_.set_blocks(n_, d_, pairs);
    for (int t = 0; t < kPairKinds; ++t) {
      check_pair_set(sets_[t], n_, names[t]);
      if (sets_[t].first < fixed_ && sets_[t].rows > 0) {
        throw std::invalid_argument("fixed points cannot have pairs of their own");
      }
      tiles_.build(t, sets_[t], executor);
    }
    rowmajor_.assign(n_ * d_, 0.0);
    rowgrad_.assign(n_ * d_, 0.0);
    pcost_.assign(n_, 0.0);
  }

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  std::size_t fixed() const { return fixed_; }
  const PairSet& pairs(int kind) const {
    if (released_) throw std::logic_error("the pair lists were released after the tiles were built");
    return sets_[kind];
  }
  // Frees the pair lists the objective owns, which the tiles hold again,
  // unless LocalMAP will redraw from them; pairs() is then unavailable. The
  // further pairs are the largest set (at 1e7 points, 110 a point: 4.4 GB).
  void release_pair_lists() {
    if (schedule_.local) return;
    for (PairSet& set : sets_) std::vector<int>().swap(set.partner);
    released_ = true;
  }
  const PairWeights& weights() const { return weights_; }
  void set_weights(const PairWeights& w) { weights_ = w; }
  // (the driver's hook of early exaggeration, which PaCMAP does not have)
  void set_exaggeration(double) {}

  // The phase hook: the weights of step iter (from 1) and LocalMAP's redraws.
  template <typename Executor>
  void begin_step(int iter, const double* Y, Executor& executor) {
    const int itr = iter - 1;
    weights_ = schedule_.weights(itr);
    if (schedule_.redraw(itr)) redraw_further(itr, Y, executor);
  }

  // Cost and gradient at Y (n x d, column-major); the gradient of fixed
  // points is 0. The cost (NaN unless want_cost) counts each pair once, for
  // the point of its row (pcost, when not null).
  template <typename Executor>
  double evaluate(const double* Y, bool want_cost, double* grad, double* pcost,
                  Executor& executor) {
    const std::size_t n = n_, d = d_;
    double* yr = rowmajor_.data();
    double* gr = rowgrad_.data();
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            for (std::size_t c = 0; c < d; ++c) yr[i * d + c] = Y[c * n + i];
          }
          std::fill(gr + b * d, gr + e * d, 0.0);
          std::fill(pcost_.begin() + b, pcost_.begin() + e, 0.0);
        },
        4096);
    for (const TileRound& round : tiles_.rounds()) {
      executor.parallel_for(
          0, round.size(),
          [&](std::size_t b, std::size_t e) {
            for (std::size_t x = b; x < e; ++x) {
              if (d == 2) {
                want_cost ? tile_terms<2, true>(round[x].first, round[x].second)
                          : tile_terms<2, false>(round[x].first, round[x].second);
              } else {
                want_cost ? tile_terms<0, true>(round[x].first, round[x].second)
                          : tile_terms<0, false>(round[x].first, round[x].second);
              }
            }
          },
          1);
    }
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d; ++c) {
            for (std::size_t i = b; i < e; ++i) grad[c * n + i] = i < fixed_ ? 0.0 : gr[i * d + c];
          }
        },
        4096);
    checkpoint(executor);
    if (!want_cost) return NAN;
    double cost = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      cost += pcost_[i];
      if (pcost != nullptr) pcost[i] = pcost_[i];
    }
    return cost;
  }

 private:
  // The pairs of tile {a, b} of every kind with a weight: those whose row's
  // point is in a, then (a != b) those whose row's point is in b. The loops
  // are compiled per kind, per cost or not, and for 2-D layouts.
  template <int D, bool Cost>
  void tile_terms(std::size_t a, std::size_t b) {
    const double local = weights_.local_scale;
    for (int t = 0; t < kPairKinds; ++t) {
      const double w = weights_.w[t];
      if (w == 0.0) continue;
      for (int side = 0; side < (a == b ? 1 : 2); ++side) {
        const std::size_t row_block = side == 0 ? a : b, partner_block = side == 0 ? b : a;
        std::size_t count;
        const std::uint32_t* list = tiles_.pairs(t, row_block, partner_block, count);
        if (count == 0) continue;
        const Block rows = block(row_block), partners = block(partner_block);
        if (t == kNear && local > 0.0) {
          pair_terms<D, Cost>(list, count, rows, partners, w, [local](double s, double& v) {
            return PairLosses::local_near<Cost>(s, local, v);
          });
        } else if (t == kNear) {
          pair_terms<D, Cost>(list, count, rows, partners, w,
                              [](double s, double& v) { return PairLosses::near<Cost>(s, v); });
        } else if (t == kMidNear) {
          pair_terms<D, Cost>(list, count, rows, partners, w, [](double s, double& v) {
            return PairLosses::mid_near<Cost>(s, v);
          });
        } else {
          pair_terms<D, Cost>(list, count, rows, partners, w, [](double s, double& v) {
            return PairLosses::further<Cost>(s, v);
          });
        }
      }
    }
  }

  // A block's coordinates, gradients and costs (row-major, from its first
  // point).
  struct Block {
    const double* y;
    double* g;
    double* cost;
  };
  Block block(std::size_t b) {
    const std::size_t first = tiles_.block_start(b);
    return {rowmajor_.data() + first * d_, rowgrad_.data() + first * d_, pcost_.data() + first};
  }

  // Adds each listed pair's gradient to both of its points and (Cost) its
  // weighted cost to its row's point. D = 0: any dimension. The 2-D loop is
  // written so that the compiler reads, subtracts and updates a point's two
  // coordinates as one vector (a quarter fewer instructions a pair).
  template <int D, bool Cost, typename Loss>
  void pair_terms(const std::uint32_t* list, std::size_t count, const Block& rows,
                  const Block& partners, double w, Loss loss) {
    const std::size_t d = D > 0 ? static_cast<std::size_t>(D) : d_;
    const double w2 = 2.0 * w;
    for (std::size_t e = 0; e < count; ++e) {
      if (e + kPrefetch < count) {
        // Large layouts have blocks whose coordinates and gradients outgrow
        // a core's L2 cache, and each pair's partner is a random point of
        // its block: its reads would wait on memory one pair at a time, so
        // the partner kPrefetch pairs ahead is fetched now (for reading and
        // for writing its gradient back).
        const std::size_t ahead = list[e + kPrefetch] >> 16;
        __builtin_prefetch(partners.y + ahead * d, 0, 3);
        __builtin_prefetch(partners.g + ahead * d, 1, 3);
      }
      const std::size_t i = list[e] & 0xffffu, j = list[e] >> 16;
      const double* yi = rows.y + i * d;
      const double* yj = partners.y + j * d;
      double* gi = rows.g + i * d;
      double* gj = partners.g + j * d;
      if (D == 2) {
        const double dx = yi[0] - yj[0], dy = yi[1] - yj[1];
        double value;
        const double f = w2 * loss(dx * dx + dy * dy, value);
        const double fx = f * dx, fy = f * dy;
        const double gix = gi[0] + fx, giy = gi[1] + fy;
        gi[0] = gix;
        gi[1] = giy;
        const double gjx = gj[0] - fx, gjy = gj[1] - fy;
        gj[0] = gjx;
        gj[1] = gjy;
        if (Cost) rows.cost[i] += w * value;
      } else {
        double s = 0.0;
        for (std::size_t c = 0; c < d; ++c) s += (yi[c] - yj[c]) * (yi[c] - yj[c]);
        double value;
        const double f = w2 * loss(s, value);
        for (std::size_t c = 0; c < d; ++c) {
          const double fc = f * (yi[c] - yj[c]);
          gi[c] += fc;
          gj[c] -= fc;
        }
        if (Cost) rows.cost[i] += w * value;
      }
    }
  }

  // LocalMAP: each further pair of a row is redrawn among the points within
  // low_dist_thres of the row's point in the embedding (neither the point,
  // its near partners nor a partner already drawn for the row); after 100
  // draws a slot keeps its old partner. Most draws fail the distance, whose
  // test is a read of a random point's coordinates: so the row's draws are
  // made kAhead at a time with their distance tests (reads that overlap),
  // then taken in the order drawn, the pick the first draw that passes
  // every test, as if drawn one by one; the partners to avoid are looked
  // up in an IdSet rather than in the rows.
  template <typename Executor>
  void redraw_further(int itr, const double* Y, Executor& executor) {
    PairSet& far = sets_[kFurther];
    const PairSet& near = sets_[kNear];
    const std::size_t n = n_, d = d_;
    const double limit = schedule_.low_dist_thres * schedule_.low_dist_thres;
    double* yr = rowmajor_.data();
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            for (std::size_t c = 0; c < d; ++c) yr[i * d + c] = Y[c * n + i];
          }
        },
        4096);
    executor.parallel_for(
        0, far.rows,
        [&](std::size_t b, std::size_t e) {
          // the row's near partners and its picks so far
          IdSet taken(near.k + far.k);
          for (std::size_t r = b; r < e; ++r) {
            const std::size_t i = far.first + r;
            SplitMix64 rng(hash64(seed_, 0x4c4d4150ULL, static_cast<std::uint64_t>(itr), i));
            taken.clear();
            if (i >= near.first && i < near.first + near.rows) {
              for (std::size_t c = 0; c < near.k; ++c) taken.insert(near.at(i - near.first, c));
            }
            const double* yi = yr + i * d;
            std::size_t ahead[kAhead];
            bool within[kAhead];
            std::size_t next = kAhead;
            for (std::size_t c = 0; c < far.k; ++c) {
              int pick = -1;
              for (int tries = 0; tries < 100 && pick < 0; ++tries) {
                if (next == kAhead) {
                  for (std::size_t q = 0; q < kAhead; ++q) {
                    const std::size_t j = rng.below(n);
                    const double* yj = yr + j * d;
                    double s = 0.0;
                    for (std::size_t a = 0; a < d; ++a) {
                      const double diff = yi[a] - yj[a];
                      s += diff * diff;
                    }
                    ahead[q] = j;
                    within[q] = s <= limit;
                  }
                  next = 0;
                }
                const std::size_t j = ahead[next];
                const bool near_enough = within[next++];
                if (j == i || !near_enough || taken.contains(static_cast<int>(j))) continue;
                pick = static_cast<int>(j);
              }
              if (pick >= 0) {
                taken.insert(pick);
                far.partner[r * far.k + c] = pick;
              }
            }
          }
        },
        256);
    tiles_.build(kFurther, far, executor);
  }

  static constexpr std::size_t kAhead = 8;
  // how many pairs ahead pair_terms() fetches a partner
  static constexpr std::size_t kPrefetch = 16;

  std::size_t n_, d_, fixed_;
  std::vector<PairSet> sets_;
  PairTiles tiles_;
  PairSchedule schedule_;
  std::uint64_t seed_;
  PairWeights weights_;
  bool released_ = false;
  // the coordinates and the gradient by point (row-major), the cost by
  // point
  std::vector<double> rowmajor_, rowgrad_, pcost_;
};

// ---- sampling of the pairs ----

// Whether j is among the first m entries of ids.
inline bool among(const int* ids, std::size_t m, std::size_t j) {
  return std::find(ids, ids + m, static_cast<int>(j)) != ids + m;
}

// Mid-near pairs of rows [0, data.n()): for each row, k partners, each the
// second nearest (in the data's metric) of 6 rows drawn at random from
// those that are neither the row nor one of its partners so far.
template <typename Executor>
PairSet sample_mid_near_pairs(const RowData& data, std::size_t k, std::uint64_t seed,
                              Executor& executor) {
  const std::size_t n = data.n();
  PairSet set;
  set.rows = n;
  set.k = k;
  set.partner.assign(n * k, 0);
  if (k == 0) return set;
  if (n < k + 3) throw std::invalid_argument("too few rows for the mid-near pairs");
  batched_for(
      executor, n, 16384,
      [&](std::size_t b, std::size_t e) {
        std::vector<int> cand;
        for (std::size_t i = b; i < e; ++i) {
          SplitMix64 rng(hash64(seed, 0x4d4e5052ULL, i));
          int* row = set.partner.data() + i * k;
          for (std::size_t c = 0; c < k; ++c) {
            // 6 candidates, fewer when the rows left are fewer (then at least 2)
            const std::size_t m = std::min<std::size_t>(6, n - 1 - c);
            cand.clear();
            while (cand.size() < m) {
              const std::size_t j = rng.below(n);
              if (j == i || among(row, c, j) || among(cand.data(), cand.size(), j)) continue;
              cand.push_back(static_cast<int>(j));
            }
            double best = HUGE_VAL, second = HUGE_VAL;
            int best_j = cand[0], second_j = cand[1];
            for (int j : cand) {
              const double dist = data.exact_distance(i, static_cast<std::size_t>(j));
              if (dist < best) {
                second = best;
                second_j = best_j;
                best = dist;
                best_j = j;
              } else if (dist < second) {
                second = dist;
                second_j = j;
              }
            }
            row[c] = second_j;
          }
        }
      },
      [](std::size_t) {}, 64);
  return set;
}

// Further pairs of the rows of `near`: k partners each, drawn uniformly
// from [0, pool) without the row's point, its near partners or repeats.
template <typename Executor>
PairSet sample_further_pairs(const PairSet& near, std::size_t pool, std::size_t k,
                             std::uint64_t seed, Executor& executor) {
  PairSet set;
  set.first = near.first;
  set.rows = near.rows;
  set.k = k;
  set.partner.assign(near.rows * k, 0);
  if (k == 0) return set;
  const std::size_t self_in_pool = near.first < pool ? 1 : 0;
  if (pool < k + near.k + self_in_pool) {
    throw std::invalid_argument("too few points for the further pairs");
  }
  batched_for(
      executor, near.rows, 65536,
      [&](std::size_t b, std::size_t e) {
        std::vector<int> near_row(near.k);
        const int* nb = near_row.data();
        for (std::size_t r = b; r < e; ++r) {
          const std::size_t i = near.first + r;
          SplitMix64 rng(hash64(seed, 0x46505052ULL, i));
          near.row(r, near_row.data());
          int* row = set.partner.data() + r * k;
          for (std::size_t c = 0; c < k;) {
            const std::size_t j = rng.below(pool);
            if (j == i || among(nb, near.k, j) || among(row, c, j)) continue;
            row[c++] = static_cast<int>(j);
          }
        }
      },
      [](std::size_t) {}, 256);
  return set;
}

}  // namespace lsnn

#endif  // LSNN_PACMAP_H
