// The embedding costs and their exact gradients over all pairs of points.
//
// For output coordinates Y (n x d) and symmetric input affinities P (sparse),
// with d_ij the output distance and sums over ordered pairs i != j:
//
//   tsne          KL(P || Q), q_ij = w_ij / Z, w = 1 / (1 + d^2), Z = sum w;
//                 dC/dy_i = 4 sum_j (p_ij - S w_ij / Z) w_ij (y_i - y_j),
//                 S = sum P (1 for a normalised P).
//   largevis      -sum p log w - gamma sum log(1 - w), w = 1 / (1 + alpha d^2);
//                 dC/dy_i = 4 sum_j (alpha p_ij w_ij - gamma w_ij / (d^2 + eps))
//                 (y_i - y_j).
//   largevis_exp  the same cost with w = 1 / (1 + exp(d^2));
//                 dC/dy_i = 4 sum_j ((1 - w) p_ij - gamma w_ij) (y_i - y_j).
//   umap          sum v log(v / w) + (1 - v) log((1 - v) / (1 - w)),
//                 w = 1 / (1 + a d^(2b));
//                 dC/dy_i = 4 sum_j (a b d^(2(b-1)) w v - b (1 - v) w / (d^2 + eps))
//                 (y_i - y_j).
//
// With eps = 0 each gradient is the exact derivative of its cost. With
// eps > 0 the reported cost replaces 1 - w = u / (1 + u) (u = alpha d^2 or
// a d^(2b)) by (u + eps) / (1 + u), so that it stays finite when two points
// coincide.
//
// Work: every term that does not involve P is summed over all pairs, once
// per unordered pair (tiles of the pair matrix, both points updated); the
// terms that do are summed over the stored entries of P. Memory is
// O(nnz(P) + n d): the n x n matrices are never formed.
//
// Each cost's terms come from its model (cost_models.h). With
// GradientKind::approx (1 or 2 dimensions) the all-pairs part is instead
// summed in O(n) by the far field of farfield/far_field.h; the sparse
// part and the combination below are the same.
//
// CostEvaluator is the optimizers' objective: evaluate() gives the cost and
// the gradient at Y, set_exaggeration() is the phase hook (early
// exaggeration multiplies P in the gradient and, for the approximation,
// takes a coarser grid).
//
// Determinism: the tiles are scheduled in rounds (a round-robin tournament
// of the row blocks, tile_schedule.h: the tiles of one round touch disjoint
// points) and the block size depends on n only, so every sum is taken in
// the same order whatever the number of threads.
#ifndef LSNN_COSTS_H
#define LSNN_COSTS_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "affinity_check.h"
#include "cost_kernels.h"
#include "cost_models.h"
#include "../farfield/far_field.h"
#include "../base/parallel.h"
#include "../base/sparse.h"
#include "../base/tile_schedule.h"

