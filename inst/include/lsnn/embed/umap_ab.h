// UMAP's output weight curve 1 / (1 + a d^(2b)), fitted as UMAP does: least
// squares against the target membership y(d) = 1 for d < min_dist and
// exp(-(d - min_dist) / spread) beyond, on 300 evenly spaced d in
// [0, 3 spread], starting from a = b = 1. Solved here by Levenberg-Marquardt,
// in units of spread (the least-squares problem is the same, and the start
// a = b = 1 stays near the answer whatever the spread): a fit a' of
// 1 / (1 + a' (d / spread)^(2b)) is a = a' spread^(-2b).
//
// When no curve with positive finite a and b fits (min_dist at or beyond the
// fitted range makes the target flat; a spread so extreme that a leaves the
// double range), fit_umap_ab() throws std::domain_error rather than return
// a curve that is not one.
#ifndef LSNN_UMAP_AB_H
#define LSNN_UMAP_AB_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lsnn {

namespace detail {

// a and b for spread 1.
inline std::pair<double, double> fit_umap_ab_unit(double min_dist) {
  const int m = 300;
  std::vector<double> x(m), y(m);
  for (int t = 0; t < m; ++t) {
    x[t] = 3.0 * t / (m - 1);
    y[t] = x[t] < min_dist ? 1.0 : std::exp(-(x[t] - min_dist));
  }
  auto sse = [&](double a, double b) {
    double s = 0.0;
    for (int t = 0; t < m; ++t) {
      const double r = 1.0 / (1.0 + a * std::pow(x[t], 2.0 * b)) - y[t];
      s += r * r;
    }
    return s;
  };
  double a = 1.0, b = 1.0, lambda = 1e-3;
  double f = sse(a, b);
  for (int iter = 0; iter < 1000; ++iter) {
    // normal equations J^T J and J^T r
    double h11 = 0.0, h12 = 0.0, h22 = 0.0, g1 = 0.0, g2 = 0.0;
    for (int t = 0; t < m; ++t) {
      if (x[t] <= 0.0) continue;  // f = 1 there whatever a, b
      const double u = std::pow(x[t], 2.0 * b);
      const double den = 1.0 + a * u;
      const double r = 1.0 / den - y[t];
      const double ja = -u / (den * den);
      const double jb = ja * a * 2.0 * std::log(x[t]);
      h11 += ja * ja;
      h12 += ja * jb;
      h22 += jb * jb;
      g1 += ja * r;
      g2 += jb * r;
    }
    bool improved = false;
    for (int tries = 0; tries < 50 && !improved; ++tries) {
      const double d11 = h11 * (1.0 + lambda), d22 = h22 * (1.0 + lambda);
      const double det = d11 * d22 - h12 * h12;
      const double da = -(d22 * g1 - h12 * g2) / det;
      const double db = -(d11 * g2 - h12 * g1) / det;
      const double fn = sse(a + da, b + db);
      if (std::isfinite(fn) && fn <= f) {
        const double rel = std::fabs(da) / std::fabs(a) + std::fabs(db) / std::fabs(b);
        a += da;
        b += db;
        const double df = f - fn;
        f = fn;
        lambda = std::max(lambda / 10.0, 1e-12);
        improved = true;
        if (rel < 1e-13 || df <= 1e-16 * f) return {a, b};
      } else {
        lambda *= 10.0;
      }
    }
    if (!improved) break;
  }
  return {a, b};
}

}  // namespace detail

inline std::pair<double, double> fit_umap_ab(double spread, double min_dist) {
  if (!(spread > 0.0) || !std::isfinite(spread)) {
    throw std::invalid_argument("'spread' must be a positive finite number");
  }
  if (!(min_dist >= 0.0) || !std::isfinite(min_dist)) {
    throw std::invalid_argument("'min_dist' must be a finite number at least 0");
  }
  const double scaled_min_dist = min_dist / spread;
  std::pair<double, double> ab{NAN, NAN};
  if (scaled_min_dist < 3.0) ab = detail::fit_umap_ab_unit(scaled_min_dist);
  const double b = ab.second;
  const double a = ab.first * std::pow(spread, -2.0 * b);
  if (!(a > 0.0 && b > 0.0 && std::isfinite(a) && std::isfinite(b))) {
    char msg[320];
    std::snprintf(msg, sizeof(msg),
                  "no curve 1 / (1 + a d^(2b)) with positive finite a and b fits "
                  "'spread' = %g and 'min_dist' = %g: 'min_dist' must be well below "
                  "3 * 'spread' (the end of the fitted range), and 'spread' not extreme",
                  spread, min_dist);
    throw std::domain_error(msg);
  }
  return {a, b};
}

}  // namespace lsnn

#endif  // LSNN_UMAP_AB_H
