// Input affinities of the neighbour embeddings, as sparse symmetric matrices.
//
//  - Perplexity calibration (t-SNE, LargeVis): for each point i, the
//    precision beta_i of exp(-beta_i d_ij^2) over its neighbours (a graph
//    row, or every other point) such that the Shannon entropy (natural log)
//    of the row's normalised weights equals log(perplexity) within `tol`.
//    A safeguarded Newton iteration on log(beta) inside a bisection bracket:
//    a step that leaves the bracket is replaced by a bisection (of log(beta)
//    while the bracket spans more than a factor 2; a doubling or halving
//    while one end is open). A row starts from the previous row's precision
//    (within fixed chunks of rows, so the result does not depend on the
//    number of threads). The rows are then normalised,
//    symmetrised (p_ij + p_ji) / 2 and scaled to sum 1.
//  - UMAP's smoothed kNN memberships: rho_i, the distance to the
//    local_connectivity-th nearest non-zero neighbour (interpolated when
//    fractional); sigma_i by bisection (from 1, or from the power of two
//    nearest the row's mean distance when that is far from 1) so that
//    sum_j exp(-max(0, d_ij - rho_i) / sigma_i) = log2(k) bandwidth over the
//    row's k - 1 neighbours, k counting the point itself; sigma_i at least
//    1e-3 times the row's mean distance (the graph's, when rho_i = 0);
//    symmetrised by the fuzzy union V + V^T - V o V^T, mixed with the
//    intersection V o V^T by set_op_mix_ratio.
//
// Graph rows (a GraphView, graph.h: n x k column-major as in R, with
// distances, read in place whatever its index base): the neighbours of i
// are its entries other than i itself; a row that does not list i drops its
// first column instead.
#ifndef LSNN_AFFINITIES_H
#define LSNN_AFFINITIES_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cost_kernels.h"
#include "../base/graph.h"
#include "../base/parallel.h"
#include "../base/sparse.h"