namespace lsnn {

// How the all-pairs part is summed: exactly over all pairs, or (1- and
// 2-dimensional embeddings) by the O(n) grid approximations of
// farfield/far_field.h; other dimensions always take the exact sum.
enum class GradientKind { exact = 0, approx = 1 };

struct CostSettings {
  CostParams params;
  GradientKind gradient = GradientKind::exact;
  // the approximation's grid: each method's default (farfield/settings.h)
  // unless grid_set
  bool grid_set = false;
  GridSettings grid;
  // the size of P's values beyond which the approximation reads them in
  // place (CostEvaluator)
  double in_place_bytes = 256.0 * 1024 * 1024;
  // an optimisation of a layout of more points takes the grid of the early
  // exaggeration throughout (large_layout_points in farfield/settings.h)
  double accurate_grid_points = static_cast<double>(large_layout_points);
};

// The grid of an approximate evaluation: the caller's grid when one is set
// (the settings' own widening kept), else the cost's default grid, or with
// `coarse` the grid of the early exaggeration.
inline GridSettings evaluation_grid(const CostSettings& s, bool coarse) {
  const GridSettings accurate = default_grid(s.params.method);
  if (s.grid_set) {
    GridSettings g = s.grid;
    g.widen = accurate.widen;
    return g;
  }
  return coarse ? exaggeration_grid(s.params.method) : accurate;
}

// check_affinities()'s first pass made inside CostEvaluator::evaluate()'s
// pass over P read in place, so that P crosses memory once: each group of
// rows is checked (CostKernels::affinity_rows) and then summed while it is
// in the cache.
// After a row that fails, or holds a diagonal entry or a zero (which the
// in-place sum does not leave out), nothing more of its thread's rows is
// summed and `clean` is false: the caller then checks P on its own and, if
// it is valid, evaluates again from a copy.
struct PassCheck {
  std::size_t nnz = 0;
  RowSums sums;
  bool clean = true;
  std::mutex lock;
  void add(const RowSums& s, bool ok) {
    std::lock_guard<std::mutex> guard(lock);
    sums.add(s);
    clean = clean && ok && s.diagonal == 0 && s.zeros == 0;
  }
};

// The sparse part of rows [b, e) of P, read in place (prob), each group of
// rows checked first (PassCheck) and summed only while every row so far
// passed.
inline void check_and_sum_rows(const CostKernels& kernels, const SparseRows& P, const PairProblem& prob,
                               std::size_t b, std::size_t e, bool want_cost, const SparseSums& ssums,
                               PassCheck& check) {
  RowSums sums;
  bool ok = true;
  for (std::size_t r0 = b; r0 < e && ok;) {
    // rows of about 8,192 entries (96 KB) at a time (ptr is not yet
    // checked: the count only chooses where the group ends)
    std::size_t r1 = r0;
    long long entries = 0;
    while (r1 < e && entries < 8192) {
      entries += std::max(0LL, static_cast<long long>(P.ptr[r1 + 1]) - P.ptr[r1]);
      ++r1;
    }
    ok = kernels.affinity_rows(P.ptr, P.col, P.val, P.n, check.nnz, r0, r1, sums) &&
         sums.diagonal == 0 && sums.zeros == 0;
    if (ok) kernels.sparse_rows(prob, r0, r1, want_cost, ssums);
    r0 = r1;
  }
  check.add(sums, ok);
}

// A tile of the exact all-pairs sum: points [i0, i1) against [j0, j1)
// (diagonal: a block against itself, each pair once).
struct PairTile {
  std::size_t i0, i1, j0, j1;
  bool diagonal;
};

// The tiles of the exact sum over n points (stored `stride` apart), in the
// rounds of tile_schedule.h (the tiles of one round touch disjoint points):
// blocks of about 256 points, the number of blocks a multiple of 4 so that
// each round has an even number of tiles. A function of n only, so that
// every sum is taken in the same order whatever the number of threads.
inline std::vector<std::vector<PairTile>> pair_tile_rounds(std::size_t n, std::size_t stride) {
  const std::size_t target = 4 * std::max<std::size_t>(1, (n + 512) / 1024);
  std::size_t block = ((n + target - 1) / target + 3) & ~static_cast<std::size_t>(3);
  block = std::max<std::size_t>(block, 4);
  const std::size_t nb = (n + block - 1) / block;
  std::vector<std::vector<PairTile>> rounds;
  for (const TileRound& pairs : round_robin_rounds(nb)) {
    std::vector<PairTile> round;
    for (const auto& pair : pairs) {
      const std::size_t r0 = pair.first * block, s0 = pair.second * block;
      round.push_back({r0, std::min(n, r0 + block), s0, std::min(stride, s0 + block),
                       pair.first == pair.second});
    }
    rounds.push_back(round);
  }
  return rounds;
}

// P as CostEvaluator's kernels read it (PairProblem's ptr, col, val,
// row_start and val_single), its rows and columns in the stored order of
// the points: order()[k] is the point at position k.
//
// The exact sum keeps the points' own order. The approximation reads each
// point's P-neighbours' coordinates, and at large n those reads miss the
// cache unless neighbours are stored near each other: so the points go in
// breadth-first order over P (from the lowest unvisited point, the
// neighbours in stored order), which stores each cluster together (its
// reads then hit the cache: bench/CHANGELOG.md, "Other t-SNE settings").
//
// `clean`: P stores no diagonal entry and no zero, so that the exact sum
// reads it where it is (cost_gradient() evaluates once; a copy of the
// all-pairs affinities of 5,000 points cost more than the evaluation).
// When P's values take more than `in_place_bytes` and P stores no diagonal
// entry and no zero, the approximation reads P's rows where they are, with
// the column numbers in its order: P is the largest thing a layout holds
// (at 1e6 points about 150 entries a point, 1.2 GB of values and 0.6 GB of
// columns). Those column numbers are its own copy, or, when the caller
// hands over `writable_col` (P.col itself, which nothing else reads
// meanwhile), P's own, renumbered in place and given back as they were by
// the destructor. When the caller also hands over `consumable_val` (P.val
// itself: P is the evaluator's to rewrite, and nobody reads it afterwards),
// P's two arrays are rewritten into its order instead, the values in
// single precision (consume_affinities()), so that the attraction reads P
// as one stream without a copy (as fast as the copy, without its memory,
// and faster than P's rows read where they are: bench/CHANGELOG.md, "How a
// large P is read").
// Otherwise it keeps its own copy of P in its order, which the attraction
// reads as one stream: values read in place leave the attraction waiting
// on memory (bench/CHANGELOG.md, "Reading P in place").
//
// P's own arrays are rewritten only by rewrite_own_arrays(), which the
// owner calls last, when nothing can throw any more.
class StoredAffinities {
 public:
  StoredAffinities(const SparseRows& P, bool approximate, bool clean, double in_place_bytes,
                   int* writable_col, double* consumable_val)
      : P_(P), n_(P.n), approximate_(approximate) {
    number_points();
    if (consumable_val != nullptr && (writable_col == nullptr || consumable_val != P_.val)) {
      throw std::invalid_argument("the values to rewrite must be P's own, with its columns");
    }
    if (clean && !approximate_) {
      p_ptr_ = P_.ptr;
      p_col_ = P_.col;
      p_val_ = P_.val;
    } else if (approximate_ && static_cast<double>(P_.ptr[n_]) * sizeof(double) > in_place_bytes &&
               stores_no_zeros()) {
      if (writable_col != nullptr && writable_col != P_.col) {
        throw std::invalid_argument("the writable columns must be P's own");
      }
      const bool consume = consumable_val != nullptr && fits_single_precision();
      if (consume) {
        consume_col_ = writable_col;
        consume_val_ = consumable_val;
      } else if (writable_col != nullptr) {
        renumber_col_ = writable_col;
      }
      index_rows();
      if (writable_col == nullptr) {
        col_.resize(static_cast<std::size_t>(P_.ptr[n_]));
        renumber_columns(col_.data());
      }
      p_ptr_ = ptr_.data();
      p_col_ = writable_col != nullptr ? writable_col : col_.data();
      p_val_ = P_.val;
      p_row_start_ = row_start_.data();
    } else {
      pad_affinities();
      p_ptr_ = ptr_.data();
      p_col_ = col_.data();
      p_val_ = val_.data();
    }
  }

