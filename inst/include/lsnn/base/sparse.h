// Sparse matrices by rows (CSR) and the operations the affinities need on
// them: sorting rows, transposition, symmetrisation, scaling.
#ifndef LSNN_SPARSE_H
#define LSNN_SPARSE_H

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// The arrays of a square sparse matrix that the caller owns and the core
// fills (R's vectors, so that a result is not copied once more): ptr of
// n + 1 entries, col and val of as many as the matrix stores.
struct CsrArrays {
  int* ptr;
  int* col;
  double* val;
};

// Sorts each row by column; duplicate columns are combined by sum or max.
// Returns the entries kept (ptr is rewritten, the rows moved up).
inline std::size_t sort_rows(std::size_t n, CsrArrays M, bool dup_max) {
  std::vector<std::pair<int, double>> buf;
  std::size_t out = 0;
  int begin = M.ptr[0];
  for (std::size_t i = 0; i < n; ++i) {
    const int end = M.ptr[i + 1];
    buf.clear();
    for (int e = begin; e < end; ++e) buf.emplace_back(M.col[e], M.val[e]);
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
    begin = end;
    M.ptr[i + 1] = static_cast<int>(out);
  }
  return out;
}

inline void sort_rows(CsrMatrix& M, bool dup_max) {
  const std::size_t nnz = sort_rows(M.n, CsrArrays{M.ptr.data(), M.col.data(), M.val.data()}, dup_max);
  M.col.resize(nnz);
  M.val.resize(nnz);
}

namespace detail {

// The position of column c in row r of M (rows sorted, each column once),
// or -1.
inline int find_in_row(const SparseRows& M, std::size_t r, int c) {
  const int* first = M.col + M.ptr[r];
  const int* last = M.col + M.ptr[r + 1];
  const int* at = std::lower_bound(first, last, c);
  return at != last && *at == c ? static_cast<int>(at - M.col) : -1;
}

// The shape of S = combine(M, M') before its entries are written.
struct SymmetricPattern {
  // per entry of M: 1 if its mirror is stored, 2 if it has none and makes an
  // entry of its column's row
  std::vector<unsigned char> kind;
  std::vector<int> own;  // per row: entries of its own kept
  std::vector<int> ptr;  // S's row offsets
  std::size_t total = 0;
};

template <typename Executor, typename Combine>
SymmetricPattern symmetric_pattern(const SparseRows& M, Combine combine, Executor& executor) {
  const std::size_t n = M.n;
  const std::size_t nnz_m = n > 0 ? static_cast<std::size_t>(M.ptr[n]) : 0;
  SymmetricPattern pat;
  pat.kind.assign(nnz_m, 0);
  pat.own.assign(n, 0);
  // per row: entries without a mirror that land in it
  std::vector<std::atomic<int>> lonely(n);
  for (auto& c : lonely) c.store(0, std::memory_order_relaxed);
  executor.parallel_for(
      0, n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          int kept = 0;
          for (int a = M.ptr[i]; a < M.ptr[i + 1]; ++a) {
            const std::size_t j = static_cast<std::size_t>(M.col[a]);
            if (j == i) continue;
            const int m = find_in_row(M, j, static_cast<int>(i));
            if (m >= 0) {
              pat.kind[a] = 1;
              kept += combine(M.val[a], M.val[m]) != 0.0;
            } else {
              kept += combine(M.val[a], 0.0) != 0.0;
              if (combine(0.0, M.val[a]) != 0.0) {
                pat.kind[a] = 2;
                lonely[j].fetch_add(1, std::memory_order_relaxed);
              }
            }
          }
          pat.own[i] = kept;
        }
      },
      256);
  pat.ptr.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    pat.total += static_cast<std::size_t>(pat.own[i]) + static_cast<std::size_t>(lonely[i].load());
    pat.ptr[i + 1] = checked_nnz(pat.total);
  }
  return pat;
}

