// Sparse matrices by rows (CSR) and the operations the affinities need on
// them: sorting rows, transposition, symmetrisation, scaling.
#ifndef LSNN_SPARSE_H
#define LSNN_SPARSE_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "parallel.h"

namespace lsnn {

// The rows of a sparse matrix, owned by the caller (R's vectors, read in
// place): row i has entries ptr[i] .. ptr[i + 1] - 1, with 0-based columns
// col[] (sorted within a row) and values val[]; n rows, d columns. R's
// dgCMatrix slots p, i and x are this form of the matrix's transpose, and of
// a symmetric matrix itself. Int offsets, the limit of a dgCMatrix.
struct SparseRows {
  const int* ptr;
  const int* col;
  const double* val;
  std::size_t n;
  std::size_t d;
};

// The arrays of a square sparse matrix the core builds (the affinities):
// only their owner. Everything that reads a sparse matrix reads it through
// SparseRows (rows()), whether its arrays are R's or these.
struct CsrMatrix {
  std::size_t n = 0;
  std::vector<int> ptr;
  std::vector<int> col;
  std::vector<double> val;
  SparseRows rows() const { return SparseRows{ptr.data(), col.data(), val.data(), n, n}; }
};

inline int checked_nnz(std::size_t nnz) {
  if (nnz > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::length_error("more than 2^31 - 1 non-zero affinities");
  }
  return static_cast<int>(nnz);
}

// Sorts each row by column; duplicate columns are combined by sum or max.
inline void sort_rows(CsrMatrix& M, bool dup_max) {
  std::vector<int> newptr(M.n + 1, 0);
  std::vector<std::pair<int, double>> buf;
  std::size_t out = 0;
  for (std::size_t i = 0; i < M.n; ++i) {
    buf.clear();
    for (int e = M.ptr[i]; e < M.ptr[i + 1]; ++e) buf.emplace_back(M.col[e], M.val[e]);
    std::sort(buf.begin(), buf.end(),
              [](const std::pair<int, double>& x, const std::pair<int, double>& y) {
                return x.first < y.first;
              });
    for (std::size_t t = 0; t < buf.size(); ++t) {
      if (t > 0 && buf[t].first == buf[t - 1].first) {
        double& v = M.val[out - 1];
        v = dup_max ? std::max(v, buf[t].second) : v + buf[t].second;
      } else {
        M.col[out] = buf[t].first;
        M.val[out] = buf[t].second;
        ++out;
      }
    }
    newptr[i + 1] = static_cast<int>(out);
  }
  M.ptr.swap(newptr);
  M.col.resize(out);
  M.val.resize(out);
}

// The transpose of a square matrix.
inline CsrMatrix transpose(const SparseRows& M) {
  const std::size_t nnz = static_cast<std::size_t>(M.ptr[M.n]);
  CsrMatrix T;
  T.n = M.n;
  T.ptr.assign(M.n + 1, 0);
  for (std::size_t e = 0; e < nnz; ++e) ++T.ptr[static_cast<std::size_t>(M.col[e]) + 1];
  for (std::size_t i = 0; i < M.n; ++i) T.ptr[i + 1] += T.ptr[i];
  T.col.resize(nnz);
  T.val.resize(nnz);
  std::vector<int> next(T.ptr.begin(), T.ptr.end() - 1);
  for (std::size_t i = 0; i < M.n; ++i) {
    for (int e = M.ptr[i]; e < M.ptr[i + 1]; ++e) {
      const int pos = next[static_cast<std::size_t>(M.col[e])]++;
      T.col[pos] = static_cast<int>(i);
      T.val[pos] = M.val[e];
    }
  }
  return T;  // rows come out sorted, as the rows of M are visited in order
}

// S_ij = combine(M_ij, M_ji) over the union of both patterns (a missing entry
// is 0), dropping exact zeros and the diagonal. M (square) must have its
// rows sorted.
template <typename Executor, typename Combine>
CsrMatrix symmetrise(const SparseRows& M, Combine combine, Executor& executor) {
  const CsrMatrix T = transpose(M);
  const std::size_t n = M.n;
  std::vector<std::size_t> counts(n, 0);
  auto merge_row = [&](std::size_t i, int* col, double* val) {
    int a = M.ptr[i], ae = M.ptr[i + 1], b = T.ptr[i], be = T.ptr[i + 1];
    std::size_t cnt = 0;
    while (a < ae || b < be) {
      int c;
      double x = 0.0, y = 0.0;
      if (b >= be || (a < ae && M.col[a] < T.col[b])) {
        c = M.col[a];
        x = M.val[a++];
      } else if (a >= ae || T.col[b] < M.col[a]) {
        c = T.col[b];
        y = T.val[b++];
      } else {
        c = M.col[a];
        x = M.val[a++];
        y = T.val[b++];
      }
      if (static_cast<std::size_t>(c) == i) continue;
      const double v = combine(x, y);
      if (v == 0.0) continue;
      if (col != nullptr) {
        col[cnt] = c;
        val[cnt] = v;
      }
      ++cnt;
    }
    return cnt;
  };
  executor.parallel_for(
      0, n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) counts[i] = merge_row(i, nullptr, nullptr);
      },
      256);
  CsrMatrix S;
  S.n = n;
  S.ptr.assign(n + 1, 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    total += counts[i];
    S.ptr[i + 1] = checked_nnz(total);
  }
  S.col.resize(total);
  S.val.resize(total);
  executor.parallel_for(
      0, n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          merge_row(i, S.col.data() + S.ptr[i], S.val.data() + S.ptr[i]);
        }
      },
      256);
  return S;
}