  ~StoredAffinities() {
    if (renumbered_in_place_ == nullptr) return;
    int* col = renumbered_in_place_;
    for (std::size_t i = 0; i < n_; ++i) {
      for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) {
        col[e] = static_cast<int>(order_[static_cast<std::size_t>(col[e])]);
      }
    }
  }

  // (it may point into its own copy of P)
  StoredAffinities(const StoredAffinities&) = delete;
  StoredAffinities& operator=(const StoredAffinities&) = delete;

  // P's own arrays rewritten into the stored order, when the constructor
  // chose to (consumed, or the columns renumbered in place).
  void rewrite_own_arrays() {
    if (consume_col_ != nullptr) {
      consume_affinities(consume_col_, consume_val_);
    } else if (renumber_col_ != nullptr) {
      renumber_columns(renumber_col_);
      renumbered_in_place_ = renumber_col_;
    }
  }

  const std::size_t* order() const { return order_.data(); }
  // Whether P's own arrays were rewritten (P no longer as its owner wrote it).
  bool rewritten() const { return renumbered_in_place_ != nullptr || p_val_single_ != nullptr; }

  // The affinities' fields of a PairProblem.
  void describe(PairProblem& prob) const {
    prob.ptr = p_ptr_;
    prob.col = p_col_;
    prob.val = p_val_;
    prob.row_start = p_row_start_;
    prob.val_single = p_val_single_;
  }