// The entries without a mirror, at the end of their rows' spans, in the
// order of the rows they come from (one pass: each span fills in order).
template <typename Combine>
void place_mirrorless(const SparseRows& M, Combine combine, const SymmetricPattern& pat, const CsrArrays& S) {
  const std::size_t n = M.n;
  std::vector<int> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = pat.ptr[i] + pat.own[i];
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = M.ptr[i]; a < M.ptr[i + 1]; ++a) {
      if (pat.kind[a] != 2) continue;
      const int at = next[static_cast<std::size_t>(M.col[a])]++;
      S.col[at] = static_cast<int>(i);
      S.val[at] = combine(0.0, M.val[a]);
    }
  }
}

// Each row: its own entries merged with those place_mirrorless() put at the
// end of its span, forward: the write position never passes the next entry
// read from the end of the span.
template <typename Executor, typename Combine>
void merge_own_entries(const SparseRows& M, Combine combine, const SymmetricPattern& pat, const CsrArrays& S,
                       Executor& executor) {
  const std::vector<int>& ptr = pat.ptr;
  executor.parallel_for(
      0, M.n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          int a = M.ptr[i];
          const int ae = M.ptr[i + 1];
          int r = ptr[i] + pat.own[i], w = ptr[i];
          const int re = ptr[i + 1];
          while (a < ae || r < re) {
            if (a < ae) {
              const int c = M.col[a];
              const std::size_t j = static_cast<std::size_t>(c);
              if (j == i) {
                ++a;
                continue;
              }
              if (r >= re || c < S.col[r]) {
                double v;
                if (pat.kind[a] == 1) {
                  v = combine(M.val[a], M.val[find_in_row(M, j, static_cast<int>(i))]);
                } else {
                  v = combine(M.val[a], 0.0);
                }
                ++a;
                if (v == 0.0) continue;
                S.col[w] = c;
                S.val[w] = v;
                ++w;
                continue;
              }
            }
            S.col[w] = S.col[r];
            S.val[w] = S.val[r];
            ++w;
            ++r;
          }
        }
      },
      256);
}

}  // namespace detail

// S_ij = combine(M_ij, M_ji) over the union of both patterns (a missing entry
// is 0), dropping exact zeros and the diagonal. M (square) must have its
// rows sorted, each column at most once. S's arrays come from
// alloc(nnz) (a CsrArrays with room for n + 1 offsets and nnz entries).
//
// No transpose is formed: an entry's mirror M_ji is found by binary search
// in row j, and row i of S is M's row i (entries whose mirror exists
// combined with it) merged with the entries j -> i that have none, placed at
// the end of row i's span by one pass over the rows in order (so sorted)
// and then merged forward in place. Memory: M, S and a byte per entry of M.
template <typename Executor, typename Combine, typename Alloc>
void symmetrise_into(const SparseRows& M, Combine combine, Alloc alloc, Executor& executor) {
  const detail::SymmetricPattern pat = detail::symmetric_pattern(M, combine, executor);
  const CsrArrays S = alloc(pat.total);
  std::copy(pat.ptr.begin(), pat.ptr.end(), S.ptr);
  detail::place_mirrorless(M, combine, pat, S);
  detail::merge_own_entries(M, combine, pat, S, executor);
}

template <typename Executor, typename Combine>
CsrMatrix symmetrise(const SparseRows& M, Combine combine, Executor& executor) {
  CsrMatrix S;
  S.n = M.n;
  symmetrise_into(
      M, combine,
      [&](std::size_t nnz) {
        S.ptr.resize(S.n + 1);
        S.col.resize(nnz);
        S.val.resize(nnz);
        return CsrArrays{S.ptr.data(), S.col.data(), S.val.data()};
      },
      executor);
  return S;
}

// Divides the values by their sum (taken in order), when positive.
inline void scale_to_sum_one(double* val, std::size_t nnz) {
  double total = 0.0;
  for (std::size_t e = 0; e < nnz; ++e) total += val[e];
  if (total > 0.0) {
    for (std::size_t e = 0; e < nnz; ++e) val[e] /= total;
  }
}

inline void scale_to_sum_one(CsrMatrix& M) { scale_to_sum_one(M.val.data(), M.val.size()); }

}  // namespace lsnn

#endif  // LSNN_SPARSE_H
