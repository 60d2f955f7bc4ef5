// Glue for the input affinities (inst/include/lsnn/embed/affinities.h): each entry
// point returns the CSR slots of a symmetric sparse matrix, which R wraps as
// a dgCMatrix (for a symmetric matrix CSR and CSC coincide).
#include <Rcpp.h>

#include <lsnn/embed/affinities.h>
#include <lsnn/base/large_buffer.h>
#include <lsnn/embed/umap_ab.h>

#include <utility>
#include <vector>

#include "graph_convert.h"
#include "kernel_choice.h"
#include "r_executor.h"

namespace {

Rcpp::List csr_list(const lsnn::CsrMatrix& M) {
  return Rcpp::List::create(Rcpp::Named("p") = Rcpp::IntegerVector(M.ptr.begin(), M.ptr.end()),
                            Rcpp::Named("i") = Rcpp::IntegerVector(M.col.begin(), M.col.end()),
                            Rcpp::Named("x") = Rcpp::NumericVector(M.val.begin(), M.val.end()));
}

// The CSR slots the core filled in R's vectors (nnz of the room used) with
// the precisions: the used part of i and x (shorter copies when entries
// were dropped).
Rcpp::List filled_csr_list(Rcpp::IntegerVector p, Rcpp::IntegerVector i, Rcpp::NumericVector x,
                           Rcpp::NumericVector beta, std::size_t nnz, std::size_t n_failed) {
  if (nnz < static_cast<std::size_t>(i.size())) {
    i = Rcpp::IntegerVector(i.begin(), i.begin() + nnz);
    x = Rcpp::NumericVector(x.begin(), x.begin() + nnz);
  }
  return Rcpp::List::create(Rcpp::Named("p") = p, Rcpp::Named("i") = i, Rcpp::Named("x") = x,
                            Rcpp::Named("beta") = beta,
                            Rcpp::Named("n_failed") = static_cast<double>(n_failed));
}

}  // namespace

// [[Rcpp::export(.perplexity_data)]]
Rcpp::List perplexity_data(Rcpp::NumericMatrix X, double perplexity, int n_threads,
                           std::string simd, bool verbose) {
  const std::size_t n = X.nrow(), D = X.ncol();
  lsnn::CalibrationSettings s;
  s.perplexity = perplexity;
  lsnn_r::RExecutor ex(n_threads, verbose);
  Rcpp::NumericVector beta(n);
  if (static_cast<double>(n) * static_cast<double>(n - 1) > 2147483647.0) {
    Rcpp::stop("more than 2^31 - 1 pairs: use a neighbour graph");
  }
  // Room for every off-diagonal entry; the core fills it in place. It is
  // hundreds of MB that R has just allocated, and faulting them in 4 KB
  // pages costs about as much as computing them: huge pages.
  const R_xlen_t room = static_cast<R_xlen_t>(n * (n - 1));
  Rcpp::IntegerVector p(Rcpp::no_init(n + 1)), i(Rcpp::no_init(room));
  Rcpp::NumericVector x(Rcpp::no_init(room));
  lsnn::advise_huge_pages(i.begin(), static_cast<std::size_t>(room) * sizeof(int));
  lsnn::advise_huge_pages(x.begin(), static_cast<std::size_t>(room) * sizeof(double));
  return lsnn_r::run_core([&]() {
    std::size_t n_failed = 0;
    const std::size_t nnz = lsnn::perplexity_all_pairs(lsnn_r::cost_kernels(simd), X.begin(), n, D,
                                                       s, beta.begin(), p.begin(), i.begin(),
                                                       x.begin(), n_failed, ex);
    // (underflowed entries are dropped)
    return filled_csr_list(p, i, x, beta, nnz, n_failed);
  });
}

// The conditional rows p_{j|i} of a graph, as CSR slots (R's vectors,
// filled in place), with the precisions.
// [[Rcpp::export(.perplexity_rows)]]
Rcpp::List perplexity_rows(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist, double perplexity,
                           int n_threads, std::string simd, bool verbose) {
  const std::size_t n = idx.nrow();
  lsnn::CalibrationSettings s;
  s.perplexity = perplexity;
  lsnn_r::RExecutor ex(n_threads, verbose);
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  const R_xlen_t room = static_cast<R_xlen_t>(lsnn::graph_entries(g));
  Rcpp::NumericVector beta(n);
  Rcpp::IntegerVector p(Rcpp::no_init(n + 1)), i(Rcpp::no_init(room));
  Rcpp::NumericVector x(Rcpp::no_init(room));
  return lsnn_r::run_core([&]() {
    std::size_t n_failed = 0;
    const std::size_t nnz = lsnn::perplexity_rows_into(
        lsnn_r::cost_kernels(simd), g, s, beta.begin(), n_failed,
        lsnn::CsrArrays{p.begin(), i.begin(), x.begin()}, ex);
    return filled_csr_list(p, i, x, beta, nnz, n_failed);
  });
}