 private:
  // The order above (breadth-first over P for the approximation).
  void number_points() {
    order_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) order_[i] = i;
    if (!approximate_) return;
    std::vector<unsigned char> seen(n_, 0);
    std::size_t tail = 0;
    for (std::size_t s = 0; s < n_; ++s) {
      if (seen[s]) continue;
      seen[s] = 1;
      std::size_t head = tail;
      order_[tail++] = s;
      for (; head < tail; ++head) {
        const std::size_t i = order_[head];
        for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) {
          const std::size_t j = static_cast<std::size_t>(P_.col[e]);
          if (!seen[j]) {
            seen[j] = 1;
            order_[tail++] = j;
          }
        }
      }
    }
  }
  // The stored position of every point (the inverse of order_), by which
  // the column numbers are renumbered.
  std::vector<int> positions() const {
    std::vector<int> rank(n_);
    for (std::size_t k = 0; k < n_; ++k) rank[order_[k]] = static_cast<int>(k);
    return rank;
  }

  // The kernels' copy of P: no diagonal or zero entries, each row padded to
  // a multiple of 4 with zeros (pointing at the row itself); rows and
  // columns in the stored order (position k's row holds the positions of
  // its neighbours).
  void pad_affinities() {
    const std::vector<int> rank = positions();
    ptr_.assign(n_ + 1, 0);
    std::size_t total = 0;
    for (std::size_t k = 0; k < n_; ++k) {
      const std::size_t i = order_[k];
      std::size_t m = 0;
      for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) {
        m += static_cast<std::size_t>(P_.col[e]) != i && P_.val[e] > 0.0;
      }
      total += (m + 3) & ~static_cast<std::size_t>(3);
      if (total > 2147483647u) throw std::length_error("too many non-zero affinities");
      ptr_[k + 1] = static_cast<int>(total);
    }
    col_.assign(total, 0);
    val_.assign(total, 0.0);
    for (std::size_t k = 0; k < n_; ++k) {
      const std::size_t i = order_[k];
      std::size_t o = static_cast<std::size_t>(ptr_[k]);
      for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) {
        if (static_cast<std::size_t>(P_.col[e]) != i && P_.val[e] > 0.0) {
          col_[o] = rank[static_cast<std::size_t>(P_.col[e])];
          val_[o] = P_.val[e];
          ++o;
        }
      }
      for (; o < static_cast<std::size_t>(ptr_[k + 1]); ++o) col_[o] = static_cast<int>(k);
    }
  }

  // Whether P stores no diagonal entry and no zero (every entry is kept).
  bool stores_no_zeros() const {
    for (std::size_t i = 0; i < n_; ++i) {
      for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) {
        if (static_cast<std::size_t>(P_.col[e]) == i || !(P_.val[e] > 0.0)) return false;
      }
    }
    return true;
  }

  // Where position k's row starts in P (row_start_) and in the kernels'
  // numbering (ptr_: the rows' lengths as P stores them, one after another).
  void index_rows() {
    ptr_.assign(n_ + 1, 0);
    row_start_.assign(n_, 0);
    for (std::size_t k = 0; k < n_; ++k) {
      const std::size_t i = order_[k];
      row_start_[k] = P_.ptr[i];
      ptr_[k + 1] = ptr_[k] + (P_.ptr[i + 1] - P_.ptr[i]);
    }
  }

  // P's column numbers in the stored order, into `to` (P's own array or one
  // of its length), each where P stores it, without padding (the kernels
  // take an unpadded row's end as padding would be): position k's row holds
  // the positions of its neighbours, in the order P stores them, at
  // row_start_[k] of `to` and of P's values.
  // (after index_rows(); it allocates nothing but `rank`)
  void renumber_columns(int* to) {
    const std::vector<int> rank = positions();
    for (std::size_t i = 0; i < n_; ++i) {
      for (int e = P_.ptr[i]; e < P_.ptr[i + 1]; ++e) to[e] = rank[static_cast<std::size_t>(P_.col[e])];
    }
  }

  // Whether every value of P keeps its meaning in single precision (all of
  // them are finite and positive here: none is above the largest float).
  bool fits_single_precision() const {
    const std::size_t nnz = static_cast<std::size_t>(P_.ptr[n_]);
    for (std::size_t e = 0; e < nnz; ++e) {
      if (!(P_.val[e] <= static_cast<double>(std::numeric_limits<float>::max()))) return false;
    }
    return true;
  }

  // P's own arrays rewritten in the stored order, without a copy: the
  // values, rounded to single precision, go where the columns were, and the
  // columns, renumbered, into the second half of the values' array. Three
  // passes: the values packed into the first half of their array (each
  // written over values already read), then the rows of columns and of
  // values moved into place. P is left so (its owner reads it no more).
  // (after index_rows(); allocates nothing but `rank`, before any write)
  void consume_affinities(int* col, double* val) {
    const std::size_t nnz = static_cast<std::size_t>(P_.ptr[n_]);
    const std::vector<int> rank = positions();
    // (bytes, so that the arrays may change type: every access through memcpy)
    unsigned char* const vbytes = reinterpret_cast<unsigned char*>(val);
    unsigned char* const cbytes = reinterpret_cast<unsigned char*>(col);
    for (std::size_t e = 0; e < nnz; ++e) {
      double x;
      std::memcpy(&x, vbytes + sizeof(double) * e, sizeof(double));
      const float f = static_cast<float>(x);
      std::memcpy(vbytes + sizeof(float) * e, &f, sizeof(float));
    }
    unsigned char* const new_col = vbytes + sizeof(float) * nnz;
    for (std::size_t k = 0; k < n_; ++k) {
      const std::size_t from = static_cast<std::size_t>(row_start_[k]);
      const std::size_t to = static_cast<std::size_t>(ptr_[k]);
      const std::size_t len = static_cast<std::size_t>(ptr_[k + 1]) - to;
      for (std::size_t t = 0; t < len; ++t) {
        int c;
        std::memcpy(&c, cbytes + sizeof(int) * (from + t), sizeof(int));
        const int r = rank[static_cast<std::size_t>(c)];
        std::memcpy(new_col + sizeof(int) * (to + t), &r, sizeof(int));
      }
    }
    for (std::size_t k = 0; k < n_; ++k) {
      const std::size_t from = static_cast<std::size_t>(row_start_[k]);
      const std::size_t to = static_cast<std::size_t>(ptr_[k]);
      const std::size_t len = static_cast<std::size_t>(ptr_[k + 1]) - to;
      std::memcpy(cbytes + sizeof(float) * to, vbytes + sizeof(float) * from, sizeof(float) * len);
    }
    p_col_ = reinterpret_cast<const int*>(new_col);
    p_val_ = nullptr;
    p_val_single_ = reinterpret_cast<const float*>(cbytes);
    p_row_start_ = nullptr;
    std::vector<int>().swap(row_start_);
  }

  SparseRows P_;  // symmetric: its rows are its columns
  std::size_t n_;
  bool approximate_;
  std::vector<std::size_t> order_;
  std::vector<int> ptr_, col_, row_start_;
  std::vector<double> val_;
  // the affinities the kernels read: the copy above, or P itself
  const int* p_ptr_ = nullptr;
  const int* p_col_ = nullptr;
  const double* p_val_ = nullptr;
  const int* p_row_start_ = nullptr;
  const float* p_val_single_ = nullptr;  // P's values when consumed
  // P's own arrays to rewrite in rewrite_own_arrays(): consumed, or the
  // columns renumbered in place
  int* consume_col_ = nullptr;
  double* consume_val_ = nullptr;
  int* renumber_col_ = nullptr;
  // P's own columns while they are renumbered (the destructor restores them)
  int* renumbered_in_place_ = nullptr;
};

