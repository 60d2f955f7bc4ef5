// Exact k-nearest neighbours through a partition of the rows: the same graph
// as exact_knn() (exact_knn.h), ties included, from fewer scored pairs when
// the data is clustered.
//
// The rows are split into partitions by a seeded k-means (k-means++ seeds
// and Lloyd's iterations on a sample of rows, then every row to its nearest
// centre; rows far from their centre are then partitioned apart); each
// partition has a centre and a radius (the largest distance of its rows to
// the centre). Every partition is first scored against itself,
// in tiles of the exact search's single-precision products. Then the pairs
// of partitions are visited nearest first, and partition B is skipped for a
// row i of A when the triangle inequality proves that no row of B can be
// among i's neighbours:
//
//   dist(i, centre_B) - radius_B > (an upper bound of i's current k-th distance).
//
// A pair is skipped whole when the bound between the two partitions (their
// centres' distance less both radii) exceeds every current k-th distance of
// both, which costs nothing per row. Otherwise the rows of either side that
// the bound does not exclude are scored against the other side (one product
// for both sides when most rows of both need it). No partition is left
// unscored for a row unless the bound excludes it, so every row ends proved:
// its candidates are then finished exactly as exact_knn() finishes them
// (exact distances in double, the float rounding proof, the wider second
// pass where that proof fails), and the result is the exact graph. On
// uniform data nothing is skipped and the search does about the exact
// search's work.
//
// The bound works on the rows as points of a metric space in double
// precision: the rows as given (euclidean), or the rows divided by their
// norms (cosine, whose distance 1 - cos is half the squared distance of unit
// rows). All its distances are widened by margins that cover their rounding
// and that of the reported distances (see BoundMargins), so a skipped row is
// strictly farther than the k-th neighbour in the exact scores the result is
// ranked by. Other metrics, sparse rows, cosine data with zero rows and
// data of extreme magnitude run exact_knn() itself.
//
// The result is the same for any number of threads: the k-means works per
// row and sums in a fixed order; each partition's own tiles are one task;
// and the pairs of partitions run in batches that share no partition, so
// each pair reads and writes only its two partitions' candidate lists, as
// the batches before left them. The search keeps a copy of the rows in
// double precision, in partition order, for the bound.
#ifndef LSNN_PARTITION_KNN_H
#define LSNN_PARTITION_KNN_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "distance.h"
#include "exact_knn.h"
#include "neighbour_heaps.h"
#include "score_space.h"
#include "scorer.h"
#include "../base/graph.h"
#include "../base/parallel.h"
#include "../base/random.h"

namespace lsnn {

struct PartitionKnnParams {
  std::size_t rows_per_partition = 1024;  // the number of partitions is n over this
  std::size_t n_iters = 5;                // Lloyd's iterations on the sample
  std::uint64_t seed = 0;
};

struct PartitionKnnStats {
  bool partitioned = false;        // false: the data ran exact_knn() (see the top)
  std::size_t partitions = 0;      // non-empty partitions
  std::size_t largest = 0;         // rows of the largest partition
  std::size_t rows_pruned = 0;     // rows for which the bound skipped a partition
  std::size_t rows_exhaustive = 0; // rows scored against every row
  std::size_t rows_refined = 0;    // rows whose float proof failed (second pass)
  double pairs_scored = 0.0;       // scored (row, other row) pairs over n (n - 1)
  double products = 0.0;           // the products' work over the exact search's
};

namespace detail {

// The rows as points of the bound's metric space, read from the data as
// given (column-major): the rows themselves, or for cosine the rows over
// their norms.
class PartitionPoints {
 public:
  PartitionPoints(const DenseColumnMajor& x, Metric metric) : x_(x), unit_(metric == Metric::cosine) {}

  std::size_t n() const { return x_.n; }
  std::size_t d() const { return x_.d; }
  bool unit() const { return unit_; }

  // Rows rows[0, m) as points, row-major into out (m x d).
  void gather(const int* rows, std::size_t m, double* out) const {
    const std::size_t d = x_.d;
    for (std::size_t r = 0; r < m; ++r) {
      const std::size_t i = static_cast<std::size_t>(rows[r]);
      double* p = out + r * d;
      for (std::size_t k = 0; k < d; ++k) p[k] = x_.data[i + k * x_.n];
      if (unit_) {
        double s = 0.0;
        for (std::size_t k = 0; k < d; ++k) s += p[k] * p[k];
        const double norm = std::sqrt(s);
        for (std::size_t k = 0; k < d; ++k) p[k] /= norm;
      }
    }
  }

 private:
  DenseColumnMajor x_;
  bool unit_;
};

// The margins that make the bound safe in floating point. A distance
// between two points computed in double (sqdist, then sqrt) is within a
// relative `rel` of the true one; a cosine point is within `shift` (absolute)
// of the exact unit row; and a reported distance (RowData) is within a
// relative `rel` (euclidean) or an absolute `shift` (cosine, 1 - cos) of the
// true distance of the rows. All are several times the rounding analysis's
// figures.
struct BoundMargins {
  double rel = 0.0, shift = 0.0;
  bool unit = false;

  BoundMargins(std::size_t d, bool unit_rows) : unit(unit_rows) {
    rel = static_cast<double>(d + 16) * std::ldexp(1.0, -50) + 1e-12;
    shift = unit_rows ? rel : 0.0;
  }

  // A lower bound on dist(i, j) for every j within `radius` (computed) of a
  // point at `dist` (computed) from i; -inf when either is not a number (a
  // row whose norm underflowed, say), which bounds nothing.
  double gap(double dist, double radius) const {
    const double g = dist * (1.0 - rel) - radius * (1.0 + rel) - 2.0 * shift;
    return std::isnan(g) ? -std::numeric_limits<double>::infinity() : g;
  }