namespace lsnn {

// The power of two p with p <= x < 2p, for x positive and finite.
inline double power_of_two_below(double x) {
  int e;
  std::frexp(x, &e);  // 2^(e-1) <= x < 2^e
  return std::ldexp(1.0, e - 1);
}

// A power of two that brings `biggest` (a largest distance or |value|)
// near 1 when it lies beyond 2^250 or below 2^-250, where its square would
// overflow or underflow; 1 otherwise (ordinary data are left bit for bit as
// they are). Multiplying by a power of two is exact, and the calibrations
// are invariant to the scale: only the reported precisions are converted.
inline double safe_unit(double biggest) {
  const double big = std::ldexp(1.0, 250), small = std::ldexp(1.0, -250);
  if (!(biggest > 0.0) || !std::isfinite(biggest) || (biggest <= big && biggest >= small)) {
    return 1.0;
  }
  // (capped for subnormal input, whose reciprocal power would overflow)
  return std::min(1.0 / power_of_two_below(biggest), std::ldexp(1.0, 1000));
}

// beta computed on distances multiplied by `unit`, per squared given distance
// (0 or infinite when that is outside the double range).
inline double unscale_beta(double beta, double unit) {
  return unit == 1.0 ? beta : (beta * unit) * unit;
}

struct CalibrationSettings {
  double perplexity = 30.0;
  double tol = 1e-5;
  int max_steps = 200;
};

// Calibrates one row. d: the m squared distances, shifted so that their
// minimum is 0 (the entropy does not depend on the shift). `beta` holds the
// starting point on entry (when positive and finite; otherwise 1 / the mean
// of d is used) and the precision on exit; the normalised weights go to p.
// Returns false when the entropy is not within tol of log(perplexity) after
// max_steps.
//
// A row whose distances are all tied (duplicated points) has the same,
// uniform weights whatever beta; a row whose nearest neighbours are tied at
// distance 0 tends, as beta grows, to uniform weights over those. Either
// limit is returned (never the NaN of exp(-inf * 0)) when the target
// entropy lies beyond it.
inline bool calibrate_perplexity_row(const CostKernels& k, const double* d,
                                     std::size_t m, const CalibrationSettings& s,
                                     double& beta, double* p) {
  const double target = std::log(s.perplexity);
  double mean = 0.0, dmax = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    mean += d[j];
    dmax = std::max(dmax, d[j]);
  }
  mean /= static_cast<double>(m);
  if (!(dmax > 0.0)) {
    for (std::size_t j = 0; j < m; ++j) p[j] = 1.0 / static_cast<double>(m);
    if (!(beta > 0.0 && std::isfinite(beta))) beta = 1.0;
    return std::fabs(std::log(static_cast<double>(m)) - target) < s.tol;
  }
  if (!(beta > 0.0 && std::isfinite(beta))) beta = mean > 0.0 ? 1.0 / mean : 1.0;
  double lo = 0.0, hi = std::numeric_limits<double>::infinity();
  double dx = HUGE_VAL, dx_old = HUGE_VAL;  // the last two steps of log(beta)
  double mom[3];
  bool converged = false;
  for (int step = 0; step < s.max_steps; ++step) {
    k.gauss_moments(d, m, beta, mom, p);
    const double e1 = mom[1] / mom[0];
    const double H = std::log(mom[0]) + beta * e1;
    const double diff = H - target;
    if (std::fabs(diff) < s.tol) {
      converged = true;
      break;
    }
    // mom[1] = 0: every weight off the minimum has underflowed, the limit of
    // large beta: no larger beta changes anything, and a smaller one is
    // sought from the row's own scale rather than by halving.
    const bool at_limit = mom[1] == 0.0;
    if (diff > 0.0 && at_limit) break;
    if (diff > 0.0) {
      lo = beta;
    } else {
      hi = beta;
    }
    // Newton on log(beta): dH / dlog(beta) = -beta^2 Var(d). As in rtsafe,
    // a Newton step is taken only if it stays inside the bracket and is less
    // than half the step before last; otherwise the bracket is bisected.
    const double var = mom[2] / mom[0] - e1 * e1;
    double next = NAN;
    if (var > 0.0) {
      const double step = std::min(4.0, std::max(-4.0, diff / (beta * beta * var)));
      next = beta * std::exp(step);
      if (!(next > lo && next < hi) || 2.0 * std::fabs(step) > std::fabs(dx_old)) next = NAN;
    }
    if (std::isnan(next) && at_limit && 1.0 / mean < hi && 1.0 / mean > lo) next = 1.0 / mean;
    if (std::isnan(next)) {
      if (std::isinf(hi)) {
        next = beta * 2.0;
      } else if (lo == 0.0) {
        next = hi / 2.0;
      } else {
        next = hi > 2.0 * lo ? std::sqrt(lo * hi) : 0.5 * (lo + hi);  // bisect log(beta)
      }
    }
    dx_old = dx;
    dx = std::log(next / beta);
    if (next == beta || !std::isfinite(next)) break;  // the bracket cannot shrink any further
    beta = next;
  }
  // p holds the weights at the last beta evaluated, which is the final one
  // unless the loop ran out of steps
  if (!converged) k.gauss_moments(d, m, beta, mom, p);
  const double inv = 1.0 / mom[0];
  for (std::size_t j = 0; j < m; ++j) p[j] *= inv;
  return converged;
}

// The summary line of a perplexity calibration.
inline std::string calibration_summary(std::size_t n, double perplexity, std::size_t n_failed) {
  std::ostringstream msg;
  msg << "perplexity calibration: " << n << " points, perplexity " << perplexity << "; "
      << n_failed << " missed the tolerance";
  return msg.str();
}