// The optimizers' objective: the cost and gradient of the points under P.
class CostEvaluator {
 public:
  // P, `clean`, `writable_col` and `consumable_val`: how P is read and
  // whether its arrays may be rewritten (StoredAffinities).
  CostEvaluator(const CostKernels& kernels, const CostSettings& settings,
                const SparseRows& P, std::size_t d, bool clean = false,
                int* writable_col = nullptr, double* consumable_val = nullptr)
      : kernels_(kernels), settings_(settings), P_(P), n_(P.n), d_(nonzero_dimension(d)),
        stored_(P, approximate(), clean, settings.in_place_bytes, writable_col, consumable_val) {
    stride_ = (n_ + 3) & ~static_cast<std::size_t>(3);
    coords_.assign(d_ * stride_, 0.0);
    repulsion_.assign(d_ * stride_, 0.0);
    normaliser_.assign(stride_, 0.0);
    pair_cost_.assign(stride_, 0.0);
    attraction_.assign(d_ * n_, 0.0);
    sparse_cost_.assign(n_, 0.0);
    row_sum_.assign(n_, 0.0);
    // the tiles are only needed by the exact sum
    if (!approximate()) rounds_ = pair_tile_rounds(n_, stride_);
    rep_ = FarField(settings_.params, evaluation_grid(settings_, false), &kernels_);
    stored_.rewrite_own_arrays();
  }

  CostEvaluator(const CostEvaluator&) = delete;
  CostEvaluator& operator=(const CostEvaluator&) = delete;

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  // every point moves (placement.h's objective has fixed ones)
  std::size_t fixed() const { return 0; }
  // Whether evaluate() takes the approximate path.
  bool approximate() const { return settings_.gradient == GradientKind::approx && d_ <= 2; }

