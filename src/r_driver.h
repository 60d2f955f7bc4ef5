// The settings of every layout (inst/include/lsnn/embed/layout.h's LayoutSettings:
// the stepper, its own settings and the driver's of optimizer.h) from the
// `layout` list that ne_layout_settings() (R/embed.R) builds: max_iter,
// epoch, the R callback that watches the run, as the driver's observer, and
// the stepper's settings.
#ifndef LSNN_R_DRIVER_H
#define LSNN_R_DRIVER_H

#include <Rcpp.h>

#include <lsnn/embed/layout.h>
#include <lsnn/embed/optimizer.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "r_inputs.h"

namespace lsnn_r {

// A named element of a settings list (the R side always sets them all).
inline SEXP element(const Rcpp::List& list, const char* name) {
  if (!list.containsElementNamed(name)) Rcpp::stop("internal: setting '%s' is missing", name);
  return list[name];
}
inline double number(const Rcpp::List& list, const char* name) {
  return Rcpp::as<double>(element(list, name));
}
inline int whole(const Rcpp::List& list, const char* name) {
  return Rcpp::as<int>(element(list, name));
}
inline std::string word(const Rcpp::List& list, const char* name) {
  return Rcpp::as<std::string>(element(list, name));
}

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
  if (layout.containsElementNamed("cost_at_start")) {
    s.cost_at_start = Rcpp::as<bool>(layout["cost_at_start"]);
  }
  s.observe_every = Rcpp::as<int>(layout["callback_every"]);
  s.observer = r_observer(layout["callback"], n, d, first);
  return s;
}

// list(stepper = "gradient_descent" | "sampled" | "adam", the driver's
// settings (driver_settings()), tol, and the stepper's own: eta,
// eta_exaggerated, momentum, final_momentum, mom_switch_iter, exaggeration,
// stop_lying_iter, min_gain | learning_rate, negative_sample_rate, gamma,
// seed | learning_rate), for a layout of n x d whose rows from `first` on are
// shown to the callback. (The adam form also carries PaCMAP's schedule,
// which src/pacmap.cpp reads for its objective.)
inline lsnn::LayoutSettings layout_settings(const Rcpp::List& layout, std::size_t n,
                                            std::size_t d, std::size_t first) {
  lsnn::LayoutSettings s;
  s.driver = driver_settings(layout, n, d, first);
  const std::string stepper = word(layout, "stepper");
  if (stepper == "gradient_descent") {
    s.stepper = lsnn::StepperKind::gradient_descent;
    s.driver.tol = number(layout, "tol");
    lsnn::GradientDescentSettings& g = s.descent;
    g.eta = number(layout, "eta");
    g.eta_exaggerated = number(layout, "eta_exaggerated");
    g.momentum = number(layout, "momentum");
    g.final_momentum = number(layout, "final_momentum");
    g.mom_switch_iter = whole(layout, "mom_switch_iter");
    g.exaggeration = number(layout, "exaggeration");
    g.stop_lying_iter = whole(layout, "stop_lying_iter");
    g.min_gain = number(layout, "min_gain");
    s.driver.tol_after = g.stop_lying_iter;
  } else if (stepper == "sampled") {
    s.stepper = lsnn::StepperKind::sampled;
    lsnn::SampledSettings& g = s.sampled;
    g.learning_rate = number(layout, "learning_rate");
    g.negative_sample_rate = whole(layout, "negative_sample_rate");
    g.gamma = number(layout, "gamma");
    g.seed = seed_from_r(element(layout, "seed"));
  } else if (stepper == "adam") {
    s.stepper = lsnn::StepperKind::adam;
    s.adam.learning_rate = number(layout, "learning_rate");
  } else {
    Rcpp::stop("unknown stepper '%s'", stepper);
  }
  return s;
}

}  // namespace lsnn_r

#endif  // LSNN_R_DRIVER_H
