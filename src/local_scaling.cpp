// Glue for local scaling and graph sorting (inst/include/lsnn/graph/local_scaling.h,
// graph_sort.h). Arguments are validated in R.
#include <Rcpp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <lsnn/graph/graph_sort.h>
#include <lsnn/graph/local_scaling.h>
#include <lsnn/graph/neighbour_overlap.h>

#include "graph_convert.h"
#include "r_executor.h"

// [[Rcpp::export(.locally_scaled_distances)]]
Rcpp::NumericMatrix locally_scaled_distances_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                                 int scale_from, int scale_to, int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  Rcpp::NumericMatrix out(idx.nrow(), idx.ncol());
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  lsnn_r::run_core([&] {
    lsnn::locally_scaled_distances(g, scale_from, scale_to, out.begin(), executor);
    return 0;
  });
  return out;
}

// [[Rcpp::export(.locally_scaled_graph)]]
Rcpp::List locally_scaled_graph_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                    int n_cols, int n_neighbors, int scale_from, int scale_to,
                                    int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  if (n_neighbors < 1 || n_neighbors > n_cols) Rcpp::stop("n_neighbors is outside the graph's columns");
  Rcpp::IntegerMatrix out_idx(idx.nrow(), n_neighbors);
  Rcpp::NumericMatrix out_dist(idx.nrow(), n_neighbors);
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, n_cols);
  lsnn_r::run_core([&] {
    lsnn::locally_scaled_graph(g, n_neighbors, scale_from, scale_to, out_idx.begin(),
                               out_dist.begin(), executor);
    return 0;
  });
  return Rcpp::List::create(Rcpp::Named("idx") = out_idx, Rcpp::Named("dist") = out_dist);
}

// [[Rcpp::export(.sort_graph_rows)]]
Rcpp::List sort_graph_rows_cpp(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                               Rcpp::Nullable<Rcpp::NumericMatrix> sort_values, bool decreasing,
                               bool self_first, int n_threads) {
  lsnn_r::RExecutor executor(n_threads, false);
  Rcpp::IntegerMatrix out_idx(idx.nrow(), idx.ncol());
  Rcpp::NumericMatrix out_dist(idx.nrow(), idx.ncol());
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  Rcpp::NumericMatrix values;
  const double* pv = nullptr;
  if (sort_values.isNotNull()) {
    values = Rcpp::NumericMatrix(sort_values.get());
    if (values.nrow() != idx.nrow() || values.ncol() != idx.ncol()) {
      Rcpp::stop("sort_values must have the shape of the graph");
    }
    pv = values.begin();
  }
  lsnn_r::run_core([&] {
    lsnn::sort_graph_rows(g, pv, decreasing, self_first, out_idx.begin(), out_dist.begin(),
                          executor);
    return 0;
  });
  return Rcpp::List::create(Rcpp::Named("idx") = out_idx, Rcpp::Named("dist") = out_dist);
}

// [[Rcpp::export(.neighbor_overlap)]]
double neighbor_overlap_cpp(Rcpp::IntegerMatrix idx1, Rcpp::IntegerMatrix idx2, int k,
                            int n_threads) {
  if (idx1.nrow() != idx2.nrow() || k < 1 || k > idx1.ncol() || k > idx2.ncol()) {
    Rcpp::stop("k must be between 1 and both graphs' columns, and the graphs must have the same rows");
  }
  lsnn_r::RExecutor executor(n_threads, false);
  const lsnn::GraphView a{idx1.begin(), nullptr, static_cast<std::size_t>(idx1.nrow()),
                          static_cast<std::size_t>(k), 1};
  const lsnn::GraphView b{idx2.begin(), nullptr, static_cast<std::size_t>(idx2.nrow()),
                          static_cast<std::size_t>(k), 1};
  return lsnn::neighbour_overlap(a, b, static_cast<std::size_t>(k), executor);
}