inline void scale_to_sum_one(CsrMatrix& M) {
  double total = 0.0;
  for (double v : M.val) total += v;
  if (total > 0.0) {
    for (double& v : M.val) v /= total;
  }
}

// Whether the square matrix M equals its transpose: every stored (i, j) has
// a stored (j, i) whose value agrees to a relative `tol` (an entry missing on
// one side must be 0 on the other). Each row's columns must be increasing.
// O(nnz) and no copy of M: the rows i of a block are taken in order, so the
// entries (j, i) they look for come in increasing order within each row j,
// and a cursor per row j (placed by one bisection when the block first
// needs it) only moves forward.
template <typename Executor>
bool is_symmetric(const SparseRows& M, double tol, Executor& executor) {
  if (M.n != M.d) return false;
  const std::size_t n = M.n;
  // a few blocks per thread: each needs a cursor per row
  const std::size_t blocks = std::min<std::size_t>(n, 16);
  std::vector<char> block_ok(blocks, 1);
  executor.parallel_for(
      0, blocks,
      [&](std::size_t b0, std::size_t b1) {
        std::vector<int> cursor(n);
        for (std::size_t b = b0; b < b1; ++b) {
          const std::size_t r0 = n * b / blocks, r1 = n * (b + 1) / blocks;
          std::fill(cursor.begin(), cursor.end(), -1);
          for (std::size_t i = r0; i < r1 && block_ok[b]; ++i) {
            for (int e = M.ptr[i]; e < M.ptr[i + 1]; ++e) {
              const std::size_t j = static_cast<std::size_t>(M.col[e]);
              if (j == i) continue;
              const int end = M.ptr[j + 1];
              int& at = cursor[j];
              if (at < 0) {
                at = static_cast<int>(std::lower_bound(M.col + M.ptr[j], M.col + end,
                                                       static_cast<int>(i)) - M.col);
              }
              while (at < end && M.col[at] < static_cast<int>(i)) ++at;
              const double a = M.val[e];
              const double t = at < end && M.col[at] == static_cast<int>(i) ? M.val[at] : 0.0;
              if (!(std::fabs(a - t) <= tol * std::max(std::fabs(a), std::fabs(t)))) {
                block_ok[b] = 0;
                break;
              }
            }
          }
        }
      },
      1);
  return std::all_of(block_ok.begin(), block_ok.end(), [](char ok) { return ok != 0; });
}

}  // namespace lsnn

#endif  // LSNN_SPARSE_H
