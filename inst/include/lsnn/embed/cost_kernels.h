// The inner loops of the embedding costs and of the input calibrations,
// behind a table of function pointers, built twice (baseline and AVX2 + FMA)
// exactly as the distance kernels of kernels.h are: the bodies live in
// cost_kernels_impl.h, included once per target by src/kernels_generic.cpp and
// src/kernels_avx2.cpp.
//
// The plain structs below describe one cost evaluation; costs.h fills them,
// schedules the work and combines the per-point sums.
#ifndef LSNN_COST_KERNELS_H
#define LSNN_COST_KERNELS_H

#include <cstddef>
#include <cstdint>

#include "cost_models.h"

namespace lsnn {

// Everything a kernel needs about the cost, its parameters and the current
// coordinates. Y is stored coordinate by coordinate (SoA, like an R matrix):
// Y[k * stride + i], with stride >= n a multiple of 4 and zero padding.
struct PairProblem {
  CostParams params;  // the cost and its parameters (cost_models.h)
  std::size_t n;
  std::size_t d;
  std::size_t stride;
  const double* Y;
  // The sparse input affinities, CSR (P is symmetric, so this is also its
  // CSC form): row i holds col[ptr[i] .. ptr[i + 1]) with values val, no
  // diagonal entry, each row padded with zeros (at column i) to a multiple
  // of 4 entries, or not padded: the kernels then take the end of the row
  // as if it were.
  const int* ptr;
  const int* col;
  const double* val;
  // When set, the values are read from here, in single precision, instead
  // of from val (costs.h's CostEvaluator when P is its own to rewrite).
  const float* val_single = nullptr;
  // When set, row i's columns and values are col[row_start[i]] and
  // val[row_start[i]] onwards, for ptr[i + 1] - ptr[i] entries (P read
  // where it is while its rows are in another order); otherwise they start
  // at ptr[i].
  const int* row_start = nullptr;
  // Every P value is multiplied by p_scale (early exaggeration).
  double p_scale;
};

// Per-point accumulators of the all-pairs part, all of length `stride`
// (repulsion of d * stride), written by one task at a time (see the schedule
// in costs.h):
//   repulsion   sum_j c_ij (y_i - y_j), c the model's repulsion;
//   normaliser  t-SNE only: sum_j w_ij (its Z);
//   cost        the per-point all-pairs cost (when `want_cost`).
struct PairSums {
  double* repulsion;
  double* normaliser;
  double* cost;
};

// The sparse part, per row: the attraction sum_j c_ij (y_i - y_j) over the
// stored P entries (d * n; with UMAP's correction of the repulsion), the
// per-point cost of those entries, and the row sum of P (t-SNE).
struct SparseSums {
  double* attraction;
  double* cost;
  double* row_sum;
};

// What the check of a square sparse matrix of affinities sums over its rows
// (affinity_rows below; affinity_check.h's check_affinities() and costs.h's
// PassCheck compare the sums): hashes of the entries above the diagonal and
// of those below it (transposed), modulo 2^64, and the counts of stored
// zeros and diagonal entries.
struct RowSums {
  std::uint64_t above = 0, below = 0;
  std::size_t zeros = 0, diagonal = 0;
  void add(const RowSums& o) {
    above += o.above;
    below += o.below;
    zeros += o.zeros;
    diagonal += o.diagonal;
  }
};

struct CostKernels {
  // The all-pairs part over rows [i0, i1) and columns [j0, j1) (block
  // bounds multiples of 4, j1 <= stride). Each unordered pair counts once
  // and adds to both of its points; `diagonal` means i0 == j0, i1 == j1 and
  // only pairs j > i are taken. Columns >= n are ignored.
  void (*pair_tile)(const PairProblem& prob, std::size_t i0, std::size_t i1,
                    std::size_t j0, std::size_t j1, bool diagonal,
                    bool want_cost, const PairSums& out);
  // The sparse part for rows [r0, r1); writes only to those rows.
  void (*sparse_rows)(const PairProblem& prob, std::size_t r0, std::size_t r1,
                      bool want_cost, const SparseSums& out);
  // The grid approximation's near field (farfield/near_field.h): point (x, y)
  // against the points [lo, hi) of the coordinate arrays X and Yc (Yc null
  // in 1-D). out[0], out[1] += sum_j c (x - x_j), sum_j c (y - y_j);
  // out[2] += sum_j z for t-SNE (its Z), else (want_cost) the pairs' cost.
  // Only prob's params are read.
  void (*near_run)(const PairProblem& prob, double x, double y, const double* X,
                   const double* Yc, std::size_t lo, std::size_t hi, bool want_cost,
                   double* out);
  // Gaussian moments of one row for perplexity calibration: with
  // w_j = exp(-beta d_j), out = {sum w, sum d w, sum d^2 w}; the w_j are
  // also written to w (length m). The d_j >= 0.
  void (*gauss_moments)(const double* d, std::size_t m, double beta,
                        double* out, double* w);
  // Squared Euclidean distances between rows [r0, r1) of the row-major
  // n x D matrix X and all of its rows: out[(r - r0) * n + j]; norms holds
  // the squared row norms. Clamped at 0, exact 0 on the diagonal.
  void (*sqdist_rows)(const double* X, std::size_t n, std::size_t D,
                      const double* norms, std::size_t r0, std::size_t r1,
                      double* out);
  // Rows [r0, r1) of a square sparse matrix by rows (n rows, nnz entries in
  // all: row i holds col[ptr[i] .. ptr[i + 1]) with values val) added to
  // `sums`: each entry (i, j, v) off the diagonal hashed as the pair
  // {min(i, j), max(i, j)} with the bits of v, into `above` when j > i and
  // `below` when j < i, so that the two sums agree when the matrix equals
  // its transpose bit for bit. False when a row's range in ptr is out of
  // order or beyond nnz (nothing of that row is read), or a row holds a
  // column out of range or not increasing, or a value that is not finite or
  // is below 0; the sums mean nothing then.
  bool (*affinity_rows)(const int* ptr, const int* col, const double* val, std::size_t n,
                        std::size_t nnz, std::size_t r0, std::size_t r1, RowSums& sums);
  const char* name;
};

}  // namespace lsnn

#endif  // LSNN_COST_KERNELS_H
