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

// What check_affinities() found wrong with a square sparse matrix, in the
// order it looks: its arrays (ptr not starting at 0, decreasing or not
// ending at nnz; a column out of range or not increasing within its row),
// then its entries (a value that is not finite, one below 0, an entry whose
// transpose differs by more than the relative tolerance; a missing entry
// counts as 0). `row` and `col` are 0-based positions of the rows as the
// arrays list them; `value` is the entry, `mirror` its transpose's value.
struct AffinityCheck {
  enum Kind { ok = 0, malformed = 1, not_finite = 2, negative = 3, asymmetric = 4 };
  Kind kind = ok;
  std::size_t row = 0, col = 0;
  double value = 0.0, mirror = 0.0;
  std::size_t diagonal = 0;  // stored diagonal entries (counted when kind is ok)
};

// The checks of a matrix of affinities, square, of nnz stored entries, in
// one pass over its values and O(nnz) time, with no copy: whether its arrays
// are well formed, its values finite and non-negative, and whether it equals
// its transpose to a relative `tol` entry by entry.
//
// Each entry (i, j) is compared with (j, i). Visiting the rows in order and
// looking each transpose up in its own row makes a jump to a different row
// for every entry, which for the all-pairs affinities of t-SNE (n - 1 entries
// per row) is a cache miss per entry. So the rows are cut into blocks (one
// task each) and their columns into bands of about 64 entries per row: a
// tile of a block and a band reads its rows' entries in that band, and their
// transposes, the entries of the band's rows in the block's columns, through
// one cursor per band row that only moves forward (the rows i of the block
// come in increasing order within the tile, and a column j lies in one band
// only). The cursors of a band are a few cache lines each, reused from one
// row to the next. The first problem of the first block that has one is
// reported, so the answer does not depend on the number of threads.
template <typename Executor>
AffinityCheck check_affinities(const SparseRows& M, std::size_t nnz, double tol,
                               Executor& executor) {
  AffinityCheck out;
  const std::size_t n = M.n;
  if (M.d != n || M.ptr[0] != 0 || static_cast<std::size_t>(M.ptr[n]) != nnz) {
    out.kind = AffinityCheck::malformed;
    out.row = n;  // (no row in particular)
    return out;
  }
  if (n == 0) return out;
  const std::size_t blocks = std::min<std::size_t>(n, 16);
  std::vector<AffinityCheck> found(blocks);
  auto rows_of = [&](std::size_t b) {
    return std::make_pair(n * b / blocks, n * (b + 1) / blocks);
  };
  // the arrays first: the tiles below read any row through them
  executor.parallel_for(
      0, blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          const auto rows = rows_of(b);
          for (std::size_t i = rows.first; i < rows.second; ++i) {
            const int e0 = M.ptr[i], e1 = M.ptr[i + 1];
            bool bad = e1 < e0 || static_cast<std::size_t>(e1) > nnz;
            for (int e = e0; !bad && e < e1; ++e) {
              bad = M.col[e] < 0 || static_cast<std::size_t>(M.col[e]) >= n ||
                    (e > e0 && M.col[e] <= M.col[e - 1]);
            }
            if (bad) {
              found[b].kind = AffinityCheck::malformed;
              found[b].row = i;
              break;
            }
          }
        }
      },
      1);
  for (const AffinityCheck& f : found) {
    if (f.kind != AffinityCheck::ok) return f;
  }
  // columns per band: about 64 stored entries per row and band
  const std::size_t mean_row = std::max<std::size_t>(1, nnz / n);
  const std::size_t band = std::min(n, std::max<std::size_t>(64, 64 * n / mean_row));
  executor.parallel_for(
      0, blocks,
      [&](std::size_t b0, std::size_t b1) {
        std::vector<int> at(n);
        std::vector<int> next;
        for (std::size_t b = b0; b < b1; ++b) {
          const auto rows = rows_of(b);
          const std::size_t r0 = rows.first, r1 = rows.second;
          AffinityCheck& f = found[b];
          next.assign(M.ptr + r0, M.ptr + r1);
          for (std::size_t c0 = 0; c0 < n && f.kind == AffinityCheck::ok; c0 += band) {
            const std::size_t c1 = std::min(n, c0 + band);
            // each band row's cursor at its first entry in the block's columns
            for (std::size_t j = c0; j < c1; ++j) {
              at[j] = static_cast<int>(std::lower_bound(M.col + M.ptr[j], M.col + M.ptr[j + 1],
                                                        static_cast<int>(r0)) - M.col);
            }
            for (std::size_t i = r0; i < r1 && f.kind == AffinityCheck::ok; ++i) {
              int e = next[i - r0];
              const int end = M.ptr[i + 1];
              for (; e < end && static_cast<std::size_t>(M.col[e]) < c1; ++e) {
                const std::size_t j = static_cast<std::size_t>(M.col[e]);
                const double a = M.val[e];
                if (!std::isfinite(a) || a < 0.0) {
                  f = AffinityCheck{std::isfinite(a) ? AffinityCheck::negative
                                                     : AffinityCheck::not_finite,
                                    i, j, a, 0.0, 0};
                  break;
                }
                if (j == i) {
                  ++f.diagonal;
                  continue;
                }
                int& t = at[j];
                const int j_end = M.ptr[j + 1];
                while (t < j_end && static_cast<std::size_t>(M.col[t]) < i) ++t;
                const double m = t < j_end && static_cast<std::size_t>(M.col[t]) == i
                                     ? M.val[t] : 0.0;
                if (!(std::fabs(a - m) <= tol * std::max(a, std::fabs(m)))) {
                  // (a transpose that is not a finite non-negative number is
                  // reported as such)
                  if (!std::isfinite(m) || m < 0.0) {
                    f = AffinityCheck{std::isfinite(m) ? AffinityCheck::negative
                                                       : AffinityCheck::not_finite,
                                      j, i, m, a, 0};
                  } else {
                    f = AffinityCheck{AffinityCheck::asymmetric, i, j, a, m, 0};
                  }
                  break;
                }
              }
              next[i - r0] = e;
            }
          }
        }
      },
      1);
  std::size_t diagonal = 0;
  for (const AffinityCheck& f : found) {
    if (f.kind != AffinityCheck::ok) return f;
    diagonal += f.diagonal;
  }
  out.diagonal = diagonal;
  return out;
}

}  // namespace lsnn

#endif  // LSNN_SPARSE_H