// The symmetric P of .perplexity_rows()'s rows (n x n, CSR slots), scaled to
// sum 1, written straight into R's vectors.
// [[Rcpp::export(.symmetric_perplexity)]]
Rcpp::List symmetric_perplexity(Rcpp::IntegerVector p, Rcpp::IntegerVector i,
                                Rcpp::NumericVector x, int n_threads) {
  const std::size_t n = static_cast<std::size_t>(p.size()) - 1;
  if (p.size() < 1 || p[0] != 0 || p[n] != i.size() || i.size() != x.size()) {
    Rcpp::stop("internal: malformed conditional affinities");
  }
  lsnn_r::RExecutor ex(n_threads, false);
  const lsnn::SparseRows C{p.begin(), i.begin(), x.begin(), n, n};
  Rcpp::IntegerVector sp(Rcpp::no_init(n + 1)), si;
  Rcpp::NumericVector sx;
  return lsnn_r::run_core([&]() {
    lsnn::symmetric_perplexity_into(
        C,
        [&](std::size_t nnz) {
          si = Rcpp::IntegerVector(Rcpp::no_init(static_cast<R_xlen_t>(nnz)));
          sx = Rcpp::NumericVector(Rcpp::no_init(static_cast<R_xlen_t>(nnz)));
          return lsnn::CsrArrays{sp.begin(), si.begin(), sx.begin()};
        },
        ex);
    return Rcpp::List::create(Rcpp::Named("p") = sp, Rcpp::Named("i") = si,
                              Rcpp::Named("x") = sx);
  });
}

// [[Rcpp::export(.umap_graph)]]
Rcpp::List umap_graph(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist,
                      double local_connectivity, double bandwidth, double mix,
                      int n_threads, bool verbose) {
  const std::size_t n = idx.nrow();
  lsnn::UmapSettings s;
  s.local_connectivity = local_connectivity;
  s.bandwidth = bandwidth;
  s.set_op_mix_ratio = mix;
  lsnn_r::RExecutor ex(n_threads, verbose);
  const lsnn::GraphView g = lsnn_r::graph_view(idx, dist, idx.ncol());
  Rcpp::NumericVector sigma(n), rho(n);
  return lsnn_r::run_core([&]() {
    const lsnn::CsrMatrix V =
        lsnn::umap_graph(g, s, sigma.begin(), rho.begin(), ex);
    Rcpp::List out = csr_list(V);
    out["sigma"] = sigma;
    out["rho"] = rho;
    return out;
  });
}

// The affinities of new rows to reference rows from their neighbour graph
// (m x k, 1-based reference rows, no self column): "perplexity" gives the
// conditional p_{j|i}, "umap" the directed memberships v_{j|i}; CSR slots
// of the m rows.
// [[Rcpp::export(.query_affinities)]]
Rcpp::List query_affinities(Rcpp::IntegerMatrix idx, Rcpp::NumericMatrix dist, int n_ref,
                            std::string kind, double perplexity, int n_threads, std::string simd,
                            bool verbose) {
  const std::size_t m = idx.nrow();
  const lsnn::GraphView g = lsnn_r::query_graph_view(idx, dist, n_ref);
  lsnn_r::RExecutor ex(n_threads, verbose);
  return lsnn_r::run_core([&]() {
    std::vector<double> scale(m), shift(m);
    if (kind == "perplexity") {
      lsnn::CalibrationSettings s;
      s.perplexity = perplexity;
      std::size_t n_failed = 0;
      Rcpp::List out = csr_list(
          lsnn::perplexity_rows(lsnn_r::cost_kernels(simd), g, s, scale.data(), n_failed, ex));
      out["n_failed"] = static_cast<double>(n_failed);
      return out;
    }
    lsnn::UmapSettings s;
    return csr_list(lsnn::umap_memberships(g, s, scale.data(), shift.data(), ex));
  });
}

// [[Rcpp::export(.umap_ab)]]
Rcpp::NumericVector umap_ab_fit(double spread, double min_dist) {
  std::pair<double, double> ab;
  try {
    ab = lsnn::fit_umap_ab(spread, min_dist);
  } catch (const std::exception& e) {
    throw Rcpp::exception(e.what(), false);  // an R error without the internal call
  }
  return Rcpp::NumericVector::create(Rcpp::Named("a") = ab.first, Rcpp::Named("b") = ab.second);
}
