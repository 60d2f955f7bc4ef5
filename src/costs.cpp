// Glue for the embedding costs (inst/include/lsnn/costs.h) and the optimizer
// (optimizer.h). P arrives as the slots of a symmetric dgCMatrix.
#include <Rcpp.h>

#include <lsnn/costs.h>
#include <lsnn/optimizer.h>
#include <lsnn/sampled_sgd.h>

#include <cmath>
#include <cstdint>
#include <vector>
#include <string>

#include "kernels.h"
#include "r_executor.h"

namespace {

lsnn::CostSettings cost_settings(const std::string& method, double gamma, double alpha,
                                 double a, double b, double eps, const std::string& gradient,
                                 const Rcpp::NumericVector& grid) {
  lsnn::CostSettings s;
  if (gradient == "exact") {
    s.gradient = lsnn::GradientKind::exact;
  } else if (gradient == "approx") {
    s.gradient = lsnn::GradientKind::approx;
  } else {
    Rcpp::stop("unknown gradient '%s'", gradient);
  }
  if (grid.size() >= 3) {
    // c(nodes, box width, min boxes[, near field, points per box, near boxes])
    s.grid_set = true;
    s.grid.nodes = static_cast<int>(grid[0]);
    s.grid.box_width = grid[1];
    s.grid.min_boxes = static_cast<int>(grid[2]);
    s.grid.near_field = grid.size() >= 4 ? grid[3] != 0.0 : false;
    s.grid.points_per_box = grid.size() >= 5 ? grid[4] : 0.0;
    s.grid.near_boxes = grid.size() >= 6 ? static_cast<int>(grid[5]) : 1;
  }
  if (method == "tsne") {
    s.method = lsnn::CostMethod::tsne;
  } else if (method == "largevis") {
    s.method = lsnn::CostMethod::largevis;
  } else if (method == "largevis_exp") {
    s.method = lsnn::CostMethod::largevis_exp;
  } else if (method == "umap") {
    s.method = lsnn::CostMethod::umap;
  } else {
    Rcpp::stop("unknown cost method '%s'", method);
  }
  s.gamma = gamma;
  s.alpha = alpha;
  s.a = a;
  s.b = b;
  s.eps = eps;
  return s;
}

// The slots of a symmetric dgCMatrix, read in place.
lsnn::SparseRows sparse_view(std::size_t n, const Rcpp::IntegerVector& ptr,
                             const Rcpp::IntegerVector& col, const Rcpp::NumericVector& val) {
  return lsnn::SparseRows{ptr.begin(), col.begin(), val.begin(), n, n};
}

}  // namespace

// [[Rcpp::export(.cost_gradient)]]
Rcpp::List cost_gradient_cpp(Rcpp::NumericMatrix Y, Rcpp::IntegerVector ptr,
                             Rcpp::IntegerVector col, Rcpp::NumericVector val,
                             std::string method, double gamma, double alpha, double a,
                             double b, double eps, std::string gradient,
                             Rcpp::NumericVector grid, int n_threads, std::string simd) {
  const std::size_t n = Y.nrow(), d = Y.ncol();
  lsnn_r::RExecutor ex(n_threads, false);
  Rcpp::NumericMatrix grad(n, d);
  Rcpp::NumericVector pcost(n);
  return lsnn_r::run_core([&]() {
    lsnn::CostEvaluator ev(lsnn_r::cost_kernels(simd),
                           cost_settings(method, gamma, alpha, a, b, eps, gradient, grid),
                           sparse_view(n, ptr, col, val), d);
    const double cost = ev.evaluate(Y.begin(), 1.0, true, grad.begin(), pcost.begin(), ex);
    if (std::isnan(cost) || !lsnn::all_finite(grad.begin(), n * d)) {
      throw Rcpp::exception(
          "'Y' is too spread out: squared distances between its points overflow (keep "
          "|Y| well below 1e150), so the cost or its gradient is not a finite number",
          false);
    }
    return Rcpp::List::create(Rcpp::Named("cost") = cost, Rcpp::Named("gradient") = grad,
                              Rcpp::Named("pcost") = pcost);
  });
}