// Neighbour positions (columns) of row i in an n x k graph.
inline void graph_row_neighbours(const GraphView& g, std::size_t i, std::vector<std::size_t>& cols) {
  const int* idx = g.idx;
  const std::size_t n = g.n, k = g.k;
  cols.clear();
  if (!g.self_first) {
    for (std::size_t c = 0; c < k; ++c) cols.push_back(c);
    return;
  }
  bool self = false;
  for (std::size_t c = 0; c < k; ++c) {
    if (static_cast<std::size_t>(idx[c * n + i] - g.base) == i) {
      self = true;
    } else {
      cols.push_back(c);
    }
  }
  if (!self && !cols.empty()) cols.erase(cols.begin());
}

// The neighbour entries of a graph (see graph_row_neighbours()) laid out
// as a CSR matrix: ptr and col (0-based neighbour numbers) filled, val sized.
// column[e] is the graph column entry e came from, to read its distance.
inline CsrMatrix graph_pattern(const GraphView& g, std::vector<std::size_t>& column) {
  const std::size_t n = g.n;
  CsrMatrix M;
  M.n = n;
  M.ptr.assign(n + 1, 0);
  column.clear();
  std::vector<std::size_t> cols;
  for (std::size_t i = 0; i < n; ++i) {
    graph_row_neighbours(g, i, cols);
    for (std::size_t c : cols) {
      column.push_back(c);
      M.col.push_back(g.idx[c * n + i] - g.base);
    }
    M.ptr[i + 1] = checked_nnz(column.size());
  }
  M.val.resize(column.size());
  return M;
}

// The number of neighbour entries of a graph (see graph_row_neighbours()).
inline std::size_t graph_entries(const GraphView& g) {
  std::vector<std::size_t> cols;
  std::size_t total = 0;
  for (std::size_t i = 0; i < g.n; ++i) {
    graph_row_neighbours(g, i, cols);
    total += cols.size();
  }
  return total;
}

// The conditional affinities p_{j|i} of each row of a kNN graph (each row
// sums to 1; rows sorted by column), calibrated to the perplexity, into
// arrays of room for graph_entries(g) entries; returns the entries kept
// (fewer only when a row lists a neighbour twice). beta (length n)
// receives the precisions.
template <typename Executor>
std::size_t perplexity_rows_into(const CostKernels& k, const GraphView& g,
                                 const CalibrationSettings& s, double* beta,
                                 std::size_t& n_failed, CsrArrays C, Executor& executor) {
  const double* dist = g.dist;
  const std::size_t n = g.n, kcols = g.k;
  {
    std::vector<std::size_t> cols;
    std::size_t total = 0;
    C.ptr[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      graph_row_neighbours(g, i, cols);
      for (std::size_t c : cols) C.col[total++] = g.idx[c * n + i] - g.base;
      C.ptr[i + 1] = checked_nnz(total);
    }
  }
  std::vector<unsigned char> failed(n, 0);
  double biggest = 0.0;
  for (std::size_t t = 0; t < n * kcols; ++t) biggest = std::max(biggest, dist[t]);
  const double unit = safe_unit(biggest);
  // chunks of 64 rows, each calibrated in order by one thread: a row starts
  // from the previous row's precision, so the chunks must not depend on how
  // the threads split the work
  const std::size_t chunk = 64, nchunks = (n + chunk - 1) / chunk;
  Phase<Executor> phase(executor, "perplexity calibration", n);
  batched_for(
      executor, nchunks, 64,
      [&](std::size_t cb, std::size_t ce) {
        std::vector<double> d;
        std::vector<std::size_t> cols;
        for (std::size_t i = cb * chunk; i < std::min(n, ce * chunk); ++i) {
          graph_row_neighbours(g, i, cols);
          const std::size_t m = cols.size();
          double* p = C.val + C.ptr[i];
          if (m == 0) {
            beta[i] = NAN;
            continue;
          }
          d.resize(m);
          beta[i] = i % chunk != 0 ? beta[i - 1] : NAN;
          double dmin = std::numeric_limits<double>::infinity();
          for (std::size_t t = 0; t < m; ++t) {
            const double x = dist[cols[t] * n + i] * unit;
            d[t] = x * x;
            dmin = std::min(dmin, d[t]);
          }
          for (std::size_t t = 0; t < m; ++t) d[t] -= dmin;
          if (!calibrate_perplexity_row(k, d.data(), m, s, beta[i], p)) failed[i] = 1;
        }
      },
      [&](std::size_t done) { phase.set(std::min(n, done * chunk)); }, 1);
  n_failed = 0;
  for (unsigned char f : failed) n_failed += f;
  for (std::size_t i = 0; i < n; ++i) beta[i] = unscale_beta(beta[i], unit);
  phase.finish(calibration_summary(n, s.perplexity, n_failed));
  return sort_rows(n, C, false);
}