  // A lower bound on the reported distance of two rows at least `gap` apart
  // (negative when it bounds nothing); non-decreasing in gap.
  double reported_at_least(double gap) const {
    if (!(gap > 0.0)) return -1.0;
    if (!unit) return gap * (1.0 - rel);
    return 0.5 * gap * gap * (1.0 - rel) - shift;
  }
};

// A partition of the rows: partition p holds rows[start[p], start[p + 1]),
// in increasing order, with its centre (d values, in PartitionPoints' space)
// and radius.
struct RowPartition {
  std::vector<int> rows;
  std::vector<std::size_t> start;
  std::vector<double> centre;
  std::vector<double> radius;
  std::vector<double> own;  // each row's distance to its centre, in the order of `rows`
  std::size_t count() const { return radius.size(); }
  std::size_t size(std::size_t p) const { return start[p + 1] - start[p]; }
  const int* members(std::size_t p) const { return rows.data() + start[p]; }
};

// Points shifted by `mean` in single precision with their squared norms, for
// the k-means' distances (only the choice of centre depends on them).
inline void shifted_floats(const double* points, std::size_t m, std::size_t d, const std::vector<double>& mean,
                           std::vector<float>& out, std::vector<float>& sqnorm) {
  out.resize(m * d);
  sqnorm.resize(m);
  for (std::size_t r = 0; r < m; ++r) {
    double s = 0.0;
    for (std::size_t k = 0; k < d; ++k) {
      const float v = static_cast<float>(points[r * d + k] - mean[k]);
      out[r * d + k] = v;
      s += static_cast<double>(v) * v;
    }
    sqnorm[r] = static_cast<float>(s);
  }
}

// Nearest centre (ties: the lower number) of each of m shifted float points.
inline void nearest_centres(const DistanceKernels& kern, const float* pts, const float* pts_sq, std::size_t m,
                            const std::vector<float>& centres, const std::vector<float>& centre_sq, std::size_t d,
                            std::vector<float>& tile, int* out) {
  const std::size_t n_centres = centre_sq.size(), chunk = 1024;
  std::vector<float> best(m, std::numeric_limits<float>::infinity());
  for (std::size_t r = 0; r < m; ++r) out[r] = 0;
  for (std::size_t c0 = 0; c0 < n_centres; c0 += chunk) {
    const std::size_t c1 = std::min(n_centres, c0 + chunk), mc = c1 - c0;
    tile.resize(m * mc);
    kern.dot_tile(pts, m, &centres[c0 * d], mc, d, tile.data());
    kern.finish_sqdist_tile(pts_sq, m, &centre_sq[c0], mc, tile.data());
    for (std::size_t r = 0; r < m; ++r) {
      for (std::size_t c = 0; c < mc; ++c) {
        if (tile[r * mc + c] < best[r]) {
          best[r] = tile[r * mc + c];
          out[r] = static_cast<int>(c0 + c);
        }
      }
    }
  }
}

// The k-means' seeded sample of the rows: its points (row-major, in
// PartitionPoints' space), their mean, and the points shifted by the mean in
// single precision (shifted_floats()).
struct KMeansSample {
  std::size_t n = 0;
  std::vector<double> points;
  std::vector<double> mean;
  std::vector<float> shifted, sqnorm;
};

// A sample of the rows `ids` for n_parts centres.
inline KMeansSample kmeans_sample(const PartitionPoints& pts, const std::vector<int>& ids, std::size_t n_parts,
                                  const PartitionKnnParams& params, std::uint64_t salt) {
  const std::size_t n = ids.size(), d = pts.d();
  KMeansSample s;
  // (k-means++ takes sample x partitions distances: the sample is capped)
  s.n = std::min(n, std::max(n_parts, std::max<std::size_t>(8192, std::min<std::size_t>(40 * n_parts, 131072))));
  std::vector<int> rows;
  for (std::uint64_t r : sample_distinct(n, s.n, hash64(params.seed, salt, 1))) {
    rows.push_back(ids[static_cast<std::size_t>(r)]);
  }
  s.points.resize(s.n * d);
  pts.gather(rows.data(), s.n, s.points.data());
  // (the sample's mean, subtracted before the float products)
  s.mean.assign(d, 0.0);
  for (std::size_t r = 0; r < s.n; ++r) {
    for (std::size_t k = 0; k < d; ++k) s.mean[k] += s.points[r * d + k];
  }
  for (double& m : s.mean) m /= static_cast<double>(s.n);
  shifted_floats(s.points.data(), s.n, d, s.mean, s.shifted, s.sqnorm);
  return s;
}

// The first centres (n_parts x d) by k-means++: each next one a sample row
// drawn with probability proportional to its squared distance to the
// nearest centre so far. Every cluster of the data gets centres, where
// centres drawn uniformly leave small clusters to share a partition with
// others, which the bound cannot then tell apart.
template <typename Executor>
std::vector<double> kmeans_plus_plus(const KMeansSample& s, const DistanceKernels& kern, std::size_t n_parts,
                                     std::size_t d, std::uint64_t seed, Executor& executor) {
  const std::size_t n_sample = s.n;
  const std::vector<double>& spts = s.points;
  std::vector<double> centre(n_parts * d);
  SplitMix64 rng(seed);
  std::vector<double> nearest(n_sample, std::numeric_limits<double>::infinity());
  std::size_t pick = rng.below(n_sample);
  for (std::size_t c = 0; c < n_parts; ++c) {
    std::copy(&spts[pick * d], &spts[pick * d] + d, &centre[c * d]);
    if (c + 1 == n_parts) break;
    executor.parallel_for(0, n_sample, [&](std::size_t r0, std::size_t r1) {
      for (std::size_t r = r0; r < r1; ++r) {
        nearest[r] = std::min(nearest[r], kern.sqdist_d(&spts[r * d], &centre[c * d], d));
      }
    }, 1024);
    double total = 0.0;
    for (double v : nearest) total += v;
    if (!(total > 0.0) || !std::isfinite(total)) {
      pick = rng.below(n_sample);
      continue;
    }
    const double u = static_cast<double>(rng.next() >> 11) * std::ldexp(1.0, -53) * total;
    double cum = 0.0;
    pick = n_sample - 1;
    for (std::size_t r = 0; r < n_sample; ++r) {
      cum += nearest[r];
      if (cum > u) {
        pick = r;
        break;
      }
    }
  }
  return centre;
}

// Lloyd's iterations on the sample: every sample row to its nearest centre
// (in single precision, blocks of rows in parallel), then every centre to
// the mean of its rows (summed in sample order, so the same for any number
// of threads); a centre that loses all its rows stays where it was.
template <typename Executor>
void lloyd_iterations(const KMeansSample& s, const DistanceKernels& kern, std::size_t n_parts, std::size_t d,
                      std::size_t n_iters, std::vector<double>& centre, Executor& executor) {
  const std::size_t n_sample = s.n, block = 256;
  std::vector<float> cfl, csq;
  std::vector<int> label(n_sample);
  for (std::size_t it = 0; it < n_iters; ++it) {
    shifted_floats(centre.data(), n_parts, d, s.mean, cfl, csq);
    const std::size_t n_blocks = (n_sample + block - 1) / block;
    executor.parallel_for(0, n_blocks, [&](std::size_t b0, std::size_t b1) {
      std::vector<float> tile;
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t r0 = b * block, r1 = std::min(n_sample, r0 + block);
        nearest_centres(kern, &s.shifted[r0 * d], &s.sqnorm[r0], r1 - r0, cfl, csq, d, tile, &label[r0]);
      }
    });
    checkpoint(executor);
    std::vector<double> sum(n_parts * d, 0.0);
    std::vector<std::size_t> count(n_parts, 0);
    for (std::size_t r = 0; r < n_sample; ++r) {
      const std::size_t c = static_cast<std::size_t>(label[r]);
      ++count[c];
      for (std::size_t k = 0; k < d; ++k) sum[c * d + k] += s.points[r * d + k];
    }
    for (std::size_t c = 0; c < n_parts; ++c) {
      if (count[c] == 0) continue;
      for (std::size_t k = 0; k < d; ++k) centre[c * d + k] = sum[c * d + k] / static_cast<double>(count[c]);
    }
  }
}

// Every row of `ids` to its nearest centre (`part`, by position in ids),
// and its squared distance to it in double (`to_centre`, for the radii,
// while the row is at hand). `mean`: the shift of the k-means' floats.
template <typename Executor>
void assign_to_centres(const PartitionPoints& pts, const DistanceKernels& kern, const std::vector<int>& ids,
                       const std::vector<double>& centre, std::size_t n_parts, const std::vector<double>& mean,
                       std::vector<int>& part, std::vector<double>& to_centre, Executor& executor) {
  const std::size_t n = ids.size(), d = pts.d(), block = 256;
  std::vector<float> cfl, csq;
  shifted_floats(centre.data(), n_parts, d, mean, cfl, csq);
  part.assign(n, 0);
  to_centre.assign(n, 0.0);
  const std::size_t n_blocks = (n + block - 1) / block;
  batched_for(executor, n_blocks, 64 * std::max<std::size_t>(1, executor.n_threads()),
              [&](std::size_t b0, std::size_t b1) {
                std::vector<double> p;
                std::vector<float> f, fsq, tile;
                for (std::size_t b = b0; b < b1; ++b) {
                  const std::size_t r0 = b * block, r1 = std::min(n, r0 + block), m = r1 - r0;
                  p.resize(m * d);
                  pts.gather(&ids[r0], m, p.data());
                  shifted_floats(p.data(), m, d, mean, f, fsq);
                  nearest_centres(kern, f.data(), fsq.data(), m, cfl, csq, d, tile, &part[r0]);
                  for (std::size_t r = 0; r < m; ++r) {
                    to_centre[r0 + r] =
                        kern.sqdist_d(&p[r * d], &centre[static_cast<std::size_t>(part[r0 + r]) * d], d);
                  }
                }
              });
}

// The RowPartition of the rows `ids` assigned by assign_to_centres(): the
// rows grouped by partition (in the order of ids within each), each row's
// distance to its centre, and the radii.
inline RowPartition group_by_partition(const std::vector<int>& ids, const std::vector<int>& part,
                                       const std::vector<double>& to_centre, std::vector<double> centre,
                                       std::size_t n_parts) {
  const std::size_t n = ids.size();
  RowPartition out;
  out.start.assign(n_parts + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++out.start[static_cast<std::size_t>(part[i]) + 1];
  for (std::size_t c = 0; c < n_parts; ++c) out.start[c + 1] += out.start[c];
  out.rows.resize(n);
  {
    std::vector<std::size_t> fill(out.start.begin(), out.start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) out.rows[fill[static_cast<std::size_t>(part[i])]++] = static_cast<int>(i);
    // (positions in ids for now, for own; row numbers below)
  }
  out.centre = std::move(centre);
  out.radius.assign(n_parts, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double& r2 = out.radius[static_cast<std::size_t>(part[i])];
    // (a NaN, which must not be passed over, makes the radius NaN)
    if (!(to_centre[i] <= r2)) r2 = to_centre[i];
  }
  for (double& r : out.radius) r = std::sqrt(r);
  out.own.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t i = static_cast<std::size_t>(out.rows[t]);
    out.own[t] = std::sqrt(to_centre[i]);
    out.rows[t] = ids[i];
  }
  return out;
}

// The partition of the rows `ids` into n_parts: k-means on a seeded sample
// (seeded by k-means++), then every row to its nearest centre, and the
// radii in double. `salt` tells the draws of separate partitions apart.
template <typename Executor>
RowPartition partition_rows(const PartitionPoints& pts, const DistanceKernels& kern, const std::vector<int>& ids,
                            std::size_t n_parts, const PartitionKnnParams& params, std::uint64_t salt,
                            Executor& executor) {
  const std::size_t d = pts.d();
  const KMeansSample sample = kmeans_sample(pts, ids, n_parts, params, salt);
  std::vector<double> centre = kmeans_plus_plus(sample, kern, n_parts, d, hash64(params.seed, salt, 2), executor);
  lloyd_iterations(sample, kern, n_parts, d, params.n_iters, centre, executor);
  std::vector<int> part;
  std::vector<double> to_centre;
  assign_to_centres(pts, kern, ids, centre, n_parts, sample.mean, part, to_centre, executor);
  return group_by_partition(ids, part, to_centre, std::move(centre), n_parts);
}

// Takes out of each partition the rows more than `factor` times its mean
// distance to the centre away from it (a few stray rows would make the
// radius, and so the partition, useless to the bound), and partitions those
// rows apart, into about one partition per `rows_per_partition` of them.
// The partitions' radii shrink to their remaining rows.
template <typename Executor>
void split_outliers(const PartitionPoints& pts, const DistanceKernels& kern, RowPartition& parts, double factor,
                    const PartitionKnnParams& params, Executor& executor) {
  const std::size_t d = pts.d();
  std::vector<int> outliers;
  RowPartition kept;
  kept.start.assign(1, 0);
  for (std::size_t p = 0; p < parts.count(); ++p) {
    double mean = 0.0;
    for (std::size_t t = parts.start[p]; t < parts.start[p + 1]; ++t) mean += parts.own[t];
    mean /= static_cast<double>(std::max<std::size_t>(1, parts.size(p)));
    double radius = 0.0;
    for (std::size_t t = parts.start[p]; t < parts.start[p + 1]; ++t) {
      // (NaN distances stay, and keep the radius NaN)
      if (parts.own[t] > factor * mean) {
        outliers.push_back(parts.rows[t]);
        continue;
      }
      kept.rows.push_back(parts.rows[t]);
      kept.own.push_back(parts.own[t]);
      if (!(parts.own[t] <= radius)) radius = parts.own[t];
    }
    kept.start.push_back(kept.rows.size());
    kept.radius.push_back(radius);
    kept.centre.insert(kept.centre.end(), &parts.centre[p * d], &parts.centre[p * d] + d);
  }
  if (outliers.empty()) return;
  std::sort(outliers.begin(), outliers.end());
  const std::size_t n_out = std::max<std::size_t>(
      1, std::min(outliers.size(), (outliers.size() + params.rows_per_partition / 2) / params.rows_per_partition));
  const RowPartition apart = partition_rows(pts, kern, outliers, n_out, params, 2, executor);
  const std::size_t first = kept.rows.size();
  kept.rows.insert(kept.rows.end(), apart.rows.begin(), apart.rows.end());
  kept.own.insert(kept.own.end(), apart.own.begin(), apart.own.end());
  for (std::size_t p = 0; p < apart.count(); ++p) kept.start.push_back(first + apart.start[p + 1]);
  kept.radius.insert(kept.radius.end(), apart.radius.begin(), apart.radius.end());
  kept.centre.insert(kept.centre.end(), apart.centre.begin(), apart.centre.end());
  parts = std::move(kept);
}

// Scratch space of offer_list_to_rows().
struct OfferBuffers {
  std::vector<std::uint32_t> pos;
  std::vector<float> threshold;
  std::vector<std::pair<float, int>> entries;
  std::vector<HeapEntry> merge;
  std::vector<float> values;
};

// Rows a_rows[0, ma), whose lists are the heap rows a_heap[0, ma), take
// candidates from rows b_rows[0, mb), reading score[r * mb + c] (a row is
// never offered itself). Many candidates at once (a row's first tiles,
// while its list is long or open) are merged in one step rather than pushed
// one by one; the list kept is the same.
inline void offer_list_to_rows(const DistanceKernels& kern, NeighbourHeaps<>& heaps, const int* a_heap,
                               const int* a_rows, std::size_t ma, const int* b_rows, std::size_t mb,
                               const float* score, OfferBuffers& ob) {
  ob.pos.resize(mb);
  const std::size_t many = std::max<std::size_t>(32, heaps.capacity() / 2);
  for (std::size_t r = 0; r < ma; ++r) {
    const std::size_t h = static_cast<std::size_t>(a_heap[r]);
    const int i = a_rows[r];
    const float* s = score + r * mb;
    float t = heaps.threshold(h);
    std::size_t count = kern.positions_at_most(s, &t, true, mb, ob.pos.data());
    if (count > heaps.capacity() + 1) {
      // Only the capacity + 1 smallest scores of the row (one may be the
      // row itself) and their ties can be kept: the others go first.
      t = std::min(t, kth_smallest(kern, s, mb, heaps.capacity() + 1));
      count = kern.positions_at_most(s, &t, true, mb, ob.pos.data());
    }
    if (count >= many) {
      ob.entries.clear();
      for (std::size_t c = 0; c < count; ++c) {
        const int j = b_rows[ob.pos[c]];
        if (j != i) ob.entries.emplace_back(s[ob.pos[c]], j);
      }
      heaps.merge_new(h, ob.entries.data(), ob.entries.size(), 0, ob.merge, ob.values);
      continue;
    }
    for (std::size_t c = 0; c < count; ++c) {
      const int j = b_rows[ob.pos[c]];
      if (j != i) heaps.push_new(h, s[ob.pos[c]], j);
    }
  }
}

// Rows b[0, mb) (heap rows b_heap) take candidates from the rows a_rows[0,
// ma), none of them among b, reading the same scores column by column (a
// transposed copy cost more than the offers).
inline void offer_list_to_columns(const DistanceKernels& kern, NeighbourHeaps<>& heaps, const int* a_rows,
                                  std::size_t ma, const int* b_heap, std::size_t mb, const float* score,
                                  OfferBuffers& ob) {
  offer_tile_to_columns(kern, heaps, score, ma, mb,
                        [b_heap](std::size_t b) { return static_cast<std::size_t>(b_heap[b]); },
                        [a_rows](std::size_t a) { return a_rows[a]; }, ob.pos, ob.threshold);
}

// An upper bound on the reported distance of row i's `others`-th nearest
// row, from its candidate list (heap row h): a full list's largest float
// score v bounds the `others`-th too (others < capacity), so that row's
// exact score is at most v plus the row's tolerance, and distances are
// non-decreasing in scores. (The largest is at hand, where the `others`-th
// would be a selection per row and pair: the bound is a few per cent
// looser.) A list with room takes its `others`-th score; +inf while it is
// shorter.
inline double reach_of_row(const RowData& data, const NeighbourHeaps<>& heaps, std::size_t h, std::size_t i,
                           std::size_t others, std::vector<float>& scratch) {
  const std::size_t size = heaps.size(h);
  if (size < others || others == 0) return std::numeric_limits<double>::infinity();
  float v;
  if (size == heaps.capacity()) {
    v = heaps.top_value(h);
  } else {
    scratch.assign(heaps.values(h), heaps.values(h) + size);
    std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(others - 1), scratch.end());
    v = scratch[others - 1];
  }
  const double score = static_cast<double>(v) + data.score_tolerance(i);
  if (!(score <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
  return data.distance_from_exact_score(std::max(0.0, std::nextafter(score, std::numeric_limits<double>::infinity())));
}

// One thread's scratch space for the partitioned search.
struct PartitionBuffers {
  ScoreWorkspace ws;
  std::vector<float> score, scratch;
  OfferBuffers offer;
  std::vector<int> keep_pos[2];   // positions in partition order
  std::vector<int> keep_rows[2];  // the rows at those positions
};

// Scratch spaces lent to the tasks of the search and kept across its
// parallel loops, which are many and short: fresh buffers in every loop
// cost a page fault per page they touch.
class BufferPool {
 public:
  std::unique_ptr<PartitionBuffers> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::make_unique<PartitionBuffers>();
    std::unique_ptr<PartitionBuffers> b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void give(std::unique_ptr<PartitionBuffers> b) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(b));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<PartitionBuffers>> free_;
};

// The rows as the search scores them, in partition order (position t holds
// row parts.rows[t]): a single-precision copy, so that a partition's rows
// are one contiguous block, and the candidate lists of the search, by
// position, so that the lists a tile writes are contiguous too.
struct PartitionedRows {
  const RowData& data;
  const RowPartition& parts;
  ScoreSpace space;
  std::vector<int> position;  // 0, 1, ..., n - 1: the lists of a block of positions
  template <typename Executor>
  PartitionedRows(const RowData& d, const RowPartition& p, Executor& executor)
      : data(d), parts(p), space(d, p.rows, executor), position(p.rows.size()) {
    for (std::size_t t = 0; t < position.size(); ++t) position[t] = static_cast<int>(t);
  }
  // The heap rows (positions) of partition p's rows, from its `begin`-th.
  const int* lists(std::size_t p, std::size_t begin) const { return &position[parts.start[p] + begin]; }
  const Scorer& scorer() const { return space.scorer(); }
  const DistanceKernels& kernels() const { return data.kernels(); }
  // Positions [begin, end) of partition p's block, relative to its start.
  RowSet block(std::size_t p, std::size_t begin, std::size_t end) const {
    return RowSet::range(parts.start[p] + begin, parts.start[p] + end);
  }
};

// Partition p against itself, every pair of its rows scored once: the
// tiles on the diagonal first, which fill the lists, so that the others'
// offers meet thresholds.
inline void score_partition_itself(const PartitionedRows& pr, std::size_t p, std::size_t bs,
                                   NeighbourHeaps<>& heaps, PartitionBuffers& buf) {
  const int* rows = pr.parts.members(p);
  const std::size_t m = pr.parts.size(p);
  const DistanceKernels& kern = pr.kernels();
  for (std::size_t i0 = 0; i0 < m; i0 += bs) {
    const std::size_t mi = std::min(bs, m - i0);
    buf.score.resize(mi * mi);
    pr.scorer().score_block(pr.block(p, i0, i0 + mi), pr.block(p, i0, i0 + mi), buf.ws, buf.score.data());
    offer_list_to_rows(kern, heaps, pr.lists(p, i0), rows + i0, mi, rows + i0, mi, buf.score.data(), buf.offer);
  }
  for (std::size_t i0 = 0; i0 < m; i0 += bs) {
    const std::size_t mi = std::min(bs, m - i0);
    for (std::size_t j0 = i0 + bs; j0 < m; j0 += bs) {
      const std::size_t mj = std::min(bs, m - j0);
      buf.score.resize(mi * mj);
      pr.scorer().score_block(pr.block(p, i0, i0 + mi), pr.block(p, j0, j0 + mj), buf.ws, buf.score.data());
      offer_list_to_rows(kern, heaps, pr.lists(p, i0), rows + i0, mi, rows + j0, mj, buf.score.data(), buf.offer);
      offer_list_to_columns(kern, heaps, rows + i0, mi, pr.lists(p, j0), mj, buf.score.data(), buf.offer);
    }
  }
}

// The state of the search across partitions: the points in partition order
// (row-major, as RowPartition::rows lists them), each row's reach
// (reach_of_row(), by position in that order), the largest reach of each
// partition, and what was skipped.
struct AcrossState {
  std::vector<double> points;
  std::vector<double> reach;
  std::vector<double> widest;
  std::vector<unsigned char> row_skipped;   // by position
  std::vector<unsigned char> part_skipped;  // a partition skipped for all of a partition's rows
  std::vector<double> pair_products;        // per pair of partitions
  std::vector<double> pair_scored;          // (row, other row) pairs, per pair of partitions
};

// A pair of partitions, by the lower bound of the distance between their
// rows (`gap`); processed nearest first.
struct PartitionPair {
  double gap;
  double dist;  // between the centres
  std::uint32_t a, b;
  bool operator<(const PartitionPair& o) const {
    if (gap != o.gap) return gap < o.gap;
    if (a != o.a) return a < o.a;
    return b < o.b;
  }
};

// The rows of partition p (positions and row numbers) for which the bound
// does not exclude partition q, into keep_pos and keep_rows; the others are
// marked skipped. A row is first tested through its distance to its own
// centre (`centres` apart from q's), which costs nothing, and only then
// through its distance to q's centre.
inline void rows_needing(const RowPartition& parts, const DistanceKernels& kern, const BoundMargins& margin,
                         std::size_t p, std::size_t q, double centres, AcrossState& st,
                         std::vector<int>& keep_pos, std::vector<int>& keep_rows) {
  const std::size_t d = parts.centre.size() / parts.count();
  keep_pos.clear();
  keep_rows.clear();
  for (std::size_t t = parts.start[p]; t < parts.start[p + 1]; ++t) {
    if (margin.reported_at_least(margin.gap(centres, parts.own[t] + parts.radius[q])) > st.reach[t]) {
      st.row_skipped[t] = 1;
      continue;
    }
    const double dist = std::sqrt(kern.sqdist_d(&st.points[t * d], &parts.centre[q * d], d));
    if (margin.reported_at_least(margin.gap(dist, parts.radius[q])) > st.reach[t]) {
      st.row_skipped[t] = 1;
    } else {
      keep_pos.push_back(static_cast<int>(t));
      keep_rows.push_back(parts.rows[t]);
    }
  }
}

// The rows at positions pos[0, m) (row numbers rows[0, m)) take candidates
// from the rows of partition q.
inline void score_rows_against(const PartitionedRows& pr, const int* pos, const int* rows, std::size_t m,
                               std::size_t q, std::size_t bs, NeighbourHeaps<>& heaps, PartitionBuffers& buf) {
  const int* members = pr.parts.members(q);
  const std::size_t mq = pr.parts.size(q);
  for (std::size_t a0 = 0; a0 < m; a0 += bs) {
    const std::size_t ma = std::min(bs, m - a0);
    for (std::size_t b0 = 0; b0 < mq; b0 += bs) {
      const std::size_t mb = std::min(bs, mq - b0);
      buf.score.resize(ma * mb);
      pr.scorer().score_block(RowSet::list(pos + a0, ma), pr.block(q, b0, b0 + mb), buf.ws, buf.score.data());
      offer_list_to_rows(pr.kernels(), heaps, pos + a0, rows + a0, ma, members + b0, mb, buf.score.data(),
                         buf.offer);
    }
  }
}

// Every row of partitions a and b takes the other's rows, from one product.
inline void score_both_sides(const PartitionedRows& pr, std::size_t a, std::size_t b, std::size_t bs,
                             NeighbourHeaps<>& heaps, PartitionBuffers& buf) {
  const int* ra = pr.parts.members(a);
  const int* rb = pr.parts.members(b);
  const std::size_t ma = pr.parts.size(a), mb = pr.parts.size(b);
  for (std::size_t a0 = 0; a0 < ma; a0 += bs) {
    const std::size_t na = std::min(bs, ma - a0);
    for (std::size_t b0 = 0; b0 < mb; b0 += bs) {
      const std::size_t nb = std::min(bs, mb - b0);
      buf.score.resize(na * nb);
      pr.scorer().score_block(pr.block(a, a0, a0 + na), pr.block(b, b0, b0 + nb), buf.ws, buf.score.data());
      offer_list_to_rows(pr.kernels(), heaps, pr.lists(a, a0), ra + a0, na, rb + b0, nb, buf.score.data(),
                         buf.offer);
      offer_list_to_columns(pr.kernels(), heaps, ra + a0, na, pr.lists(b, b0), nb, buf.score.data(), buf.offer);
    }
  }
}

// Pair `pr` of partitions: skipped when the bound excludes it for all rows
// of both; else each side's rows that need the other are scored against it,
// in one product for both sides when that is cheaper than one per side.
// Writes only the two partitions' rows (lists and state).
inline void search_pair(const PartitionedRows& rows, const BoundMargins& margin, const PartitionPair& pr,
                        std::size_t pair_no, std::size_t others, std::size_t bs, NeighbourHeaps<>& heaps,
                        AcrossState& st, PartitionBuffers& buf) {
  const RowPartition& parts = rows.parts;
  const std::size_t side[2] = {pr.a, pr.b};
  const double at_least = margin.reported_at_least(pr.gap);
  bool any = false;
  for (int s = 0; s < 2; ++s) {
    const std::size_t p = side[s], q = side[1 - s];
    buf.keep_pos[s].clear();
    buf.keep_rows[s].clear();
    if (at_least > st.widest[p]) {
      st.part_skipped[p] = 1;
      continue;
    }
    rows_needing(parts, rows.kernels(), margin, p, q, pr.dist, st, buf.keep_pos[s], buf.keep_rows[s]);
    any = any || !buf.keep_pos[s].empty();
  }
  if (!any) return;
  const double ma = static_cast<double>(parts.size(pr.a)), mb = static_cast<double>(parts.size(pr.b));
  const double one_sided =
      static_cast<double>(buf.keep_pos[0].size()) * mb + static_cast<double>(buf.keep_pos[1].size()) * ma;
  if (one_sided > ma * mb) {
    score_both_sides(rows, pr.a, pr.b, bs, heaps, buf);
    st.pair_products[pair_no] = ma * mb;
    st.pair_scored[pair_no] = 2.0 * ma * mb;
    for (int s = 0; s < 2; ++s) {
      buf.keep_pos[s].clear();
      for (std::size_t t = parts.start[side[s]]; t < parts.start[side[s] + 1]; ++t) {
        buf.keep_pos[s].push_back(static_cast<int>(t));
      }
    }
  } else {
    for (int s = 0; s < 2; ++s) {
      score_rows_against(rows, buf.keep_pos[s].data(), buf.keep_rows[s].data(), buf.keep_pos[s].size(),
                         side[1 - s], bs, heaps, buf);
    }
    st.pair_products[pair_no] = one_sided;
    st.pair_scored[pair_no] = one_sided;
  }
  for (int s = 0; s < 2; ++s) {
    if (buf.keep_pos[s].empty()) continue;
    for (int t : buf.keep_pos[s]) {
      st.reach[t] = reach_of_row(rows.data, heaps, static_cast<std::size_t>(t),
                                 static_cast<std::size_t>(parts.rows[t]), others, buf.scratch);
    }
    double w = 0.0;
    for (std::size_t t = parts.start[side[s]]; t < parts.start[side[s] + 1]; ++t) w = std::max(w, st.reach[t]);
    st.widest[side[s]] = w;
  }
}

// Whether the bound's space serves the data (else the exact search runs).
inline bool partition_applies(const RowData& data, const DenseColumnMajor& x) {
  if (data.sparse() || data.bit_rows() != nullptr) return false;
  if (data.metric() != Metric::euclidean && data.metric() != Metric::cosine) return false;
  if (x.data == nullptr || x.n != data.n() || x.d != data.d()) return false;
  // (squared distances in double must neither overflow nor underflow)
  double biggest = 0.0;
  for (std::size_t t = 0; t < x.n * x.d; ++t) biggest = std::max(biggest, std::fabs(x.data[t]));
  if (biggest > std::ldexp(1.0, 250) || (biggest > 0.0 && biggest < std::ldexp(1.0, -250))) return false;
  for (std::size_t i = 0; i < data.n(); ++i) {
    if (data.needs_exact_search(i)) return false;
  }
  return true;
}

// The partition of all n rows (partition_rows()), the rows far from their
// centre then partitioned apart (split_outliers()).
template <typename Executor>
RowPartition partition_all_rows(const PartitionPoints& pts, const DistanceKernels& kern, std::size_t n,
                                std::size_t n_parts, const PartitionKnnParams& params, Executor& executor) {
  std::vector<int> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<int>(i);
  RowPartition parts = partition_rows(pts, kern, all, n_parts, params, 1, executor);
  split_outliers(pts, kern, parts, 2.0, params, executor);
  return parts;
}

// Each partition against itself, the largest first (one task each).
template <typename Executor>
void score_within_partitions(const PartitionedRows& rows, std::size_t bs, NeighbourHeaps<>& heaps,
                             BufferPool& pool, Phase<Executor>& phase, Executor& executor) {
  const RowPartition& parts = rows.parts;
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  std::vector<std::size_t> by_size(parts.count());
  for (std::size_t p = 0; p < by_size.size(); ++p) by_size[p] = p;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](std::size_t a, std::size_t b) { return parts.size(a) > parts.size(b); });
  batched_for(executor, by_size.size(), 8 * n_threads, [&](std::size_t b0, std::size_t b1) {
    std::unique_ptr<PartitionBuffers> buf = pool.take();
    for (std::size_t t = b0; t < b1; ++t) score_partition_itself(rows, by_size[t], bs, heaps, *buf);
    pool.give(std::move(buf));
  }, [&](std::size_t done) { phase.set(done); });
}