  // The phase hook of the optimizers: from now on every P value is
  // multiplied by `factor` in the gradient (the cost is always that of P
  // itself), and while factor is not 1 the approximation takes the coarser
  // grid of exaggeration_grid(); an optimisation of more than
  // accurate_grid_points points keeps that grid to the end. A grid set by
  // the caller is kept throughout; cost_gradient(), which calls no hook,
  // evaluates with the default grid.
  void set_exaggeration(double factor) {
    p_scale_ = factor;
    const bool large = static_cast<double>(n_) > settings_.accurate_grid_points;
    rep_.set_grid(evaluation_grid(settings_, factor != 1.0 || large));
  }

  // Cost and gradient at Y (n x d, column-major). `grad` (n x d) is always
  // written; the cost is returned (and `pcost`, length n, filled when not
  // null) only when `want_cost`, otherwise NaN. `check`: P, read in place
  // and not yet checked, is checked in the same pass (PassCheck); the result
  // counts only if check->clean and the hash sums agree.
  template <typename Executor>
  double evaluate(const double* Y, bool want_cost, double* grad, double* pcost,
                  Executor& executor, PassCheck* check = nullptr) {
    load_coordinates(Y);
    const PairProblem prob = problem();
    const bool tsne = normalised(settings_.params.method);
    if (approximate()) {
      // t-SNE: the repulsion and Z (its cost needs nothing else); others:
      // the repulsion and, for the cost, the pairs' cost
      rep_.evaluate(coords_.data(), n_, d_, stride_, repulsion_.data(), tsne || want_cost,
                    tsne ? normaliser_.data() : pair_cost_.data(), executor);
      checkpoint(executor);
    } else {
      exact_pairs(prob, want_cost, executor);
    }
    sparse_part(prob, want_cost, check, executor);

    double Z = 0.0, S = 0.0;
    if (tsne) {
      for (std::size_t i = 0; i < n_; ++i) Z += normaliser_[i];
      for (std::size_t i = 0; i < n_; ++i) S += row_sum_[i];
    }
    write_gradient(tsne, tsne ? S / Z : 1.0, grad, executor);
    if (!want_cost) return NAN;
    return total_cost(tsne, Z, pcost);
  }

 private:
  static std::size_t nonzero_dimension(std::size_t d) {
    if (d == 0) throw std::invalid_argument("the embedding needs at least one dimension");
    return d;
  }

  // Y (column-major) into coords_ in the stored order, and the all-pairs
  // sums cleared.
  void load_coordinates(const double* Y) {
    const std::size_t* order = stored_.order();
    for (std::size_t c = 0; c < d_; ++c) {
      const double* y = Y + c * n_;
      double* to = coords_.data() + c * stride_;
      for (std::size_t k = 0; k < n_; ++k) to[k] = y[order[k]];
    }
    std::fill(repulsion_.begin(), repulsion_.end(), 0.0);
    std::fill(normaliser_.begin(), normaliser_.end(), 0.0);
    std::fill(pair_cost_.begin(), pair_cost_.end(), 0.0);
  }

  // What the kernels read: the coordinates and P, stored.
  PairProblem problem() const {
    PairProblem prob;
    prob.params = settings_.params;
    prob.n = n_;
    prob.d = d_;
    prob.stride = stride_;
    prob.Y = coords_.data();
    stored_.describe(prob);
    prob.p_scale = p_scale_;
    return prob;
  }

  template <typename Executor>
  void exact_pairs(const PairProblem& prob, bool want_cost, Executor& executor) {
    const PairSums sums = {repulsion_.data(), normaliser_.data(), pair_cost_.data()};
    const CostKernels& k = kernels_;
    for (const auto& round : rounds_) {
      executor.parallel_for(
          0, round.size(),
          [&](std::size_t b, std::size_t e) {
            for (std::size_t t = b; t < e; ++t) {
              const PairTile& tile = round[t];
              k.pair_tile(prob, tile.i0, tile.i1, tile.j0, tile.j1, tile.diagonal,
                          want_cost, sums);
            }
          },
          1);
      checkpoint(executor);
    }
  }