// perplexity_rows_into() as a matrix of its own.
template <typename Executor>
CsrMatrix perplexity_rows(const CostKernels& k, const GraphView& g,
                          const CalibrationSettings& s, double* beta,
                          std::size_t& n_failed, Executor& executor) {
  CsrMatrix C;
  C.n = g.n;
  const std::size_t room = graph_entries(g);
  C.ptr.resize(g.n + 1);
  C.col.resize(room);
  C.val.resize(room);
  const std::size_t nnz = perplexity_rows_into(
      k, g, s, beta, n_failed, CsrArrays{C.ptr.data(), C.col.data(), C.val.data()}, executor);
  C.col.resize(nnz);
  C.val.resize(nnz);
  return C;
}

// The symmetric P of conditional rows (perplexity_rows()): (p_{j|i} +
// p_{i|j}) scaled to sum 1, into the arrays of alloc(nnz) (see
// symmetrise_into()).
template <typename Executor, typename Alloc>
void symmetric_perplexity_into(const SparseRows& C, Alloc alloc, Executor& executor) {
  std::size_t nnz = 0;
  double* val = nullptr;
  symmetrise_into(
      C, [](double x, double y) { return x + y; },
      [&](std::size_t m) {
        const CsrArrays out = alloc(m);
        nnz = m;
        val = out.val;
        return out;
      },
      executor);
  scale_to_sum_one(val, nnz);
}

namespace detail {

// The rows of X (n x D, column-major) centred on the column means,
// row-major, times `unit`, and their squared norms: accurate distances from
// dot products.
inline void centred_rows(const double* X, std::size_t n, std::size_t D, double unit,
                         std::vector<double>& Xr, std::vector<double>& norms) {
  Xr.assign(n * D, 0.0);
  norms.assign(n, 0.0);
  for (std::size_t c = 0; c < D; ++c) {
    double mean = 0.0;
    for (std::size_t i = 0; i < n; ++i) mean += X[c * n + i] * unit;
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) Xr[i * D + c] = X[c * n + i] * unit - mean;
  }
  for (std::size_t i = 0; i < n; ++i) {
    double t = 0.0;
    for (std::size_t c = 0; c < D; ++c) t += Xr[i * D + c] * Xr[i * D + c];
    norms[i] = t;
  }
}