// [[Rcpp::export(.embed_optimize)]]
Rcpp::List embed_optimize(Rcpp::NumericMatrix Y0, Rcpp::IntegerVector ptr,
                          Rcpp::IntegerVector col, Rcpp::NumericVector val,
                          std::string method, double gamma, double alpha, double a,
                          double b, double eps, std::string gradient,
                          Rcpp::NumericVector grid, int max_iter, double eta, double momentum,
                          double final_momentum, int mom_switch_iter, double exaggeration,
                          int stop_lying_iter, double min_gain, double tol, int epoch,
                          int n_threads, bool verbose, std::string simd) {
  const std::size_t n = Y0.nrow(), d = Y0.ncol();
  lsnn_r::RExecutor ex(n_threads, verbose);
  Rcpp::NumericMatrix Y = Rcpp::clone(Y0);
  lsnn::OptimizerSettings s;
  s.max_iter = max_iter;
  s.eta = eta;
  s.momentum = momentum;
  s.final_momentum = final_momentum;
  s.mom_switch_iter = mom_switch_iter;
  s.exaggeration = exaggeration;
  s.stop_lying_iter = stop_lying_iter;
  s.min_gain = min_gain;
  s.tol = tol;
  s.epoch = epoch;
  return lsnn_r::run_core([&]() {
    lsnn::CostEvaluator ev(lsnn_r::cost_kernels(simd),
                           cost_settings(method, gamma, alpha, a, b, eps, gradient, grid),
                           sparse_view(n, ptr, col, val), d);
    const lsnn::OptimizerResult res = lsnn::optimize_embedding(ev, Y.begin(), s, ex);
    Rcpp::NumericVector cost(res.cost.begin(), res.cost.end());
    cost.attr("names") = Rcpp::IntegerVector(res.cost_iter.begin(), res.cost_iter.end());
    return Rcpp::List::create(Rcpp::Named("Y") = Y, Rcpp::Named("cost") = cost,
                              Rcpp::Named("iterations") = res.iterations,
                              Rcpp::Named("converged") = res.converged);
  });
}

// [[Rcpp::export(.embed_sampled)]]
Rcpp::List embed_sampled(Rcpp::NumericMatrix Y0, Rcpp::IntegerVector ptr, Rcpp::IntegerVector col,
                         Rcpp::NumericVector val, std::string method, double gamma,
                         double cost_gamma, double alpha, double a, double b, double eps,
                         std::string cost_gradient,
                         int n_epochs, double learning_rate, int negative_sample_rate,
                         double seed, int epoch, int n_threads, bool verbose, std::string simd) {
  const std::size_t n = Y0.nrow(), d = Y0.ncol();
  lsnn_r::RExecutor ex(n_threads, verbose);
  Rcpp::NumericMatrix Y = Rcpp::clone(Y0);
  lsnn::SampledSettings s;
  s.n_epochs = n_epochs;
  s.learning_rate = learning_rate;
  s.negative_sample_rate = negative_sample_rate;
  s.gamma = gamma;
  s.seed = static_cast<std::uint64_t>(seed);
  s.epoch = epoch;
  return lsnn_r::run_core([&]() {
    // the cost of the documented objective (its own repulsion weight), for the record
    const lsnn::CostSettings cs = cost_settings(method, cost_gamma, alpha, a, b, eps, cost_gradient,
                                                Rcpp::NumericVector(0));
    const lsnn::SparseRows P = sparse_view(n, ptr, col, val);
    lsnn::CostEvaluator ev(lsnn_r::cost_kernels(simd), cs, P, d);
    std::vector<double> grad(n * d);
    lsnn::SampledKernel k;
    k.pair.method = cs.method;
    k.pair.alpha = alpha;
    k.pair.a = a;
    k.pair.b = b;
    k.pair.eps = eps;
    const lsnn::OptimizerResult res = lsnn::optimize_sampled(
        P, Y.begin(), d, k, s,
        [&](const double* y) { return ev.evaluate(y, 1.0, true, grad.data(), nullptr, ex); }, ex);
    Rcpp::NumericVector cost(res.cost.begin(), res.cost.end());
    cost.attr("names") = Rcpp::IntegerVector(res.cost_iter.begin(), res.cost_iter.end());
    return Rcpp::List::create(Rcpp::Named("Y") = Y, Rcpp::Named("cost") = cost,
                              Rcpp::Named("iterations") = res.iterations,
                              Rcpp::Named("converged") = false);
  });
}

// [[Rcpp::export(.cost_kernels_name)]]
std::string cost_kernels_name(std::string simd) { return lsnn_r::cost_kernels(simd).name; }
