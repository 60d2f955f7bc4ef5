// The driver's settings of every layout (inst/include/lsnn/optimizer.h's
// DriverSettings) from the `layout` list that ne_layout_settings()
// (R/embed.R) builds: max_iter, epoch, and the R callback that watches the
// run, as the driver's observer.
#ifndef LSNN_R_DRIVER_H
#define LSNN_R_DRIVER_H

#include <Rcpp.h>

#include <lsnn/optimizer.h>

#include <algorithm>
#include <cstddef>

namespace lsnn_r {

// The callback as an observer: `callback` (R/embed.R's ne_callback():
// function(iteration, Y) returning TRUE to stop) sees rows [first, n) of
// the n x d layout as an R matrix. It runs on the main thread between steps;
// an R error or interrupt in it unwinds the core's frames as a C++
// exception (Rcpp's unwind protection) and is raised again in R.
inline lsnn::LayoutObserver r_observer(SEXP callback, std::size_t n, std::size_t d,
                                       std::size_t first) {
  if (Rf_isNull(callback)) return lsnn::LayoutObserver();
  const Rcpp::Function f(callback);
  return [f, n, d, first](int done, const double* Y) {
    const std::size_t m = n - first;
    Rcpp::NumericMatrix shown(static_cast<int>(m), static_cast<int>(d));
    for (std::size_t c = 0; c < d; ++c) {
      std::copy(Y + c * n + first, Y + (c + 1) * n, shown.begin() + c * m);
    }
    const SEXP stop = f(done, shown);
    return Rf_asLogical(stop) == TRUE;
  };
}

// list(max_iter, epoch, callback, callback_every, ...) for a layout of n x d
// whose rows from `first` on are the ones shown to the callback.
inline lsnn::DriverSettings driver_settings(const Rcpp::List& layout, std::size_t n,
                                            std::size_t d, std::size_t first) {
  lsnn::DriverSettings s;
  s.max_steps = Rcpp::as<int>(layout["max_iter"]);
  s.epoch = Rcpp::as<int>(layout["epoch"]);
  s.observe_every = Rcpp::as<int>(layout["callback_every"]);
  s.observer = r_observer(layout["callback"], n, d, first);
  return s;
}

}  // namespace lsnn_r

#endif  // LSNN_R_DRIVER_H