// The conditional probabilities of every row against all others into
// val[i m, (i + 1) m), m = n - 1, and the precisions into beta (in the
// units of the centred rows), in tasks of 64 rows: a row starts from the
// previous row's precision within its task, so the result does not depend
// on the number of threads. Marks the rows that missed the tolerance.
template <typename Executor>
void calibrate_all_rows(const CostKernels& k, const std::vector<double>& Xr, const std::vector<double>& norms,
                        std::size_t n, std::size_t D, const CalibrationSettings& s, double* beta, double* val,
                        std::vector<unsigned char>& failed, Executor& executor) {
  const std::size_t m = n - 1;
  failed.assign(n, 0);
  const std::size_t rows_per_task = 64;
  const std::size_t ntasks = (n + rows_per_task - 1) / rows_per_task;
  Phase<Executor> phase(executor, "perplexity calibration", n);
  batched_for(
      executor, ntasks, std::max<std::size_t>(2, 4000000 / (n * rows_per_task + 1)),
      [&](std::size_t b, std::size_t e) {
        std::vector<double> dist(rows_per_task * n), d(m);
        for (std::size_t t = b; t < e; ++t) {
          const std::size_t r0 = t * rows_per_task;
          const std::size_t r1 = std::min(n, r0 + rows_per_task);
          k.sqdist_rows(Xr.data(), n, D, norms.data(), r0, r1, dist.data());
          for (std::size_t i = r0; i < r1; ++i) {
            const double* row = dist.data() + (i - r0) * n;
            // the row without its diagonal, shifted to a minimum of 0 (the
            // entropy does not depend on the shift; exp() does not overflow)
            double dmin = std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < i; ++j) dmin = std::min(dmin, row[j]);
            for (std::size_t j = i + 1; j < n; ++j) dmin = std::min(dmin, row[j]);
            for (std::size_t j = 0; j < i; ++j) d[j] = row[j] - dmin;
            for (std::size_t j = i + 1; j < n; ++j) d[j - 1] = row[j] - dmin;
            beta[i] = i > r0 ? beta[i - 1] : NAN;
            if (!calibrate_perplexity_row(k, d.data(), m, s, beta[i], val + i * m)) failed[i] = 1;
          }
        }
      },
      [&](std::size_t done) { phase.set(std::min(n, done * rows_per_task)); }, 1);
  std::size_t n_failed = 0;
  for (unsigned char f : failed) n_failed += f;
  phase.finish(calibration_summary(n, s.perplexity, n_failed));
}

// P = (C + C^T) / (2n) in place over the all-pairs rows val (entry (i, j)
// of row i at i m + j - (j > i)), by pairs of 64-row blocks I <= J.
template <typename Executor>
void symmetrise_all_pairs(double* val, std::size_t n, Executor& executor) {
  const std::size_t m = n - 1;
  const std::size_t B = 64;
  const std::size_t nb = (n + B - 1) / B;
  const double scale = 0.5 / static_cast<double>(n);
  executor.parallel_for(
      0, nb,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t I = b; I < e; ++I) {
          const std::size_t i1 = std::min(n, (I + 1) * B);
          for (std::size_t J = I; J < nb; ++J) {
            const std::size_t j1 = std::min(n, (J + 1) * B);
            for (std::size_t i = I * B; i < i1; ++i) {
              for (std::size_t j = (I == J ? i + 1 : J * B); j < j1; ++j) {
                double& ij = val[i * m + j - 1];  // (i, j), j > i
                double& ji = val[j * m + i];      // (j, i), i < j
                const double v = (ij + ji) * scale;
                ij = v;
                ji = v;
              }
            }
          }
        }
      },
      1);
}

// The column numbers of the all-pairs rows and the CSR row pointers, the
// entries that underflowed to 0 dropped (only then are the rows moved
// left). Returns the number of entries kept.
template <typename Executor>
std::size_t compact_all_pairs(std::size_t n, int* ptr, int* col, double* val, Executor& executor) {
  const std::size_t m = n - 1;
  std::vector<std::size_t> kept(n, 0);
  executor.parallel_for(
      0, n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          int* c = col + i * m;
          const double* v = val + i * m;
          std::size_t z = 0;
          for (std::size_t j = 0; j < i; ++j) {
            c[j] = static_cast<int>(j);
            z += v[j] == 0.0;
          }
          for (std::size_t j = i + 1; j < n; ++j) {
            c[j - 1] = static_cast<int>(j);
            z += v[j - 1] == 0.0;
          }
          kept[i] = m - z;
        }
      },
      64);
  std::size_t out = 0;
  ptr[0] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (kept[i] == m) {
      if (out != i * m) {
        std::copy(col + i * m, col + (i + 1) * m, col + out);
        std::copy(val + i * m, val + (i + 1) * m, val + out);
      }
      out += m;
    } else {
      for (std::size_t e = i * m; e < (i + 1) * m; ++e) {
        if (val[e] != 0.0) {
          col[out] = col[e];
          val[out] = val[e];
          ++out;
        }
      }
    }
    ptr[i + 1] = static_cast<int>(out);
  }
  return out;
}

}  // namespace detail