namespace {

// The first of rows [0, rows) of a column-major n x k matrix of 1-based
// row numbers, all within 1..n_ref, that lists a number twice, as
// {row, number, column of its second listing} (0-based row and column), or
// {-1, 0, 0}. Rows are read a tile at a time into a row-major buffer, so
// that the matrix is read down its columns; each row's numbers are set in a
// bit set of n_ref bits (125 kB for a million rows: it stays in cache) and
// cleared after the row. O(n k) time.
std::array<R_xlen_t, 3> first_repeat(const int* idx, R_xlen_t n, R_xlen_t k, R_xlen_t rows,
                                     R_xlen_t n_ref) {
  if (k < 2 || rows < 1) return {-1, 0, 0};
  constexpr R_xlen_t tile = 256;
  std::vector<std::uint64_t> listed(static_cast<std::size_t>(n_ref / 64 + 1), 0);
  std::vector<int> buffer(static_cast<std::size_t>(tile * k));
  for (R_xlen_t from = 0; from < rows; from += tile) {
    const R_xlen_t to = std::min(rows, from + tile);
    for (R_xlen_t c = 0; c < k; ++c) {
      for (R_xlen_t i = from; i < to; ++i) buffer[(i - from) * k + c] = idx[i + c * n];
    }
    for (R_xlen_t i = from; i < to; ++i) {
      const int* row = buffer.data() + (i - from) * k;
      for (R_xlen_t c = 0; c < k; ++c) {
        const std::size_t b = static_cast<std::size_t>(row[c] - 1);
        const std::uint64_t bit = std::uint64_t{1} << (b & 63);
        if (listed[b >> 6] & bit) return {i, row[c], c};
        listed[b >> 6] |= bit;
      }
      for (R_xlen_t c = 0; c < k; ++c) {
        const std::size_t b = static_cast<std::size_t>(row[c] - 1);
        listed[b >> 6] &= ~(std::uint64_t{1} << (b & 63));
      }
    }
  }
  return {-1, 0, 0};
}

}  // namespace

// The first problem of a graph from R, as c(code, row, value, column) (row,
// value and column 1-based), code 0 = none, 1 = idx NA, 2 = idx out of
// 1..n_ref (value: the index), 3 = dist NA/NaN, 4 = dist negative, 5 = dist
// infinite, 9 = a row lists a neighbour twice (value: the neighbour,
// column: its second column); with self_first also 6 = column 1 is not the
// row itself, 8 = the row's own distance is not 0; with `sorted` also 7 =
// dist decreases along the row (column: where). n_ref is the number of rows
// the graph's indices count: its own rows, or the reference rows of a graph
// of new rows. "First" is the smallest row with a problem, then its first
// column (a repeated neighbour counts after the row's other problems), so
// that the message names the first bad row. The matrices are column-major:
// each column is scanned down to the best row found so far, then the rows
// above it are searched for repeats.
// A row's own distance counts as 0 up to 1e-6 of its largest distance, so
// that graphs from libraries that compute it in single precision (cosine
// self-distances of about 1e-7) pass.
// [[Rcpp::export(.graph_problem)]]
Rcpp::IntegerVector graph_problem(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                                  bool self_first, bool sorted, int n_ref) {
  const R_xlen_t n = idx.nrow(), k = idx.ncol();
  if (dist.nrow() != n || dist.ncol() != k) Rcpp::stop("idx and dist must have the same dimensions");
  const int* pi = idx.begin();
  const double* pd = dist.begin();
  int code = 0, value = 0, column = 0;
  R_xlen_t row = n;
  for (R_xlen_t c = 0; c < k; ++c) {
    for (R_xlen_t i = 0; i < row; ++i) {
      const int v = pi[i + c * n];
      const double d = pd[i + c * n];
      int found = 0;
      if (v == NA_INTEGER) {
        found = 1;
      } else if (v < 1 || v > n_ref) {
        found = 2;
      } else if (std::isnan(d)) {
        found = 3;
      } else if (d < 0) {
        found = 4;
      } else if (std::isinf(d)) {
        found = 5;
      } else if (self_first && c == 0 && v != i + 1) {
        found = 6;
      } else if (sorted && c > 0 && d < pd[i + (c - 1) * n]) {
        found = 7;
      } else if (self_first && c == k - 1 && pd[i] > 1e-6 * std::max(d, 1.0)) {
        found = 8;
      }
      if (found != 0) {
        code = found;
        value = v;
        column = static_cast<int>(c + 1);
        row = i;
        break;
      }
    }
  }
  const std::array<R_xlen_t, 3> repeat = first_repeat(pi, n, k, row, n_ref);
  if (repeat[0] >= 0) {
    code = 9;
    row = repeat[0];
    value = static_cast<int>(repeat[1]);
    column = static_cast<int>(repeat[2] + 1);
  }
  if (code == 0) return Rcpp::IntegerVector::create(0, 0, 0, 0);
  return Rcpp::IntegerVector::create(code, static_cast<int>(row + 1), value, column);
}

