// The checks of a matrix of affinities before a layout reads it: well
// formed, finite, non-negative and symmetric, in one pass over its arrays.
#ifndef LSNN_AFFINITY_CHECK_H
#define LSNN_AFFINITY_CHECK_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "cost_kernels.h"
#include "../base/parallel.h"
#include "../base/sparse.h"

namespace lsnn {

// What check_affinities() found wrong with a square sparse matrix, in the
// order it looks: its arrays (ptr not starting at 0, decreasing or not
// ending at nnz; a column out of range or not increasing within its row),
// a value that is not finite or is below 0, then an entry whose transpose
// differs by more than the relative tolerance (a missing entry counts as
// 0). `row` and `col` are 0-based positions of the rows as the arrays list
// them (for the arrays: the row, or n for ptr itself); `value` is the
// entry, `mirror` its transpose's value.
struct AffinityCheck {
  enum Kind { ok = 0, malformed = 1, not_finite = 2, negative = 3, asymmetric = 4 };
  Kind kind = ok;
  std::size_t row = 0, col = 0;
  double value = 0.0, mirror = 0.0;
  // (counted when kind is ok) stored diagonal entries, stored zeros
  std::size_t diagonal = 0, zeros = 0;
};

// Whether the entries of the well-formed square matrix M in rows [r0, r1)
// equal their transposes to a relative `tol`, comparing each entry (i, j)
// of those rows with (j, i) through a cursor per row j that only moves
// forward; the first that does not is written to `found`.
inline bool rows_symmetric(const SparseRows& M, std::size_t r0, std::size_t r1, double tol,
                           std::vector<int>& cursor, AffinityCheck& found) {
  std::fill(cursor.begin(), cursor.end(), -1);
  for (std::size_t i = r0; i < r1; ++i) {
    for (int e = M.ptr[i]; e < M.ptr[i + 1]; ++e) {
      const std::size_t j = static_cast<std::size_t>(M.col[e]);
      if (j == i) continue;
      const int end = M.ptr[j + 1];
      int& at = cursor[j];
      if (at < 0) {
        at = static_cast<int>(std::lower_bound(M.col + M.ptr[j], M.col + end,
                                               static_cast<int>(r0)) - M.col);
      }
      while (at < end && static_cast<std::size_t>(M.col[at]) < i) ++at;
      const double a = M.val[e];
      const double m = at < end && static_cast<std::size_t>(M.col[at]) == i ? M.val[at] : 0.0;
      if (!(std::fabs(a - m) <= tol * std::max(a, m))) {
        found = AffinityCheck{AffinityCheck::asymmetric, i, j, a, m, 0, 0};
        return false;
      }
    }
  }
  return true;
}

// The comparison of every entry of the well-formed square matrix M with its
// transpose (rows_symmetric()), in blocks of rows: the first problem of the
// first block that has one, or `ok` (what the caller found so far) if none.
template <typename Executor>
AffinityCheck check_symmetry(const SparseRows& M, double tol, const AffinityCheck& ok,
                             Executor& executor) {
  const std::size_t n = M.n, blocks = std::min<std::size_t>(n, 64);
  std::vector<AffinityCheck> found(blocks);
  executor.parallel_for(
      0, blocks,
      [&](std::size_t b0, std::size_t b1) {
        std::vector<int> cursor(n);
        for (std::size_t b = b0; b < b1; ++b) {
          rows_symmetric(M, n * b / blocks, n * (b + 1) / blocks, tol, cursor, found[b]);
        }
      },
      1);
  for (const AffinityCheck& f : found) {
    if (f.kind != AffinityCheck::ok) return f;
  }
  return ok;
}

// The checks of a matrix of affinities, square, of nnz stored entries, in
// one pass over its arrays in order, without a copy: that they are well
// formed, that the values are finite and non-negative, and that the matrix
// equals its transpose to a relative `tol` entry by entry.
//
// The transpose is not read in that pass: comparing each entry with (j, i)
// jumps to another row for every entry, for the all-pairs affinities of
// t-SNE a cache miss per entry, several times the time of the pass. Instead
// the pass (the kernels' affinity_rows) sums a hash of every entry above the
// diagonal and of every entry below it, transposed, modulo 2^64. A matrix
// equal to its transpose bit for bit (as symmetrised affinities are) has
// equal sums; when they differ the entries are compared with their
// transposes (rows_symmetric(), O(nnz) with a cursor per row), which finds
// the entry or accepts a matrix symmetric to within `tol`. The hash of an
// entry is injective in either 32-bit half of its value, so one entry that
// differs from its transpose in one half always shows; otherwise several
// differences go unseen only if their hashes happen to cancel, as likely as
// a collision of a 64-bit hash. The first problem of the first block of
// rows that has one is reported, so that the answer does not depend on the
// number of threads.
template <typename Executor>
AffinityCheck check_affinities(const CostKernels& kernels, const SparseRows& M, std::size_t nnz,
                               double tol, Executor& executor) {
  AffinityCheck out;
  const std::size_t n = M.n;
  if (M.d != n || M.ptr[0] != 0 || static_cast<std::size_t>(M.ptr[n]) != nnz) {
    out.kind = AffinityCheck::malformed;
    out.row = n;
    return out;
  }
  if (n == 0) return out;
  const std::size_t blocks = std::min<std::size_t>(n, 64);
  std::vector<AffinityCheck> found(blocks);
  std::vector<std::uint64_t> above(blocks, 0), below(blocks, 0);
  executor.parallel_for(
      0, blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          AffinityCheck& f = found[b];
          RowSums sums;
          for (std::size_t i = n * b / blocks; i < n * (b + 1) / blocks; ++i) {
            if (kernels.affinity_rows(M.ptr, M.col, M.val, n, nnz, i, i + 1, sums)) continue;
            const int e0 = M.ptr[i], e1 = M.ptr[i + 1];
            if (e0 < 0 || e1 < e0 || static_cast<std::size_t>(e1) > nnz) {
              f = AffinityCheck{AffinityCheck::malformed, i, 0, 0.0, 0.0, 0, 0};
              break;
            }
            // the row is read again to find its problem
            int last = -1;
            for (int e = e0; e < e1; ++e) {
              const int c = M.col[e];
              if (c <= last || static_cast<std::size_t>(c) >= n) {
                f = AffinityCheck{AffinityCheck::malformed, i, 0, 0.0, 0.0, 0, 0};
                break;
              }
              last = c;
              const double v = M.val[e];
              if (!(v >= 0.0 && v <= std::numeric_limits<double>::max())) {
                f = AffinityCheck{std::isfinite(v) ? AffinityCheck::negative
                                                   : AffinityCheck::not_finite,
                                  i, static_cast<std::size_t>(c), v, 0.0, 0, 0};
                break;
              }
            }
            break;
          }
          above[b] = sums.above;
          below[b] = sums.below;
          f.zeros = sums.zeros;
          f.diagonal = sums.diagonal;
        }
      },
      1);
  std::uint64_t up = 0, down = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (found[b].kind != AffinityCheck::ok) return found[b];
    out.diagonal += found[b].diagonal;
    out.zeros += found[b].zeros;
    up += above[b];
    down += below[b];
  }
  return up == down ? out : check_symmetry(M, tol, out, executor);
}

}  // namespace lsnn

#endif  // LSNN_AFFINITY_CHECK_H