// Perplexity-calibrated P over all pairs of the rows of X (n x D,
// column-major), written straight into the caller's CSR arrays (for a
// symmetric matrix also its CSC form, as R's dgCMatrix wants): ptr has n + 1
// entries, col and val n (n - 1), room for every off-diagonal entry. Row i
// takes val[i (n - 1), (i + 1) (n - 1)): first its conditional
// probabilities, calibrated in place, then the symmetrised values, so no
// other n x n buffer is ever allocated. Entries that underflow to 0 are
// dropped at the end, moving the rows left. Returns the number of entries
// kept; `n_failed` counts the rows that missed the tolerance.
template <typename Executor>
std::size_t perplexity_all_pairs(const CostKernels& k, const double* X, std::size_t n,
                                 std::size_t D, const CalibrationSettings& s, double* beta,
                                 int* ptr, int* col, double* val, std::size_t& n_failed,
                                 Executor& executor) {
  checked_nnz(n * (n - 1));
  // (data of extreme magnitude are scaled by a power of two, see safe_unit())
  double biggest = 0.0;
  for (std::size_t t = 0; t < n * D; ++t) biggest = std::max(biggest, std::fabs(X[t]));
  const double unit = safe_unit(biggest);
  std::vector<double> Xr, norms;
  detail::centred_rows(X, n, D, unit, Xr, norms);
  std::vector<unsigned char> failed;
  detail::calibrate_all_rows(k, Xr, norms, n, D, s, beta, val, failed, executor);
  n_failed = 0;
  for (unsigned char f : failed) n_failed += f;
  for (std::size_t i = 0; i < n; ++i) beta[i] = unscale_beta(beta[i], unit);
  detail::symmetrise_all_pairs(val, n, executor);
  return detail::compact_all_pairs(n, ptr, col, val, executor);
}

struct UmapSettings {
  double local_connectivity = 1.0;
  double bandwidth = 1.0;
  double set_op_mix_ratio = 1.0;
  double tol = 1e-5;
  int max_steps = 64;
  double min_scale = 1e-3;
};

namespace detail {

// The mean of count values x[0], x[stride], ...; means of values near the
// double limit are taken of scaled values (so that their sum stays finite).
inline double scaled_mean(const double* x, std::size_t count, std::size_t stride) {
  double sum = 0.0;
  for (std::size_t t = 0; t < count; ++t) sum += x[t * stride];
  if (std::isfinite(sum)) return sum / static_cast<double>(count);
  sum = 0.0;
  for (std::size_t t = 0; t < count; ++t) sum += x[t * stride] * 0x1p-64;
  return sum / static_cast<double>(count) * 0x1p64;
}

// UMAP's rho of a row: the distance to its local_connectivity-th nearest
// neighbour at a non-zero distance (interpolated between two neighbours
// for a fractional local_connectivity), from the row's non-zero distances
// `nz` in increasing order; the farthest of them when there are fewer.
inline double umap_rho(const std::vector<double>& nz, double local_connectivity) {
  double r = 0.0;
  const double lc = local_connectivity;
  if (!nz.empty() && static_cast<double>(nz.size()) >= lc) {
    const std::size_t index = static_cast<std::size_t>(std::floor(lc));
    const double frac = lc - static_cast<double>(index);
    if (index > 0) {
      r = nz[index - 1];
      if (frac > 1e-5 && index < nz.size()) r += frac * (nz[index] - nz[index - 1]);
    } else {
      r = frac * nz[0];
    }
  } else if (!nz.empty()) {
    r = nz.back();
  }
  return r;
}

// UMAP's sigma of a row (distances d[0, m), rho r): the scale at which the
// memberships sum to `target`, by bisection from 1 as UMAP does, unless the
// row's distances are far from 1 (`row_mean`): then from the power of two
// nearest their mean, so that the max_steps halvings or doublings are
// spent where the answer is (the result is then scale-free). Not floored.
inline double umap_sigma(const double* d, std::size_t m, double r, double row_mean, double target,
                         const UmapSettings& s) {
  double lo = 0.0, hi = std::numeric_limits<double>::infinity(), mid = 1.0;
  if (row_mean > 0.0 && (row_mean > 0x1p16 || row_mean < 0x1p-16)) {
    mid = power_of_two_below(row_mean);
  }
  for (int step = 0; step < s.max_steps; ++step) {
    double psum = 0.0;
    for (std::size_t t = 0; t < m; ++t) {
      const double x = d[t] - r;
      psum += x > 0.0 ? std::exp(-x / mid) : 1.0;
    }
    if (std::fabs(psum - target) < s.tol) break;
    if (psum > target) {
      hi = mid;
      mid = 0.5 * (lo + hi);
    } else {
      lo = mid;
      mid = std::isinf(hi) ? mid * 2.0 : 0.5 * (lo + hi);
    }
  }
  return mid;
}

}  // namespace detail