// The pairs of partitions in the order they are searched: batch after
// batch, batch b holding pairs[batch_start[b], batch_start[b + 1]).
struct PairSchedule {
  std::vector<PartitionPair> pairs;
  std::vector<std::size_t> batch_start;
  std::size_t batches() const { return batch_start.size() - 1; }
};

// Every pair of non-empty partitions (points of d values), nearest first.
inline std::vector<PartitionPair> pairs_nearest_first(const RowPartition& parts, const DistanceKernels& kern,
                                                      const BoundMargins& margin, std::size_t d) {
  std::vector<std::uint32_t> live;
  for (std::size_t p = 0; p < parts.count(); ++p) {
    if (parts.size(p) > 0) live.push_back(static_cast<std::uint32_t>(p));
  }
  std::vector<PartitionPair> pairs;
  pairs.reserve(live.size() * (live.size() - 1) / 2);
  for (std::size_t u = 0; u < live.size(); ++u) {
    for (std::size_t v = u + 1; v < live.size(); ++v) {
      const std::size_t a = live[u], b = live[v];
      const double dist = std::sqrt(kern.sqdist_d(&parts.centre[a * d], &parts.centre[b * d], d));
      pairs.push_back({margin.gap(dist, parts.radius[a] + parts.radius[b]), dist, live[u], live[v]});
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// The pairs (nearest first) in batches that share no partition: a pair goes
// to the batch after the last one holding either of its partitions, so each
// partition meets the others nearest first and a batch runs in parallel
// without locks. Which pairs are scored depends on the lists left by the
// batches before, never on the threads.
inline PairSchedule into_batches(const std::vector<PartitionPair>& pairs, std::size_t n_parts) {
  PairSchedule out;
  std::vector<std::size_t> batch_of(pairs.size());
  std::vector<std::size_t> last(n_parts, 0);
  std::size_t n_batches = 0;
  for (std::size_t t = 0; t < pairs.size(); ++t) {
    const std::size_t bt = std::max(last[pairs[t].a], last[pairs[t].b]) + 1;
    last[pairs[t].a] = last[pairs[t].b] = bt;
    batch_of[t] = bt - 1;
    n_batches = std::max(n_batches, bt);
  }
  out.batch_start.assign(n_batches + 1, 0);
  for (std::size_t t = 0; t < pairs.size(); ++t) ++out.batch_start[batch_of[t] + 1];
  for (std::size_t bt = 0; bt < n_batches; ++bt) out.batch_start[bt + 1] += out.batch_start[bt];
  out.pairs.resize(pairs.size());
  std::vector<std::size_t> fill(out.batch_start.begin(), out.batch_start.end() - 1);
  for (std::size_t t = 0; t < pairs.size(); ++t) out.pairs[fill[batch_of[t]]++] = pairs[t];
  return out;
}

// The search's state after every partition was scored against itself: the
// points in partition order and each row's and partition's reach.
template <typename Executor>
AcrossState start_across(const RowData& data, const PartitionPoints& pts, const RowPartition& parts,
                         const NeighbourHeaps<>& heaps, std::size_t others, std::size_t n_pairs,
                         Executor& executor) {
  const std::size_t n = data.n(), d = pts.d();
  AcrossState across;
  across.points.resize(n * d);
  across.reach.resize(n);
  across.widest.assign(parts.count(), 0.0);
  across.row_skipped.assign(n, 0);
  across.part_skipped.assign(parts.count(), 0);
  across.pair_products.assign(n_pairs, 0.0);
  across.pair_scored.assign(n_pairs, 0.0);
  executor.parallel_for(0, parts.count(), [&](std::size_t p0, std::size_t p1) {
    std::vector<float> scratch;
    for (std::size_t p = p0; p < p1; ++p) {
      pts.gather(parts.members(p), parts.size(p), &across.points[parts.start[p] * d]);
      double w = 0.0;
      for (std::size_t t = parts.start[p]; t < parts.start[p + 1]; ++t) {
        across.reach[t] = reach_of_row(data, heaps, t, static_cast<std::size_t>(parts.rows[t]), others, scratch);
        w = std::max(w, across.reach[t]);
      }
      across.widest[p] = w;
    }
  });
  checkpoint(executor);
  return across;
}

// The pairs of partitions, batch after batch (search_pair()), several small
// batches between checkpoints.
template <typename Executor>
void search_across(const PartitionedRows& rows, const BoundMargins& margin, const PairSchedule& schedule,
                   std::size_t others, std::size_t bs, NeighbourHeaps<>& heaps, AcrossState& across,
                   BufferPool& pool, Phase<Executor>& phase, Executor& executor) {
  const std::size_t n_threads = std::max<std::size_t>(1, executor.n_threads());
  const std::size_t n_batches = schedule.batches();
  std::size_t batches_done = 0;
  while (batches_done < n_batches) {
    const std::size_t first = batches_done;
    std::size_t pairs_in = 0;
    while (batches_done < n_batches && (batches_done == first || pairs_in < 64 * n_threads)) {
      const std::size_t p0 = schedule.batch_start[batches_done], p1 = schedule.batch_start[batches_done + 1];
      executor.parallel_for(p0, p1, [&](std::size_t t0, std::size_t t1) {
        std::unique_ptr<PartitionBuffers> buf = pool.take();
        for (std::size_t t = t0; t < t1; ++t) {
          search_pair(rows, margin, schedule.pairs[t], t, others, bs, heaps, across, *buf);
        }
        pool.give(std::move(buf));
      });
      pairs_in += p1 - p0;
      ++batches_done;
    }
    phase.set(rows.parts.count() + batches_done);
  }
}

// The graph from the candidate lists (by position in partition order):
// exact distances, the proof of exactness, and the wider pass where it
// fails (the rows left out either scored above the kept ones or lie in a
// partition the bound excluded). `refined` (length n) marks the rows that
// took the wider pass.
template <typename Executor>
KnnGraph finish_partitioned(const RowData& data, const RowPartition& parts, std::size_t k,
                            const NeighbourHeaps<>& heaps, std::vector<unsigned char>& refined,
                            Executor& executor) {
  const std::size_t n = data.n(), others = k - 1;
  KnnGraph graph(n, k);
  for (std::size_t i = 0; i < n; ++i) {
    graph.index(i, 0) = static_cast<int>(i);
    graph.distance(i, 0) = 0.0;
  }
  refined.assign(n, 0);
  // (rows in their own order, as the graph is column-major)
  std::vector<int> list_of(n);
  for (std::size_t t = 0; t < n; ++t) list_of[static_cast<std::size_t>(parts.rows[t])] = static_cast<int>(t);
  batched_for(executor, n, 4096, [&](std::size_t begin, std::size_t end) {
    std::vector<std::pair<double, int>> cand;
    TileBuffers tb;
    for (std::size_t i = begin; i < end; ++i) {
      refined[i] = finish_row(data, i, heaps, static_cast<std::size_t>(list_of[i]), {0, n, -1}, others, tb, cand);
      data.report_distances(cand, others);
      for (std::size_t c = 0; c < others; ++c) {
        graph.index(i, c + 1) = cand[c].second;
        graph.distance(i, c + 1) = cand[c].first;
      }
    }
  });
  return graph;
}

// The counts of PartitionKnnStats past the partition's (partitions,
// largest): the rows pruned, and the pairs scored and the
// products' work relative to the exact search's.
inline void count_search(const RowPartition& parts, const AcrossState& across, PartitionKnnStats& st) {
  const std::size_t n = across.reach.size();
  double own_pairs = 0.0;
  for (std::size_t p = 0; p < parts.count(); ++p) {
    own_pairs += static_cast<double>(parts.size(p)) * static_cast<double>(parts.size(p) - (parts.size(p) > 0));
  }
  double scored = own_pairs, products = own_pairs / 2.0;
  for (std::size_t t = 0; t < across.pair_scored.size(); ++t) {
    scored += across.pair_scored[t];
    products += across.pair_products[t];
  }
  for (std::size_t p = 0; p < parts.count(); ++p) {
    for (std::size_t t = parts.start[p]; t < parts.start[p + 1]; ++t) {
      st.rows_pruned += across.part_skipped[p] || across.row_skipped[t];
    }
  }
  st.rows_exhaustive = n - st.rows_pruned;
  st.pairs_scored = scored / (static_cast<double>(n) * static_cast<double>(n - 1));
  st.products = products / (static_cast<double>(n) * static_cast<double>(n - 1) / 2.0);
}

// The phase's closing line.
inline std::string partition_summary(const PartitionKnnStats& st, std::size_t n, std::size_t d, std::size_t k) {
  std::ostringstream msg;
  msg << std::setprecision(3) << "partition kNN: " << n << " rows, " << d << " columns, k = " << k << "; "
      << st.partitions << " partitions (largest " << st.largest << " rows); " << 100.0 * st.pairs_scored
      << "% of the pairs scored, in " << 100.0 * st.products << "% of the exact search's products; "
      << st.rows_pruned << " rows proved with partitions skipped, " << st.rows_exhaustive
      << " scored against every row; " << st.rows_refined << " rows needed a second, wider pass";
  return msg.str();
}

// The number of partitions of n rows for the settings (checked, with k).
inline std::size_t partition_count(std::size_t n, std::size_t k, const PartitionKnnParams& params) {
  if (k < 1 || k > n) throw std::invalid_argument("k must be between 1 and the number of rows");
  if (params.rows_per_partition < 1) throw std::invalid_argument("rows_per_partition must be at least 1");
  return std::min(n, std::max<std::size_t>(1, (n + params.rows_per_partition / 2) / params.rows_per_partition));
}

}  // namespace detail

// A forecast of the share of the exact search's products that
// partition_knn(data, x, k, params) would compute (1 where it runs the exact
// search), for choosing between the searches before running one. The data
// is partitioned as partition_knn() does; a few rows of each partition
// (its first `sampled`) stand for its rows' reach, their k-th distance within
// their own partition, and a pair of partitions counts whole when the bound
// between them does not exceed the larger of the two reaches. The reach
// within one partition is longer than the final one, so the forecast errs
// high.
template <typename Executor>
double partition_work_share(const RowData& data, const DenseColumnMajor& x, std::size_t k,
                            const PartitionKnnParams& params, Executor& executor, std::size_t sampled = 8) {
  const std::size_t n = data.n();
  const std::size_t n_parts = detail::partition_count(n, k, params);
  const std::size_t others = k - 1;
  if (others == 0 || n_parts < 2 || !detail::partition_applies(data, x)) return 1.0;
  const detail::PartitionPoints pts(x, data.metric());
  const detail::BoundMargins margin(x.d, pts.unit());
  const detail::RowPartition parts = detail::partition_all_rows(pts, data.kernels(), n, n_parts, params, executor);
  const std::size_t d = x.d;
  std::vector<double> reach(parts.count(), std::numeric_limits<double>::infinity());
  executor.parallel_for(0, parts.count(), [&](std::size_t p0, std::size_t p1) {
    std::vector<double> own, dist;
    for (std::size_t p = p0; p < p1; ++p) {
      const std::size_t m = parts.size(p);
      if (m <= others) continue;
      own.resize(m * d);
      pts.gather(parts.members(p), m, own.data());
      double widest = 0.0;
      for (std::size_t s = 0; s < std::min(sampled, m); ++s) {
        dist.clear();
        for (std::size_t t = 0; t < m; ++t) {
          if (t != s) dist.push_back(data.kernels().sqdist_d(&own[s * d], &own[t * d], d));
        }
        std::nth_element(dist.begin(), dist.begin() + static_cast<std::ptrdiff_t>(others - 1), dist.end());
        widest = std::max(widest, std::sqrt(dist[others - 1]));
      }
      reach[p] = widest;
    }
  });
  checkpoint(executor);
  double work = 0.0;
  for (std::size_t p = 0; p < parts.count(); ++p) {
    const double m = static_cast<double>(parts.size(p));
    work += m * (m - 1.0) / 2.0;
  }
  for (const detail::PartitionPair& pr : detail::pairs_nearest_first(parts, data.kernels(), margin, d)) {
    if (pr.gap <= std::max(reach[pr.a], reach[pr.b])) {
      work += static_cast<double>(parts.size(pr.a)) * static_cast<double>(parts.size(pr.b));
    }
  }
  const double all = static_cast<double>(n) * static_cast<double>(n - 1) / 2.0;
  return std::min(1.0, work / all);
}

// The intrinsic dimension of the rows (as points of the bound's space), by
// Levina and Bickel's maximum-likelihood estimate from the distances T_1 <=
// ... <= T_k of `sampled` seeded rows to their k nearest other rows, found by
// brute force: each row's inverse estimate mean_j log(T_k / T_j), j < k,
// averaged over the rows before inverting (MacKay and Ghahramani). Rows with a
// duplicate (T_1 = 0) are left out; 0 when none is left. It tells data on
// which the descent converges slowly (Gaussian clusters in 50 columns score
// about 35, the principal components of images 9 to 11), where the
// partitioned search wins even when it skips little. The same for any number
// of threads: each sampled row is one task's, and the sum runs in row order.
template <typename Executor>
double intrinsic_dimension(const DenseColumnMajor& x, Metric metric, const DistanceKernels& kern,
                           std::size_t sampled, std::size_t k, std::uint64_t seed, Executor& executor) {
  const std::size_t n = x.n, d = x.d;
  if (k < 2 || n < k + 1 || d == 0) return 0.0;
  sampled = std::min(sampled, n);
  const detail::PartitionPoints pts(x, metric);
  std::vector<int> rows;
  for (std::uint64_t r : sample_distinct(n, sampled, seed)) rows.push_back(static_cast<int>(r));
  std::vector<double> own(sampled * d), inverse(sampled, -1.0);
  pts.gather(rows.data(), sampled, own.data());
  const std::size_t group = 8, block = 512;
  const std::size_t n_groups = (sampled + group - 1) / group;
  executor.parallel_for(0, n_groups, [&](std::size_t g0, std::size_t g1) {
    std::vector<int> ids(block);
    std::vector<double> other(block * d);
    std::vector<std::vector<double>> nearest(group);
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t s0 = g * group, s1 = std::min(sampled, s0 + group);
      for (auto& h : nearest) h.clear();
      for (std::size_t b0 = 0; b0 < n; b0 += block) {
        const std::size_t m = std::min(n, b0 + block) - b0;
        for (std::size_t t = 0; t < m; ++t) ids[t] = static_cast<int>(b0 + t);
        pts.gather(ids.data(), m, other.data());
        for (std::size_t s = s0; s < s1; ++s) {
          std::vector<double>& heap = nearest[s - s0];  // a max-heap of the k least
          for (std::size_t t = 0; t < m; ++t) {
            if (ids[t] == rows[s]) continue;
            const double sq = kern.sqdist_d(&own[s * d], &other[t * d], d);
            if (!(sq >= 0.0)) continue;  // a zero row under cosine has no direction
            if (heap.size() < k) {
              heap.push_back(sq);
              std::push_heap(heap.begin(), heap.end());
            } else if (sq < heap.front()) {
              std::pop_heap(heap.begin(), heap.end());
              heap.back() = sq;
              std::push_heap(heap.begin(), heap.end());
            }
          }
        }
      }
      for (std::size_t s = s0; s < s1; ++s) {
        std::vector<double>& heap = nearest[s - s0];
        std::sort_heap(heap.begin(), heap.end());
        if (heap.size() < k || !(heap[0] > 0.0)) continue;
        double sum = 0.0;
        for (std::size_t j = 0; j + 1 < k; ++j) sum += 0.5 * std::log(heap[k - 1] / heap[j]);
        inverse[s] = sum / static_cast<double>(k - 1);
      }
    }
  });
  checkpoint(executor);
  double total = 0.0;
  std::size_t used = 0;
  for (double v : inverse) {
    if (v > 0.0) {
      total += v;
      ++used;
    }
  }
  return used == 0 ? 0.0 : static_cast<double>(used) / total;
}

// The k nearest neighbours of every row (the row itself included, first),
// identical to exact_knn(data, k): `x` is the data the RowData was built
// from (dense, as given), read for the partition and its bound.
template <typename Executor>
KnnGraph partition_knn(const RowData& data, const DenseColumnMajor& x, std::size_t k,
                       const PartitionKnnParams& params, Executor& executor, PartitionKnnStats* stats = nullptr) {
  const std::size_t n = data.n();
  const std::size_t n_parts = detail::partition_count(n, k, params);
  PartitionKnnStats local;
  PartitionKnnStats& st = stats ? *stats : local;
  st = PartitionKnnStats();
  const std::size_t others = k - 1;
  if (others == 0 || n_parts < 2 || !detail::partition_applies(data, x)) {
    ExactKnnStats es;
    KnnGraph g = exact_knn(data, k, executor, &es);
    st.rows_refined = es.rows_refined;
    st.rows_exhaustive = n;
    st.pairs_scored = 1.0;
    st.products = 1.0;
    return g;
  }
  st.partitioned = true;
  const detail::PartitionPoints pts(x, data.metric());
  const detail::BoundMargins margin(x.d, pts.unit());
  const detail::RowPartition parts = detail::partition_all_rows(pts, data.kernels(), n, n_parts, params, executor);
  for (std::size_t p = 0; p < parts.count(); ++p) {
    st.partitions += parts.size(p) > 0;
    st.largest = std::max(st.largest, parts.size(p));
  }
  NeighbourHeaps<> heaps(n, detail::candidate_capacity(others, n - 1), data.kernels());
  const std::size_t bs = 512;
  const detail::PairSchedule schedule =
      detail::into_batches(detail::pairs_nearest_first(parts, data.kernels(), margin, x.d), parts.count());

  Phase<Executor> phase(executor, "partition kNN", parts.count() + schedule.batches());
  detail::BufferPool pool;
  {
    const detail::PartitionedRows rows(data, parts, executor);
    detail::score_within_partitions(rows, bs, heaps, pool, phase, executor);
    detail::AcrossState across =
        detail::start_across(data, pts, parts, heaps, others, schedule.pairs.size(), executor);
    detail::search_across(rows, margin, schedule, others, bs, heaps, across, pool, phase, executor);
    detail::count_search(parts, across, st);
  }

  std::vector<unsigned char> refined;
  KnnGraph graph = detail::finish_partitioned(data, parts, k, heaps, refined, executor);
  for (unsigned char r : refined) st.rows_refined += r;
  phase.finish(detail::partition_summary(st, n, data.d(), k));
  return graph;
}

}  // namespace lsnn

#endif  // LSNN_PARTITION_KNN_H