// The first row of an n x k matrix of row numbers in 1..n_ref (as
// neighbor_overlap() takes them) that lists a number twice, as c(row,
// number, column of its second listing), 1-based, or c(0, 0, 0).
// [[Rcpp::export(.repeated_neighbour)]]
Rcpp::IntegerVector repeated_neighbour(Rcpp::IntegerMatrix idx, int n_ref) {
  const std::array<R_xlen_t, 3> repeat = first_repeat(idx.begin(), idx.nrow(), idx.ncol(), idx.nrow(), n_ref);
  if (repeat[0] < 0) return Rcpp::IntegerVector::create(0, 0, 0);
  return Rcpp::IntegerVector::create(static_cast<int>(repeat[0] + 1), static_cast<int>(repeat[1]),
                                     static_cast<int>(repeat[2] + 1));
}

// Candidate lists of n rows from blocks list(rows, idx, dist): rows (1-based,
// within 1..n) of the block's m lines, idx / dist m x c matrices of
// candidates (row numbers, 0 for none). Returns list(idx, dist, short) with
// each row's best k (graph_sort.h's best_candidates()) and the number of rows
// with fewer than k.
// [[Rcpp::export(.best_candidates)]]
Rcpp::List best_candidates_cpp(Rcpp::List blocks, int n, int k, Rcpp::IntegerVector self,
                               int n_threads) {
  if (n < 0 || k < 0) Rcpp::stop("n and k must not be negative");
  if (self.size() != 0 && self.size() != n) Rcpp::stop("self must have n entries or none");
  lsnn::CandidateLists c;
  c.start.assign(static_cast<std::size_t>(n) + 1, 0);
  std::vector<Rcpp::IntegerVector> rows;
  std::vector<Rcpp::IntegerMatrix> idx;
  std::vector<Rcpp::NumericMatrix> dist;
  for (R_xlen_t b = 0; b < blocks.size(); ++b) {
    const Rcpp::List block = blocks[b];
    rows.emplace_back(block["rows"]);
    idx.emplace_back(block["idx"]);
    dist.emplace_back(block["dist"]);
    if (idx.back().nrow() != rows.back().size() || dist.back().nrow() != rows.back().size() ||
        dist.back().ncol() != idx.back().ncol()) {
      Rcpp::stop("block %d: rows, idx and dist do not match", static_cast<int>(b) + 1);
    }
    for (const int r : rows.back()) {
      if (r < 1 || r > n) Rcpp::stop("block %d: a row is outside 1..n", static_cast<int>(b) + 1);
      c.start[static_cast<std::size_t>(r)] += static_cast<std::size_t>(idx.back().ncol());
    }
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) c.start[i + 1] += c.start[i];
  c.id.resize(c.start[n]);
  c.dist.resize(c.start[n]);
  std::vector<std::size_t> next(c.start.begin(), c.start.end() - 1);
  // The matrices are read a tile of lines at a time, column by column, so
  // that both the reads and the rows written stay in cache.
  constexpr std::size_t tile = 64;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const std::size_t m = static_cast<std::size_t>(rows[b].size()), cols = idx[b].ncol();
    const int* row_of = rows[b].begin();
    const int* block_idx = idx[b].begin();
    const double* block_dist = dist[b].begin();
    std::size_t at[tile];
    for (std::size_t from = 0; from < m; from += tile) {
      const std::size_t to = std::min(m, from + tile);
      // (a row may have several lines in a block)
      for (std::size_t line = from; line < to; ++line) {
        std::size_t& free = next[static_cast<std::size_t>(row_of[line]) - 1];
        at[line - from] = free;
        free += cols;
      }
      for (std::size_t col = 0; col < cols; ++col) {
        for (std::size_t line = from; line < to; ++line) {
          const double d = block_dist[line + col * m];
          if (std::isnan(d)) Rcpp::stop("block %d: a distance is NaN", static_cast<int>(b) + 1);
          c.id[at[line - from] + col] = block_idx[line + col * m];
          c.dist[at[line - from] + col] = d;
        }
      }
    }
  }
  Rcpp::IntegerMatrix out_idx(n, k);
  Rcpp::NumericMatrix out_dist(n, k);
  lsnn_r::RExecutor executor(n_threads, false);
  std::size_t n_short = 0;
  lsnn_r::run_core([&] {
    n_short = lsnn::best_candidates(c, static_cast<std::size_t>(n), static_cast<std::size_t>(k),
                                    self.size() ? self.begin() : nullptr, out_idx.begin(),
                                    out_dist.begin(), executor);
    return 0;
  });
  return Rcpp::List::create(Rcpp::Named("idx") = out_idx, Rcpp::Named("dist") = out_dist,
                            Rcpp::Named("short") = static_cast<double>(n_short));
}