  // The sums over P's stored entries (SparseSums), P checked in the same
  // pass when `check` is set.
  template <typename Executor>
  void sparse_part(const PairProblem& prob, bool want_cost, PassCheck* check, Executor& executor) {
    if (check != nullptr && stored_.rewritten()) {
      throw std::logic_error("P's arrays are rewritten: it cannot be checked in the pass");
    }
    const SparseSums ssums = {attraction_.data(), sparse_cost_.data(), row_sum_.data()};
    executor.parallel_for(
        0, n_,
        [&](std::size_t b, std::size_t e) {
          if (check == nullptr) {
            kernels_.sparse_rows(prob, b, e, want_cost, ssums);
          } else {
            check_and_sum_rows(kernels_, P_, prob, b, e, want_cost, ssums, *check);
          }
        },
        64);
  }

  // The gradient in the points' own order: 4 (attraction - rep repulsion)
  // for t-SNE (rep = S / Z), 4 (attraction + repulsion) for the others.
  template <typename Executor>
  void write_gradient(bool tsne, double rep, double* grad, Executor& executor) {
    const std::size_t n = n_, stride = stride_;
    const std::size_t* order = stored_.order();
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t c = 0; c < d_; ++c) {
            const double* F = repulsion_.data() + c * stride;
            const double* A = attraction_.data() + c * n;
            double* g = grad + c * n;
            if (tsne) {
              for (std::size_t k = b; k < e; ++k) g[order[k]] = 4.0 * (A[k] - rep * F[k]);
            } else {
              for (std::size_t k = b; k < e; ++k) g[order[k]] = 4.0 * (A[k] + F[k]);
            }
          }
        },
        256);
  }

  // The cost, summed over the points in the stored order, each point's
  // share into pcost (when not null) in the points' own order.
  double total_cost(bool tsne, double Z, double* pcost) const {
    const std::size_t* order = stored_.order();
    double cost = 0.0;
    const double logZ = tsne ? std::log(Z) : 0.0;
    for (std::size_t k = 0; k < n_; ++k) {
      const double pc = tsne ? sparse_cost_[k] + row_sum_[k] * logZ : pair_cost_[k] + sparse_cost_[k];
      if (pcost != nullptr) pcost[order[k]] = pc;
      cost += pc;
    }
    return cost;
  }

  const CostKernels& kernels_;
  CostSettings settings_;
  SparseRows P_;  // symmetric: its rows are its columns
  std::size_t n_, d_, stride_;
  StoredAffinities stored_;
  double p_scale_ = 1.0;
  // coordinates padded to `stride_` per dimension, and the per-point sums of
  // the all-pairs part (PairSums) and of the sparse part (SparseSums)
  std::vector<double> coords_, repulsion_, normaliser_, pair_cost_;
  std::vector<double> attraction_, sparse_cost_, row_sum_;
  std::vector<std::vector<PairTile>> rounds_;
  FarField rep_;
};

// The cost and gradient of cost_gradient(): at Y (n x d) under the
// affinities P as given (nnz stored entries; not yet checked), checked as
// check_affinities() checks them with relative tolerance `tol`. The exact
// sum reads P in place and checks it in the same pass (PassCheck); the
// approximation, which keeps its own copy of P, checks it first. `check`
// says what was found: unless it is ok, the result means nothing.
template <typename Executor>
double checked_cost_gradient(const CostKernels& kernels, const CostSettings& settings,
                             const SparseRows& P, std::size_t nnz, double tol,
                             const double* Y, std::size_t d, double* grad, double* pcost,
                             AffinityCheck& check, Executor& executor) {
  const std::size_t n = P.n;
  const bool whole = P.d == n && P.ptr[0] == 0 && static_cast<std::size_t>(P.ptr[n]) == nnz;
  const bool approximate = settings.gradient == GradientKind::approx && d <= 2;
  if (whole && !approximate) {
    CostEvaluator in_place(kernels, settings, P, d, true);
    PassCheck pass;
    pass.nnz = nnz;
    const double cost = in_place.evaluate(Y, true, grad, pcost, executor, &pass);
    if (pass.clean) {
      check = AffinityCheck();
      if (pass.sums.above != pass.sums.below) check = check_symmetry(P, tol, check, executor);
      return cost;
    }
  }
  check = check_affinities(kernels, P, nnz, tol, executor);
  if (check.kind != AffinityCheck::ok) return NAN;
  CostEvaluator copied(kernels, settings, P, d, false);
  return copied.evaluate(Y, true, grad, pcost, executor);
}

}  // namespace lsnn

#endif  // LSNN_COSTS_H
