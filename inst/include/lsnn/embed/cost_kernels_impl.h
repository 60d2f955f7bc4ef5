// Bodies of the CostKernels (cost_kernels.h). Like kernels_impl.h this is
// not a normal header: a translation unit defines LSNN_KERNEL_NAMESPACE (and
// for the AVX2 build LSNN_KERNEL_AVX2 and the target pragma) and includes it
// once, so each function is compiled for one instruction set only.
//
// All arithmetic is in double precision. The all-pairs loop runs over four
// columns j at a time with 32-byte GCC/Clang vectors (one AVX register, or
// two SSE2 registers in the baseline build) and has its own vector exp and
// log (relative error about 1e-16 over the ranges used here), as the
// compiler does not vectorise std::exp / std::log.
#ifndef LSNN_KERNEL_NAMESPACE
#error "define LSNN_KERNEL_NAMESPACE before including lsnn/cost_kernels_impl.h"
#endif

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <new>
#include <type_traits>

#include "cost_kernels.h"

namespace lsnn {
namespace LSNN_KERNEL_NAMESPACE {
namespace costk {

typedef double d4 __attribute__((vector_size(32)));
typedef std::int64_t l4 __attribute__((vector_size(32)));

// Scratch memory for one kernel call. A type of this namespace rather than
// std::vector: the AVX2 build would compile std::vector's members for AVX2,
// and the linker may then use that copy from the baseline code as well.
struct Scratch {
  double* p = nullptr;
  explicit Scratch(std::size_t n) {
    if (n > 0) {
      p = static_cast<double*>(std::malloc(n * sizeof(double)));
      if (p == nullptr) throw std::bad_alloc();
    }
  }
  ~Scratch() { std::free(p); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

inline d4 splat(double x) { return d4{x, x, x, x}; }
inline d4 load(const double* p) {
  d4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(double* p, d4 v) { std::memcpy(p, &v, sizeof(v)); }
inline l4 bits(d4 v) {
  l4 r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}
inline d4 from_bits(l4 v) {
  d4 r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}
template <typename M>
inline l4 as_mask(M m) {
  l4 r;
  static_assert(sizeof(m) == sizeof(r), "mask width");
  std::memcpy(&r, &m, sizeof(r));
  return r;
}
// mask lanes are all ones or all zeros
inline d4 select(l4 mask, d4 a, d4 b) {
  return from_bits((mask & bits(a)) | (~mask & bits(b)));
}
inline d4 keep(l4 mask, d4 a) { return from_bits(mask & bits(a)); }
inline double hsum(d4 v) { return (v[0] + v[2]) + (v[1] + v[3]); }

const double kLn2Hi = 6.93147180369123816490e-01;
const double kLn2Lo = 1.90821492927058770002e-10;
const double kMagic = 6755399441055744.0;  // 1.5 * 2^52: rounds to integers

// exp(x) for x in [-708, 709]; below -708 the result is 0, above 709 it is
// exp(709). Range reduction x = k ln2 + r, |r| <= ln2 / 2, then the Taylor
// polynomial of degree 12 (truncation below 2e-16).
inline d4 vexp(d4 x) {
  const l4 under = as_mask(x < splat(-708.0));
  x = select(as_mask(x > splat(709.0)), splat(709.0), x);
  x = select(under, splat(-708.0), x);
  const d4 magic = splat(kMagic);
  const d4 t = x * splat(1.4426950408889634) + magic;
  const d4 k = t - magic;
  d4 r = x - k * splat(kLn2Hi);
  r = r - k * splat(kLn2Lo);
  d4 p = splat(1.0 / 479001600.0);
  p = p * r + splat(1.0 / 39916800.0);
  p = p * r + splat(1.0 / 3628800.0);
  p = p * r + splat(1.0 / 362880.0);
  p = p * r + splat(1.0 / 40320.0);
  p = p * r + splat(1.0 / 5040.0);
  p = p * r + splat(1.0 / 720.0);
  p = p * r + splat(1.0 / 120.0);
  p = p * r + splat(1.0 / 24.0);
  p = p * r + splat(1.0 / 6.0);
  p = p * r + splat(0.5);
  p = p * r + splat(1.0);
  p = p * r + splat(1.0);
  const l4 ki = bits(t) - bits(magic);
  const d4 scale = from_bits((ki + 1023) << 52);
  return keep(~under, p * scale);
}

// log(x) for normal x > 0 (and -inf for x <= 0): x = 2^e m with m in
// [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172,
// by its series to s^21.
inline d4 vlog(d4 x) {
  const l4 nonpos = as_mask(x <= splat(0.0));
  const l4 xb = bits(x);
  l4 e = (xb >> 52) - 1023;
  d4 m = from_bits((xb & 0x000FFFFFFFFFFFFFLL) | 0x3FF0000000000000LL);
  const l4 big = as_mask(m > splat(1.4142135623730951));
  m = select(big, m * splat(0.5), m);
  e = e - big;  // big lanes are -1
  const d4 magic = splat(kMagic);
  const d4 ed = from_bits(e + bits(magic)) - magic;
  const d4 f = m - splat(1.0);
  const d4 s = f / (splat(2.0) + f);
  const d4 z = s * s;
  d4 q = splat(1.0 / 21.0);
  q = q * z + splat(1.0 / 19.0);
  q = q * z + splat(1.0 / 17.0);
  q = q * z + splat(1.0 / 15.0);
  q = q * z + splat(1.0 / 13.0);
  q = q * z + splat(1.0 / 11.0);
  q = q * z + splat(1.0 / 9.0);
  q = q * z + splat(1.0 / 7.0);
  q = q * z + splat(1.0 / 5.0);
  q = q * z + splat(1.0 / 3.0);
  q = q * z + splat(1.0);
  const d4 logm = splat(2.0) * s * q;
  const d4 r = ed * splat(kLn2Hi) + (ed * splat(kLn2Lo) + logm);
  return select(nonpos, splat(-HUGE_VAL), r);
}

// The models' arithmetic on four lanes (cost_models.h), and the models
// compiled for this build's instruction set.
struct VecMath {
  typedef d4 V;
  static V splat(double x) { return costk::splat(x); }
  static V log(V x) { return vlog(x); }
  static V exp(V x) { return vexp(x); }
  static V pow(V x, V y) { return vexp(y * vlog(x)); }
  static V where_positive(V x, V v) { return keep(as_mask(x > costk::splat(0.0)), v); }
};

#include "cost_model_terms.h"

// Per-coordinate vector accumulators live in plain double buffers (no
// over-aligned heap storage), moved in and out with memcpy: on the stack for
// a fixed number of coordinates DC, else on the heap, 32-byte aligned (the
// AVX2 build has been seen to assume it).
template <int DC>
struct LaneBuffers {
  static constexpr std::size_t kStack = DC > 0 ? static_cast<std::size_t>(DC) : 1;
  alignas(32) double acc_stack[4 * kStack];
  alignas(32) double diff_stack[4 * kStack];
  double yi_stack[kStack];
  Scratch heap;
  double* acc = acc_stack;
  double* diff = diff_stack;
  double* yi = yi_stack;
  explicit LaneBuffers(std::size_t d) : heap(DC == 0 ? 9 * d + 4 : 0) {
    if (DC == 0) {
      std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(heap.p);
      addr = (addr + 31) & ~static_cast<std::uintptr_t>(31);
      acc = reinterpret_cast<double*>(addr);
      diff = acc + 4 * d;
      yi = diff + 4 * d;
    }
  }
  LaneBuffers(const LaneBuffers&) = delete;
  LaneBuffers& operator=(const LaneBuffers&) = delete;
};

// f(fixed) with fixed = std::integral_constant<int, d> for d = 1, 2, 3 and
// 0 (any number, read at run time).
template <typename F>
inline void with_dimension(std::size_t d, F&& f) {
  switch (d) {
    case 1:
      f(std::integral_constant<int, 1>());
      break;
    case 2:
      f(std::integral_constant<int, 2>());
      break;
    case 3:
      f(std::integral_constant<int, 3>());
      break;
    default:
      f(std::integral_constant<int, 0>());
  }
}

// The all-pairs tile: rows [i0, i1) against columns [j0, j1), four columns
// at a time. The energy term goes to the normaliser (t-SNE's Z) or, when
// Cost, to the per-point cost.
template <bool Cost, int DC, typename Model>
void pair_tile_t(const Model& model, const PairProblem& prob, std::size_t i0, std::size_t i1,
                 std::size_t j0, std::size_t j1, bool diagonal, const PairSums& out) {
  const std::size_t d = DC > 0 ? static_cast<std::size_t>(DC) : prob.d;
  const std::size_t stride = prob.stride;
  const std::size_t n = prob.n;
  const double* Y = prob.Y;
  // local copies: the stores below cannot then alias the pointers
  double* const rep = out.repulsion;
  double* const norm = out.normaliser;
  double* const cost = out.cost;
  constexpr bool normalised = Model::kNormalised;
  LaneBuffers<DC> buf(d);
  double* const accp = buf.acc;
  double* const diffp = buf.diff;
  double* const yi = buf.yi;
  const d4 lane = {0.0, 1.0, 2.0, 3.0};

  for (std::size_t i = i0; i < i1; ++i) {
    for (std::size_t c = 0; c < d; ++c) {
      yi[c] = Y[c * stride + i];
      store(accp + 4 * c, splat(0.0));
    }
    d4 acc_z = splat(0.0), acc_e = splat(0.0);
    std::size_t jstart = j0;
    if (diagonal) jstart = (i + 1) & ~static_cast<std::size_t>(3);
    for (std::size_t j = jstart; j < j1; j += 4) {
      d4 s = splat(0.0);
      for (std::size_t c = 0; c < d; ++c) {
        const d4 t = splat(yi[c]) - load(Y + c * stride + j);
        store(diffp + 4 * c, t);
        s += t * t;
      }
      // lanes outside (j > i in a diagonal tile, j < n) are masked off
      const bool edge = (diagonal && j <= i) || j + 4 > n;
      l4 valid = {-1, -1, -1, -1};
      if (edge) {
        const d4 jl = splat(static_cast<double>(j)) + lane;
        valid = as_mask(jl < splat(static_cast<double>(n)));
        if (diagonal) valid &= as_mask(jl > splat(static_cast<double>(i)));
        s = select(valid, s, splat(1.0));
      }
      d4 cf, e = splat(0.0);
      if constexpr (normalised || Cost) {
        model.pair_terms(s, cf, e);
      } else {
        cf = model.repulsion(s);
      }
      if (edge) {
        cf = keep(valid, cf);
        if constexpr (normalised || Cost) e = keep(valid, e);
      }
      for (std::size_t c = 0; c < d; ++c) {
        const d4 f = cf * load(diffp + 4 * c);
        store(accp + 4 * c, load(accp + 4 * c) + f);
        double* fj = rep + c * stride + j;
        store(fj, load(fj) - f);
      }
      if constexpr (normalised) {
        acc_z += e;
        store(norm + j, load(norm + j) + e);
      } else if constexpr (Cost) {
        acc_e += e;
        store(cost + j, load(cost + j) + e);
      }
    }
    for (std::size_t c = 0; c < d; ++c) rep[c * stride + i] += hsum(load(accp + 4 * c));
    if constexpr (normalised) norm[i] += hsum(acc_z);
    if constexpr (Cost && !normalised) cost[i] += hsum(acc_e);
  }
}

inline void pair_tile(const PairProblem& prob, std::size_t i0, std::size_t i1,
                      std::size_t j0, std::size_t j1, bool diagonal,
                      bool want_cost, const PairSums& out) {
  costk::with_cost_model<VecMath>(prob.params, [&](const auto& model) {
    with_dimension(prob.d, [&](auto fixed) {
      constexpr int DC = decltype(fixed)::value;
      // t-SNE's cost needs nothing from the pairs beyond Z
      if (want_cost && !std::decay_t<decltype(model)>::kNormalised) {
        pair_tile_t<true, DC>(model, prob, i0, i1, j0, j1, diagonal, out);
      } else {
        pair_tile_t<false, DC>(model, prob, i0, i1, j0, j1, diagonal, out);
      }
    });
  });
}

template <typename Value>
const Value* sparse_values(const PairProblem& prob);
template <>
inline const double* sparse_values<double>(const PairProblem& prob) { return prob.val; }
template <>
inline const float* sparse_values<float>(const PairProblem& prob) { return prob.val_single; }
inline d4 load_values(const double* p) { return load(p); }
inline d4 load_values(const float* p) {
  return d4{static_cast<double>(p[0]), static_cast<double>(p[1]), static_cast<double>(p[2]),
            static_cast<double>(p[3])};
}

// The prefetches of sparse_rows_t() along row i of P (its columns `cols`
// and values `vals` at entry `at` of P's arrays), issued at each step of
// four entries: they change no value, only when memory is read.
template <bool Cost, typename Value>
struct SparseRowPrefetch {
  // The points of the entries kAhead places on are fetched now: P read as
  // one stream names them long before they are needed, and at 1e6 points
  // their coordinates are mostly not in the nearer caches (bench/CHANGELOG.md,
  // "How a large P is read"). Rows read in another order (row_start) are
  // left to the prefetch of the row after next.
  static constexpr int kAhead = 32;
  const double* Y;
  std::size_t stride, d, at, stream_entries;
  const int* cols;
  const Value* vals;
  std::uintptr_t next, next_vals, next_cols;

  __attribute__((always_inline)) SparseRowPrefetch(const PairProblem& prob, std::size_t i, std::size_t r1,
                                                   std::size_t d_, std::size_t at_, const int* cols_,
                                                   const Value* vals_)
      : Y(prob.Y), stride(prob.stride), d(d_), at(at_),
        stream_entries(prob.row_start == nullptr ? static_cast<std::size_t>(prob.ptr[prob.n]) : 0),
        cols(cols_), vals(vals_) {
    // Rows read in place in another order (row_start) start at a new place
    // each row, where the hardware's stream prefetch has to start over: the
    // columns and values of the row after next are fetched alongside this
    // row's. (Integer arithmetic: the address may lie past the arrays.)
    next = prob.row_start != nullptr && i + 2 < r1 ? static_cast<std::uintptr_t>(prob.row_start[i + 2]) : 0;
    next_vals = next != 0 ? reinterpret_cast<std::uintptr_t>(sparse_values<Value>(prob)) + sizeof(Value) * next : 0;
    next_cols = next != 0 ? reinterpret_cast<std::uintptr_t>(prob.col) + 4 * next : 0;
  }

  // Before the step at entry e of the row.
  __attribute__((always_inline)) void before_step(int e) const {
    if (next != 0) {
      __builtin_prefetch(
          reinterpret_cast<const void*>(next_vals + sizeof(Value) * static_cast<std::uintptr_t>(e)), 0, 3);
      if ((e & 15) == 0) {
        __builtin_prefetch(reinterpret_cast<const void*>(next_cols + 4 * static_cast<std::uintptr_t>(e)), 0, 3);
      }
    }
    if constexpr (Cost) {
      // The cost takes a logarithm per entry, long enough for the entries
      // a group of rows ahead (the in-pass check of costs.h reads them
      // next) to arrive from memory meanwhile. (Integer arithmetic: the
      // address may lie past the arrays; a prefetch never faults.)
      constexpr std::uintptr_t ahead = 8192;
      __builtin_prefetch(reinterpret_cast<const void*>(
                             reinterpret_cast<std::uintptr_t>(vals + e) + sizeof(Value) * ahead), 0, 2);
      __builtin_prefetch(reinterpret_cast<const void*>(
                             reinterpret_cast<std::uintptr_t>(cols + e) + 4 * ahead), 0, 2);
    }
    if (at + static_cast<std::size_t>(e + kAhead + 4) <= stream_entries) {
      for (int u = 0; u < 4; ++u) {
        const std::size_t j = static_cast<std::size_t>(cols[e + kAhead + u]);
        for (std::size_t c = 0; c < d; ++c) __builtin_prefetch(Y + c * stride + j, 0, 3);
      }
    }
  }
};

// The stored entries of P, one row at a time, four entries per step (the
// coordinates of the four columns gathered into a vector). Each row's
// entries come in whole groups of four (costs.h pads them with zeros, which
// are masked off) and hold no diagonal entry. Value: the type P's values are
// stored in (the arithmetic is in double precision either way).
template <bool Cost, int DC, typename Value, typename Model>
void sparse_rows_t(const Model& model, const PairProblem& prob, std::size_t r0, std::size_t r1,
                   const SparseSums& out) {
  const std::size_t n = prob.n, stride = prob.stride;
  const std::size_t d = DC > 0 ? static_cast<std::size_t>(DC) : prob.d;
  const double* Y = prob.Y;
  const d4 scale = splat(prob.p_scale), zero = splat(0.0);
  LaneBuffers<DC> buf(d);
  double* const accp = buf.acc;
  double* const yi = buf.yi;
  for (std::size_t i = r0; i < r1; ++i) {
    for (std::size_t c = 0; c < d; ++c) {
      yi[c] = Y[c * stride + i];
      store(accp + 4 * c, zero);
    }
    d4 acc_cost = zero, acc_sum = zero;
    // four entries: columns jl, affinities p0 (0 in lanes off the row)
    auto step = [&](const std::size_t* jl, d4 p0) __attribute__((always_inline)) {
      const l4 live = as_mask(p0 > zero);
      d4 s = zero;
      for (std::size_t c = 0; c < d; ++c) {
        const double* yc = Y + c * stride;
        const d4 t = splat(yi[c]) - d4{yc[jl[0]], yc[jl[1]], yc[jl[2]], yc[jl[3]]};
        s += t * t;
      }
      // the gradient takes the exaggerated P, the cost P itself
      const d4 coef = keep(live, model.sparse_coefficient(s, p0 * scale));
      if constexpr (Model::kNormalised) acc_sum += p0;
      if constexpr (Cost) acc_cost += keep(live, model.sparse_cost(s, p0));
      for (std::size_t c = 0; c < d; ++c) {
        const double* yc = Y + c * stride;
        const d4 t = splat(yi[c]) - d4{yc[jl[0]], yc[jl[1]], yc[jl[2]], yc[jl[3]]};
        store(accp + 4 * c, load(accp + 4 * c) + coef * t);
      }
    };
    const int e0 = prob.ptr[i], e1 = prob.ptr[i + 1];
    const int len = e1 - e0, whole = len & ~3;
    const std::size_t at = static_cast<std::size_t>(prob.row_start != nullptr ? prob.row_start[i] : e0);
    const int* const cols = prob.col + at;
    const Value* const vals = sparse_values<Value>(prob) + at;
    const SparseRowPrefetch<Cost, Value> prefetch(prob, i, r1, d, at, cols, vals);
    for (int e = 0; e < whole; e += 4) {
      prefetch.before_step(e);
      const std::size_t jl[4] = {static_cast<std::size_t>(cols[e]),
                                 static_cast<std::size_t>(cols[e + 1]),
                                 static_cast<std::size_t>(cols[e + 2]),
                                 static_cast<std::size_t>(cols[e + 3])};
      step(jl, load_values(vals + e));
    }
    if (whole < len) {
      // the end of a row that is not padded (P read in place): the missing
      // lanes hold what padding would, the row itself at affinity 0
      std::size_t jl[4] = {i, i, i, i};
      double pv[4] = {0.0, 0.0, 0.0, 0.0};
      for (int u = 0; whole + u < len; ++u) {
        jl[u] = static_cast<std::size_t>(cols[whole + u]);
        pv[u] = vals[whole + u];
      }
      step(jl, load(pv));
    }
    for (std::size_t c = 0; c < d; ++c) out.attraction[c * n + i] = hsum(load(accp + 4 * c));
    out.cost[i] = Cost ? hsum(acc_cost) : 0.0;
    out.row_sum[i] = hsum(acc_sum);
  }
}

inline void sparse_rows(const PairProblem& prob, std::size_t r0, std::size_t r1,
                        bool want_cost, const SparseSums& out) {
  costk::with_cost_model<VecMath>(prob.params, [&](const auto& model) {
    with_dimension(prob.d, [&](auto fixed) {
      constexpr int DC = decltype(fixed)::value;
      if (prob.val_single != nullptr) {
        if (want_cost) {
          sparse_rows_t<true, DC, float>(model, prob, r0, r1, out);
        } else {
          sparse_rows_t<false, DC, float>(model, prob, r0, r1, out);
        }
      } else if (want_cost) {
        sparse_rows_t<true, DC, double>(model, prob, r0, r1, out);
      } else {
        sparse_rows_t<false, DC, double>(model, prob, r0, r1, out);
      }
    });
  });
}

// The near field of the grid approximation (farfield/near_field.h): one point
// (x, y) against the points [lo, hi) of coordinate arrays X and Yc (Yc
// null in 1-D), four at a time. out[0], out[1] += sum c (x - x_j),
// sum c (y - y_j); out[2] += sum of the energy term (t-SNE: its Z; others
// only when Cost). Pairs at distance 0 push nowhere (a singular c is masked
// there: it may be infinite with eps = 0).
template <bool Cost, typename Model>
void near_run_t(const Model& model, double x, double y, const double* X, const double* Yc,
                std::size_t lo, std::size_t hi, double* out) {
  constexpr bool energy = Model::kNormalised || Cost;
  const d4 xv = splat(x), yv = splat(y), zero = splat(0.0);
  d4 fx = zero, fy = zero, en = zero;
  for (std::size_t t = lo; t < hi; t += 4) {
    const std::size_t m = std::min<std::size_t>(4, hi - t);
    d4 dx, dy = zero;
    l4 live;
    if (m == 4) {
      dx = xv - load(X + t);
      if (Yc != nullptr) dy = yv - load(Yc + t);
      live = l4{-1, -1, -1, -1};
    } else {
      // the missing lanes sit on the point itself and are masked out
      double bx[4] = {x, x, x, x}, by[4] = {y, y, y, y};
      std::int64_t lm[4] = {0, 0, 0, 0};
      for (std::size_t u = 0; u < m; ++u) {
        bx[u] = X[t + u];
        if (Yc != nullptr) by[u] = Yc[t + u];
        lm[u] = -1;
      }
      dx = xv - load(bx);
      dy = yv - load(by);
      std::memcpy(&live, lm, sizeof(live));
    }
    const d4 s = dx * dx + dy * dy;
    d4 rep, e = zero;
    if constexpr (energy) {
      model.pair_terms(s, rep, e);
    } else {
      rep = model.repulsion(s);
    }
    if constexpr (Model::kSingular) rep = VecMath::where_positive(s, rep);
    const d4 c = keep(live, rep);
    fx += c * dx;
    fy += c * dy;
    if constexpr (energy) en += keep(live, e);
  }
  out[0] += hsum(fx);
  out[1] += hsum(fy);
  out[2] += hsum(en);
}

inline void near_run(const PairProblem& prob, double x, double y, const double* X,
                     const double* Yc, std::size_t lo, std::size_t hi, bool want_cost,
                     double* out) {
  costk::with_cost_model<VecMath>(prob.params, [&](const auto& model) {
    if (want_cost) {
      near_run_t<true>(model, x, y, X, Yc, lo, hi, out);
    } else {
      near_run_t<false>(model, x, y, X, Yc, lo, hi, out);
    }
  });
}

inline void gauss_moments(const double* dd, std::size_t m, double beta,
                          double* out, double* wout) {
  d4 s0 = splat(0.0), s1 = splat(0.0), s2 = splat(0.0);
  const d4 nb = splat(-beta);
  std::size_t j = 0;
  for (; j + 4 <= m; j += 4) {
    const d4 x = load(dd + j);
    const d4 w = vexp(nb * x);
    store(wout + j, w);
    s0 += w;
    const d4 xw = x * w;
    s1 += xw;
    s2 += x * xw;
  }
  double r0 = hsum(s0), r1 = hsum(s1), r2 = hsum(s2);
  if (j < m) {
    double t[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t l = 0; j + l < m; ++l) t[l] = dd[j + l];
    const d4 x = load(t);
    d4 w = vexp(nb * x);
    for (std::size_t l = m - j; l < 4; ++l) w[l] = 0.0;
    for (std::size_t l = 0; j + l < m; ++l) wout[j + l] = w[l];
    r0 += hsum(w);
    r1 += hsum(x * w);
    r2 += hsum(x * x * w);
  }
  out[0] = r0;
  out[1] = r1;
  out[2] = r2;
}

inline void sqdist_rows(const double* X, std::size_t n, std::size_t D,
                        const double* norms, std::size_t r0, std::size_t r1,
                        double* out) {
  typedef Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> RowMajorD;
  const Eigen::Index nr = static_cast<Eigen::Index>(r1 - r0);
  Eigen::Map<const RowMajorD> x(X, static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(D));
  Eigen::Map<RowMajorD> o(out, nr, static_cast<Eigen::Index>(n));
  o.noalias() = x.middleRows(static_cast<Eigen::Index>(r0), nr) * x.transpose();
  for (std::size_t r = r0; r < r1; ++r) {
    double* row = out + (r - r0) * n;
    const double nr2 = norms[r];
    for (std::size_t j = 0; j < n; ++j) {
      const double v = nr2 + norms[j] - 2.0 * row[j];
      row[j] = v > 0.0 ? v : 0.0;
    }
    row[r] = 0.0;
  }
}

// The check of affinities (CostKernels::affinity_rows), eight entries at a
// time. The hash of an entry with pair {a, b} (a < b) and value bits
// (hi, lo), in 32-bit words:
//   x = lo ^ (a K1 + b K2),  y = hi ^ (a K3 + b K4),
//   H = x y + (x 2^32 + y)   (modulo 2^64; x y is exact).
// The product makes H non-linear in the entry, so that differences between
// the above and below sums do not cancel by construction; the added
// concatenation keeps H injective in (x, y) when one factor is 0. It takes
// 32-bit multiplications only, which AVX2 does on eight lanes.
constexpr std::uint32_t kHashK1 = 0x9E3779B9u, kHashK2 = 0x85EBCA6Bu, kHashK3 = 0xC2B2AE35u,
                        kHashK4 = 0x27D4EB2Fu;

inline std::uint64_t hash_words(std::uint64_t x, std::uint64_t y) {
  return x * y + ((x << 32) | y);
}

inline std::uint64_t pair_hash(std::uint32_t a, std::uint32_t b, double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t x = static_cast<std::uint32_t>(bits) ^ (a * kHashK1 + b * kHashK2);
  const std::uint32_t y = static_cast<std::uint32_t>(bits >> 32) ^ (a * kHashK3 + b * kHashK4);
  return hash_words(x, y);
}

typedef std::uint32_t w8 __attribute__((vector_size(32)));
typedef std::int32_t i8 __attribute__((vector_size(32)));
typedef std::uint64_t u4 __attribute__((vector_size(32)));

template <typename To, typename From>
inline To vec_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "vector width");
  To r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}

template <typename V, typename T>
inline V splat_as(T x) {
  V v;
  for (std::size_t k = 0; k < sizeof(V) / sizeof(x); ++k) v[k] = x;
  return v;
}

// The products of the low 32 bits of each 64-bit lane.
inline u4 mul_low_words(u4 a, u4 b) {
#if defined(LSNN_KERNEL_AVX2)
  return vec_cast<u4>(__builtin_ia32_pmuludq256(vec_cast<i8>(a), vec_cast<i8>(b)));
#else
  const u4 low = splat_as<u4>(std::uint64_t{0xFFFFFFFFu});
  return (a & low) * (b & low);
#endif
}

// The state of one row's checks: the last column read, whether any column
// or value so far was bad, and the stored zeros.
struct RowScan {
  int last = -1;
  bool bad = false;
  std::size_t zeros = 0;
  // one entry (column c of n, value v), checked one at a time
  void note(int c, double v, std::uint32_t n) {
    bad |= c <= last || static_cast<std::uint32_t>(c) > n - 1;
    bad |= !(v >= 0.0 && v <= std::numeric_limits<double>::max());
    last = c;
    zeros += v == 0.0;
  }
};

// Entries [e, end) of row i whose pairs are all {j, i} (j < i: `above`
// false) or all {i, j} (j > i): their hash sum. With the pair's other end
// c = i fixed, x's key is j Kj + c Kc, for the K of j's and of c's place.
inline std::uint64_t hash_run(const int* col, const double* val, int e, int end,
                              std::uint32_t i, bool above, std::uint32_t n, RowScan& scan) {
  const std::uint32_t kxj = above ? kHashK2 : kHashK1, kyj = above ? kHashK4 : kHashK3;
  const std::uint32_t cx = i * (above ? kHashK1 : kHashK2), cy = i * (above ? kHashK3 : kHashK4);
  const w8 vkx = splat_as<w8>(kxj), vky = splat_as<w8>(kyj), vcx = splat_as<w8>(cx),
           vcy = splat_as<w8>(cy), top = splat_as<w8>(n - 1);
  const d4 zero = splat(0.0), huge = splat(std::numeric_limits<double>::max());
  const u4 low = splat_as<u4>(std::uint64_t{0xFFFFFFFFu});
  u4 sum = splat_as<u4>(std::uint64_t{0});
  i8 bad_col = splat_as<i8>(0);
  l4 bad_val = splat_as<l4>(std::int64_t{0}), zeros = splat_as<l4>(std::int64_t{0});
  for (; e + 8 <= end; e += 8) {
    i8 j;
    std::memcpy(&j, col + e, sizeof j);
    const d4 v0 = load(val + e), v1 = load(val + e + 4);
    const i8 prev = __builtin_shuffle(j, splat_as<i8>(scan.last), i8{8, 0, 1, 2, 3, 4, 5, 6});
    scan.last = j[7];
    bad_col |= (j <= prev) | (vec_cast<w8>(j) > top);
    bad_val |= as_mask(~((v0 >= zero) & (v0 <= huge))) | as_mask(~((v1 >= zero) & (v1 <= huge)));
    zeros -= as_mask(v0 == zero);
    zeros -= as_mask(v1 == zero);
    const w8 a = vec_cast<w8>(v0), b = vec_cast<w8>(v1);
    const w8 lo = __builtin_shuffle(a, b, w8{0, 2, 4, 6, 8, 10, 12, 14});
    const w8 hi = __builtin_shuffle(a, b, w8{1, 3, 5, 7, 9, 11, 13, 15});
    const w8 uj = vec_cast<w8>(j);
    const u4 x = vec_cast<u4>(lo ^ (uj * vkx + vcx));
    const u4 y = vec_cast<u4>(hi ^ (uj * vky + vcy));
    // even entries in the low words of the lanes, odd ones in the high words
    const u4 xe = x & low, ye = y & low, xo = x >> 32, yo = y >> 32;
    sum += mul_low_words(xe, ye) + ((xe << 32) | ye);
    sum += mul_low_words(xo, yo) + ((xo << 32) | yo);
  }
  std::uint64_t out = (sum[0] + sum[1]) + (sum[2] + sum[3]);
  for (int k = 0; k < 8; ++k) scan.bad |= bad_col[k] != 0;
  for (int k = 0; k < 4; ++k) {
    scan.bad |= bad_val[k] != 0;
    scan.zeros += static_cast<std::size_t>(zeros[k]);
  }
  for (; e < end; ++e) {
    const int c = col[e];
    const double v = val[e];
    scan.note(c, v, n);
    const std::uint32_t j = static_cast<std::uint32_t>(c);
    out += above ? pair_hash(i, j, v) : pair_hash(j, i, v);
  }
  return out;
}

inline bool affinity_rows(const int* ptr, const int* col, const double* val, std::size_t n,
                          std::size_t nnz, std::size_t r0, std::size_t r1, RowSums& sums) {
  for (std::size_t i = r0; i < r1; ++i) {
    const int e0 = ptr[i], e1 = ptr[i + 1];
    if (e0 < 0 || e1 < e0 || static_cast<std::size_t>(e1) > nnz) return false;
    // the row's entries below the diagonal come first (when the row is not
    // sorted the scan says so, whatever the split)
    const int row = static_cast<int>(i);
    int lo = e0, hi = e1;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (col[mid] < row) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    RowScan scan;
    const std::uint32_t ui = static_cast<std::uint32_t>(i), un = static_cast<std::uint32_t>(n);
    sums.below += hash_run(col, val, e0, lo, ui, false, un, scan);
    if (lo < e1 && col[lo] == row) {
      scan.note(row, val[lo], un);
      ++sums.diagonal;
      ++lo;
    }
    sums.above += hash_run(col, val, lo, e1, ui, true, un, scan);
    sums.zeros += scan.zeros;
    if (scan.bad) return false;
  }
  return true;
}

}  // namespace costk

inline const CostKernels& cost_kernels() {
  static const CostKernels table = {
      &costk::pair_tile, &costk::sparse_rows, &costk::near_run, &costk::gauss_moments,
      &costk::sqdist_rows, &costk::affinity_rows,
#if defined(LSNN_KERNEL_AVX2)
      "avx2+fma"
#else
      "generic"
#endif
  };
  return table;
}

}  // namespace LSNN_KERNEL_NAMESPACE
}  // namespace lsnn
