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
// (y_j - y_i); a point's gradient sums the pairs it is first in (its row of
// the set) and those it is second in (the set's reverse lists), each in a
// fixed order, so the result does not depend on the number of threads.
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

#include "distance.h"
#include "parallel.h"
#include "random.h"

namespace lsnn {

// The pairs of one set: row r holds the partners of point first + r,
// partner[r * k + c] (0-based point ids), k per row.
struct PairSet {
  std::size_t first = 0;
  std::size_t rows = 0;
  std::size_t k = 0;
  std::vector<int> partner;
};

enum PairKind { kNear = 0, kMidNear = 1, kFurther = 2, kPairKinds = 3 };

// The losses of the three kinds, as functions of s = |y_i - y_j|^2: the
// loss and its derivative in s. local_scale > 0 gives LocalMAP's near term.
struct PairLosses {
  static double near(double s, double local_scale, double& slope) {
    const double t = 1.0 + s, u = 1.0 / (10.0 + t);
    if (local_scale > 0.0) {
      const double r = std::sqrt(t);
      slope = local_scale * 10.0 * u * u / r;
      return local_scale * (r * u + std::atan(std::sqrt(t / 10.0)) / std::sqrt(10.0));
    }
    slope = 10.0 * u * u;
    return t * u;
  }
  static double mid_near(double s, double& slope) {
    const double t = 1.0 + s, u = 1.0 / (10000.0 + t);
    slope = 10000.0 * u * u;
    return t * u;
  }
  static double further(double s, double& slope) {
    const double u = 1.0 / (2.0 + s);
    slope = -u * u;
    return u;
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

// For each point, the rows of a set in which it is the partner: the
// reverse of the set, as CSR over all n points (in increasing row order).
struct ReverseLists {
  std::vector<std::size_t> ptr;
  std::vector<int> from;  // the row's point

  void build(const PairSet& set, std::size_t n) {
    ptr.assign(n + 1, 0);
    for (int j : set.partner) ++ptr[static_cast<std::size_t>(j) + 1];
    for (std::size_t i = 0; i < n; ++i) ptr[i + 1] += ptr[i];
    from.resize(set.partner.size());
    std::vector<std::size_t> at(ptr.begin(), ptr.end() - 1);
    for (std::size_t r = 0; r < set.rows; ++r) {
      for (std::size_t c = 0; c < set.k; ++c) {
        const std::size_t j = static_cast<std::size_t>(set.partner[r * set.k + c]);
        from[at[j]++] = static_cast<int>(set.first + r);
      }
    }
  }
};

// Checks a set against n points: rows within [0, n), partners in range and
// never the row's own point.
inline void check_pair_set(const PairSet& set, std::size_t n, const char* name) {
  if (set.first + set.rows > n || set.partner.size() != set.rows * set.k) {
    throw std::invalid_argument(std::string("the ") + name + " pairs do not fit the points");
  }
  for (std::size_t r = 0; r < set.rows; ++r) {
    for (std::size_t c = 0; c < set.k; ++c) {
      const int j = set.partner[r * set.k + c];
      if (j < 0 || static_cast<std::size_t>(j) >= n || static_cast<std::size_t>(j) == set.first + r) {
        throw std::invalid_argument(std::string("the ") + name +
                                    " pairs hold an invalid partner");
      }
    }
  }
}

// The objective of PaCMAP and LocalMAP for the driver of optimizer.h: n
// points in d dimensions, of which [0, fixed) do not move (their pairs are
// then only those of the moving points' rows).
class PairObjective {
 public:
  PairObjective(std::size_t n, std::size_t d, std::size_t fixed, std::vector<PairSet> sets,
                const PairSchedule& schedule, std::uint64_t seed)
      : n_(n), d_(d), fixed_(fixed), sets_(std::move(sets)), schedule_(schedule), seed_(seed) {
    if (d_ == 0 || n_ == 0) throw std::invalid_argument("the embedding needs points and dimensions");
    if (sets_.size() != kPairKinds) throw std::invalid_argument("PaCMAP needs three pair sets");
    static const char* names[kPairKinds] = {"near", "mid-near", "further"};
    reverse_.resize(kPairKinds);
    for (int t = 0; t < kPairKinds; ++t) {
      check_pair_set(sets_[t], n_, names[t]);
      if (sets_[t].first < fixed_ && sets_[t].rows > 0) {
        throw std::invalid_argument("fixed points cannot have pairs of their own");
      }
      reverse_[t].build(sets_[t], n_);
    }
    rowmajor_.assign(n_ * d_, 0.0);
    pcost_.assign(n_, 0.0);
  }

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  std::size_t fixed() const { return fixed_; }
  const PairSet& pairs(int kind) const { return sets_[kind]; }
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
    executor.parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) {
            for (std::size_t c = 0; c < d; ++c) yr[i * d + c] = Y[c * n + i];
          }
        },
        4096);
    std::fill(grad, grad + n * d, 0.0);
    executor.parallel_for(
        fixed_, n,
        [&](std::size_t b, std::size_t e) {
          std::vector<double> gi(d);
          for (std::size_t i = b; i < e; ++i) {
            std::fill(gi.begin(), gi.end(), 0.0);
            pcost_[i] = point_terms(i, yr, gi.data());
            for (std::size_t c = 0; c < d; ++c) grad[c * n + i] = gi[c];
          }
        },
        256);
    checkpoint(executor);
    if (!want_cost) return NAN;
    double cost = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i < fixed_) pcost_[i] = 0.0;
      cost += pcost_[i];
      if (pcost != nullptr) pcost[i] = pcost_[i];
    }
    return cost;
  }

 private:
  // Adds point i's gradient to gi; returns the cost of i's own rows. The
  // pair loops are compiled per kind and, for 2-D layouts, per dimension.
  double point_terms(std::size_t i, const double* yr, double* gi) const {
    return d_ == 2 ? point_terms_in<2>(i, yr, gi) : point_terms_in<0>(i, yr, gi);
  }

  template <int D>
  double point_terms_in(std::size_t i, const double* yr, double* gi) const {
    const double local = weights_.local_scale;
    double own = 0.0;
    if (weights_.w[kNear] != 0.0) {
      own += local > 0.0
                 ? kind_terms<D>(i, yr, kNear, gi,
                                 [local](double s, double& slope) {
                                   return PairLosses::near(s, local, slope);
                                 })
                 : kind_terms<D>(i, yr, kNear, gi, [](double s, double& slope) {
                     return PairLosses::near(s, 0.0, slope);
                   });
    }
    if (weights_.w[kMidNear] != 0.0) {
      own += kind_terms<D>(i, yr, kMidNear, gi, [](double s, double& slope) {
        return PairLosses::mid_near(s, slope);
      });
    }
    if (weights_.w[kFurther] != 0.0) {
      own += kind_terms<D>(i, yr, kFurther, gi, [](double s, double& slope) {
        return PairLosses::further(s, slope);
      });
    }
    return own;
  }

  // The pairs of kind t that point i is in: its own row (whose cost it
  // returns) and the rows it is a partner in.
  template <int D, typename Loss>
  double kind_terms(std::size_t i, const double* yr, int t, double* gi, Loss loss) const {
    const PairSet& set = sets_[t];
    const ReverseLists& rev = reverse_[t];
    const double w2 = 2.0 * weights_.w[t];
    const bool owns = i >= set.first && i < set.first + set.rows;
    const int* row = owns ? set.partner.data() + (i - set.first) * set.k : nullptr;
    const std::size_t n_own = owns ? set.k : 0;
    const int* from = rev.from.data() + rev.ptr[i];
    const std::size_t n_from = rev.ptr[i + 1] - rev.ptr[i];
    if (D == 2) {
      // the 2-D loop with its sums in registers
      const double xi = yr[2 * i], yi = yr[2 * i + 1];
      double gx = 0.0, gy = 0.0, own = 0.0;
      const auto add = [&](int j) {
        const double dx = xi - yr[2 * j], dy = yi - yr[2 * j + 1];
        double slope;
        const double value = loss(dx * dx + dy * dy, slope);
        gx += slope * dx;
        gy += slope * dy;
        return value;
      };
      for (std::size_t c = 0; c < n_own; ++c) own += add(row[c]);
      for (std::size_t e = 0; e < n_from; ++e) add(from[e]);
      gi[0] += w2 * gx;
      gi[1] += w2 * gy;
      return weights_.w[t] * own;
    }
    const std::size_t d = d_;
    const double* yi = yr + i * d;
    double own = 0.0;
    const auto add = [&](int j) {
      const double* yj = yr + static_cast<std::size_t>(j) * d;
      double s = 0.0;
      for (std::size_t c = 0; c < d; ++c) s += (yi[c] - yj[c]) * (yi[c] - yj[c]);
      double slope;
      const double value = loss(s, slope);
      for (std::size_t c = 0; c < d; ++c) gi[c] += w2 * slope * (yi[c] - yj[c]);
      return value;
    };
    for (std::size_t c = 0; c < n_own; ++c) own += add(row[c]);
    for (std::size_t e = 0; e < n_from; ++e) add(from[e]);
    return weights_.w[t] * own;
  }

  // LocalMAP: each further pair of a row is redrawn among the points within
  // low_dist_thres of the row's point in the embedding (neither the point,
  // its near partners nor a partner already drawn for the row); after 100
  // draws a slot keeps its old partner.
  template <typename Executor>
  void redraw_further(int itr, const double* Y, Executor& executor) {
    PairSet& far = sets_[kFurther];
    const PairSet& near = sets_[kNear];
    const std::size_t n = n_, d = d_;
    const double limit = schedule_.low_dist_thres * schedule_.low_dist_thres;
    executor.parallel_for(
        0, far.rows,
        [&](std::size_t b, std::size_t e) {
          std::vector<int> drawn(far.k);
          for (std::size_t r = b; r < e; ++r) {
            const std::size_t i = far.first + r;
            SplitMix64 rng(hash64(seed_, 0x4c4d4150ULL, static_cast<std::uint64_t>(itr), i));
            const int* nb = near.partner.data() + (i - near.first) * near.k;
            const bool has_near = i >= near.first && i < near.first + near.rows;
            for (std::size_t c = 0; c < far.k; ++c) {
              int pick = -1;
              for (int tries = 0; tries < 100 && pick < 0; ++tries) {
                const std::size_t j = rng.below(n);
                if (j == i) continue;
                if (std::find(drawn.begin(), drawn.begin() + c, static_cast<int>(j)) !=
                    drawn.begin() + c) continue;
                if (has_near && std::find(nb, nb + near.k, static_cast<int>(j)) != nb + near.k) continue;
                double s = 0.0;
                for (std::size_t a = 0; a < d; ++a) {
                  const double diff = Y[a * n + i] - Y[a * n + j];
                  s += diff * diff;
                }
                if (s <= limit) pick = static_cast<int>(j);
              }
              drawn[c] = pick;
              if (pick >= 0) far.partner[r * far.k + c] = pick;
            }
          }
        },
        256);
    reverse_[kFurther].build(far, n_);
  }

  std::size_t n_, d_, fixed_;
  std::vector<PairSet> sets_;
  std::vector<ReverseLists> reverse_;
  PairSchedule schedule_;
  std::uint64_t seed_;
  PairWeights weights_;
  std::vector<double> rowmajor_, pcost_;
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
        for (std::size_t r = b; r < e; ++r) {
          const std::size_t i = near.first + r;
          SplitMix64 rng(hash64(seed, 0x46505052ULL, i));
          const int* nb = near.partner.data() + r * near.k;
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