// UMAP's directed memberships v_{j|i} of each row of a kNN graph (rows
// sorted by column); sigma and rho (length n) receive the per-point scales.
template <typename Executor>
CsrMatrix umap_memberships(const GraphView& g, const UmapSettings& s, double* sigma,
                           double* rho, Executor& executor) {
  const double* dist = g.dist;
  const std::size_t n = g.n, kcols = g.k;
  const double mean_all = detail::scaled_mean(dist, n * kcols, 1);
  const double target = std::log2(static_cast<double>(kcols)) * s.bandwidth;

  std::vector<std::size_t> column;
  CsrMatrix V = graph_pattern(g, column);
  Phase<Executor> phase(executor, "UMAP memberships", n);
  batched_for(
      executor, n, 8192,
      [&](std::size_t b, std::size_t e) {
        std::vector<double> d, nz;
        for (std::size_t i = b; i < e; ++i) {
          const std::size_t* cols = column.data() + V.ptr[i];
          const std::size_t m = static_cast<std::size_t>(V.ptr[i + 1] - V.ptr[i]);
          d.resize(m);
          nz.clear();
          const double row_mean = detail::scaled_mean(dist + i, kcols, n);
          for (std::size_t t = 0; t < m; ++t) {
            d[t] = dist[cols[t] * n + i];
            if (d[t] > 0.0) nz.push_back(d[t]);
          }
          std::sort(nz.begin(), nz.end());
          const double r = detail::umap_rho(nz, s.local_connectivity);
          // (UMAP's floor of sigma: min_scale times the row's mean
          // distance, or the whole graph's when rho is 0)
          const double floor_scale = s.min_scale * (r > 0.0 ? row_mean : mean_all);
          const double mid = std::max(detail::umap_sigma(d.data(), m, r, row_mean, target, s), floor_scale);
          sigma[i] = mid;
          rho[i] = r;
          for (std::size_t t = 0; t < m; ++t) {
            const double x = d[t] - r;
            V.val[static_cast<std::size_t>(V.ptr[i]) + t] = x > 0.0 && mid > 0.0 ? std::exp(-x / mid) : 1.0;
          }
        }
      },
      [&](std::size_t done) { phase.set(done); }, 64);
  phase.finish("UMAP memberships: " + std::to_string(n) + " points, " + std::to_string(kcols) +
               " neighbours each");
  sort_rows(V, true);
  return V;
}

// UMAP memberships over a kNN graph, symmetrised by the fuzzy union (and
// intersection, by set_op_mix_ratio); sigma and rho (length n) receive the
// per-point scales.
template <typename Executor>
CsrMatrix umap_graph(const GraphView& g, const UmapSettings& s, double* sigma, double* rho,
                     Executor& executor) {
  const CsrMatrix V = umap_memberships(g, s, sigma, rho, executor);
  const double mix = s.set_op_mix_ratio;
  return symmetrise(
      V.rows(),
      [mix](double x, double y) {
        const double prod = x * y;
        return mix * (x + y - prod) + (1.0 - mix) * prod;
      },
      executor);
}

}  // namespace lsnn

#endif  // LSNN_AFFINITIES_H
