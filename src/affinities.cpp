// Glue for the input affinities (inst/include/lsnn/affinities.h): each entry
// point returns the CSR slots of a symmetric sparse matrix, which R wraps as
// a dgCMatrix (for a symmetric matrix CSR and CSC coincide).
#include <Rcpp.h>

#include <lsnn/affinities.h>
#include <lsnn/umap_ab.h>

#include <chrono>
#include <vector>

#include "kernels.h"
#include "r_executor.h"

namespace {

Rcpp::List csr_list(const lsnn::CsrMatrix& M) {
  return Rcpp::List::create(Rcpp::Named("p") = Rcpp::IntegerVector(M.ptr.begin(), M.ptr.end()),
                            Rcpp::Named("i") = Rcpp::IntegerVector(M.col.begin(), M.col.end()),
                            Rcpp::Named("x") = Rcpp::NumericVector(M.val.begin(), M.val.end()));
}

// 1-based R indices to 0-based, checked by the caller.
std::vector<int> zero_based(const Rcpp::IntegerMatrix& idx) {
  std::vector<int> out(idx.begin(), idx.end());
  for (int& v : out) --v;
  return out;
}

}  // namespace

// [[Rcpp::export(.perplexity_data)]]
Rcpp::List perplexity_data(Rcpp::NumericMatrix X, double perplexity, double tol,
                           int max_steps, int n_threads, std::string simd) {
  const std::size_t n = X.nrow(), D = X.ncol();
  lsnn::CalibrationSettings s;
  s.perplexity = perplexity;
  s.tol = tol;
  s.max_steps = max_steps;
  lsnn_r::RExecutor ex(n_threads, false);
  Rcpp::NumericVector beta(n);
  // `seconds`: the time spent in the core, without R's allocation of the
  // result (for the benchmark's comparison with programs that keep P inside)
  typedef std::chrono::steady_clock clock;
  auto secs = [](clock::duration t) { return std::chrono::duration<double>(t).count(); };
  return lsnn_r::run_core([&]() {
    const auto t0 = clock::now();
    lsnn::DenseAffinities P(lsnn_r::cost_kernels(simd), X.begin(), n, D, s, beta.begin(), ex);
    const auto t1 = clock::now();
    const std::size_t nnz = P.nnz();
    if (nnz > static_cast<std::size_t>(R_XLEN_T_MAX) || nnz > 2147483647u) {
      Rcpp::stop("more than 2^31 - 1 non-zero affinities: use a neighbour graph");
    }
    Rcpp::IntegerVector p(n + 1), i(Rcpp::no_init(nnz));
    Rcpp::NumericVector x(Rcpp::no_init(nnz));
    const auto t2 = clock::now();
    P.fill(p.begin(), i.begin(), x.begin(), ex);
    const double core = secs(t1 - t0) + secs(clock::now() - t2);
    return Rcpp::List::create(Rcpp::Named("p") = p, Rcpp::Named("i") = i,
                              Rcpp::Named("x") = x, Rcpp::Named("beta") = beta,
                              Rcpp::Named("n_failed") = static_cast<double>(P.n_failed()),
                              Rcpp::Named("seconds") = core);
  });
}

// [[Rcpp::export(.perplexity_graph)]]
Rcpp::List perplexity_graph(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                            double perplexity, double tol, int max_steps, int n_threads,
                            std::string simd) {
  const std::size_t n = idx.nrow(), k = idx.ncol();
  lsnn::CalibrationSettings s;
  s.perplexity = perplexity;
  s.tol = tol;
  s.max_steps = max_steps;
  lsnn_r::RExecutor ex(n_threads, false);
  const std::vector<int> idx0 = zero_based(idx);
  Rcpp::NumericVector beta(n);
  return lsnn_r::run_core([&]() {
    std::size_t n_failed = 0;
    const lsnn::CsrMatrix P =
        lsnn::perplexity_graph(lsnn_r::cost_kernels(simd), idx0.data(), dist.begin(), n, k,
                               s, beta.begin(), n_failed, ex);
    Rcpp::List out = csr_list(P);
    out["beta"] = beta;
    out["n_failed"] = static_cast<double>(n_failed);
    return out;
  });
}

// [[Rcpp::export(.umap_graph)]]
Rcpp::List umap_graph(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                      double local_connectivity, double bandwidth, double mix,
                      int n_threads) {
  const std::size_t n = idx.nrow(), k = idx.ncol();
  lsnn::UmapSettings s;
  s.local_connectivity = local_connectivity;
  s.bandwidth = bandwidth;
  s.set_op_mix_ratio = mix;
  lsnn_r::RExecutor ex(n_threads, false);
  const std::vector<int> idx0 = zero_based(idx);
  Rcpp::NumericVector sigma(n), rho(n);
  return lsnn_r::run_core([&]() {
    const lsnn::CsrMatrix V =
        lsnn::umap_graph(idx0.data(), dist.begin(), n, k, s, sigma.begin(), rho.begin(), ex);
    Rcpp::List out = csr_list(V);
    out["sigma"] = sigma;
    out["rho"] = rho;
    return out;
  });
}

// [[Rcpp::export(.umap_ab)]]
Rcpp::NumericVector umap_ab_fit(double spread, double min_dist) {
  const auto ab = lsnn::fit_umap_ab(spread, min_dist);
  return Rcpp::NumericVector::create(Rcpp::Named("a") = ab.first, Rcpp::Named("b") = ab.second);
}
