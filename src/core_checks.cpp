// Internal entry points that run single pieces of the core on their own, for
// the tests (tests/testthat/test-core.R).
#include <Rcpp.h>

#include <lsnn/knn/neighbour_heaps.h>
#include <lsnn/knn/nndescent.h>
#include <lsnn/base/tile_schedule.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernel_choice.h"
#include "r_executor.h"

// The rounds of round_robin_rounds(): one two-column matrix of 0-based
// block pairs per round.
// [[Rcpp::export(.check_tile_rounds)]]
Rcpp::List check_tile_rounds(int n_blocks) {
  const std::vector<lsnn::TileRound> rounds = lsnn::round_robin_rounds(static_cast<std::size_t>(n_blocks));
  Rcpp::List out(rounds.size());
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    Rcpp::IntegerMatrix m(static_cast<int>(rounds[r].size()), 2);
    for (std::size_t t = 0; t < rounds[r].size(); ++t) {
      m(t, 0) = static_cast<int>(rounds[r][t].first);
      m(t, 1) = static_cast<int>(rounds[r][t].second);
    }
    out[r] = m;
  }
  return out;
}

// Offers entries (row, value, index, flag) to bounded heaps of `capacity`
// and returns every row's kept entries in (value, index) order as a data
// frame. `mode`: "push" offers them one by one (duplicates rejected);
// "merge" fills each row with its first `capacity` distinct entries
// (fill_new) and merges the rest in at once (merge_new), the entries of a
// row being distinct.
// [[Rcpp::export(.check_heaps)]]
Rcpp::DataFrame check_heaps(Rcpp::IntegerVector row, Rcpp::NumericVector value,
                            Rcpp::IntegerVector index, Rcpp::IntegerVector flag, int n,
                            int capacity, std::string mode, std::string simd) {
  lsnn::NeighbourHeaps<true> heaps(static_cast<std::size_t>(n), static_cast<std::size_t>(capacity),
                                   lsnn_r::distance_kernels(simd));
  const std::size_t m = static_cast<std::size_t>(row.size());
  std::vector<int> added(static_cast<std::size_t>(n), 0);
  if (mode == "push") {
    for (std::size_t e = 0; e < m; ++e) {
      const bool in = heaps.push(static_cast<std::size_t>(row[e]), static_cast<float>(value[e]), index[e],
                                 static_cast<std::uint8_t>(flag[e]));
      added[static_cast<std::size_t>(row[e])] += in;
    }
  } else {
    std::vector<lsnn::HeapEntry> scratch;
    std::vector<float> values;
    for (int r = 0; r < n; ++r) {
      // Entries of one flag at a time (fill_new and merge_new take one).
      std::vector<std::pair<float, int>> first, rest;
      std::vector<std::uint8_t> rest_flag;
      std::uint8_t first_flag = 0;
      for (std::size_t e = 0; e < m; ++e) {
        if (row[e] != r) continue;
        if (first.empty()) first_flag = static_cast<std::uint8_t>(flag[e]);
        if (first.size() < static_cast<std::size_t>(capacity) && flag[e] == first_flag) {
          first.emplace_back(static_cast<float>(value[e]), index[e]);
        } else {
          rest.emplace_back(static_cast<float>(value[e]), index[e]);
          rest_flag.push_back(static_cast<std::uint8_t>(flag[e]));
        }
      }
      heaps.fill_new(static_cast<std::size_t>(r), first.data(), first.size(), first_flag);
      added[r] += static_cast<int>(first.size());
      for (std::size_t a = 0; a < rest.size();) {
        std::size_t b = a;
        while (b < rest.size() && rest_flag[b] == rest_flag[a]) ++b;
        added[r] += static_cast<int>(heaps.merge_new(static_cast<std::size_t>(r), &rest[a], b - a,
                                                     rest_flag[a], scratch, values));
        a = b;
      }
    }
  }
  std::vector<int> out_row, out_index, out_flag;
  std::vector<double> out_value, out_threshold;
  for (int r = 0; r < n; ++r) {
    const std::size_t rr = static_cast<std::size_t>(r);
    std::vector<std::pair<std::pair<float, int>, int>> kept;
    for (std::size_t c = 0; c < heaps.size(rr); ++c) {
      kept.push_back({{heaps.values(rr)[c], heaps.indices(rr)[c]}, heaps.flags(rr)[c]});
    }
    std::sort(kept.begin(), kept.end());
    for (const auto& e : kept) {
      out_row.push_back(r);
      out_value.push_back(e.first.first);
      out_index.push_back(e.first.second);
      out_flag.push_back(e.second);
      out_threshold.push_back(heaps.threshold(rr));
    }
  }
  Rcpp::DataFrame df = Rcpp::DataFrame::create(
      Rcpp::Named("row") = out_row, Rcpp::Named("value") = out_value,
      Rcpp::Named("index") = out_index, Rcpp::Named("flag") = out_flag,
      Rcpp::Named("threshold") = out_threshold);
  df.attr("added") = Rcpp::IntegerVector(added.begin(), added.end());
  return df;
}

namespace {

// A row-major n x K matrix of the lists' indices (or flags), -1 past a
// row's size.
Rcpp::IntegerMatrix list_matrix(const lsnn::NeighbourHeaps<true>& heaps, bool flags) {
  const std::size_t n = heaps.n_rows(), K = heaps.capacity();
  Rcpp::IntegerMatrix out(static_cast<int>(n), static_cast<int>(K));
  std::fill(out.begin(), out.end(), -1);
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t c = 0; c < heaps.size(p); ++c) {
      out(p, c) = flags ? heaps.flags(p)[c] : heaps.indices(p)[c];
    }
  }
  return out;
}

}  // namespace

// The steps of the approximate search (nndescent.h) run one by one on dense
// data, euclidean, with the lists in their new numbering (row s is row
// perm[s] of x, 0-based): after the forest and the random fill, the reverse
// lists, the candidates of iteration 0, and the lists after that
// iteration's local joins and updates.
// [[Rcpp::export(.check_nnd_steps)]]
Rcpp::List check_nnd_steps(Rcpp::NumericMatrix x, int k, int n_trees, int leaf_size,
                           int max_candidates, std::string simd) {
  const lsnn::DenseColumnMajor view{x.begin(), static_cast<std::size_t>(x.nrow()),
                                    static_cast<std::size_t>(x.ncol())};
  const lsnn::RowData data(view, lsnn::Metric::euclidean, lsnn_r::distance_kernels(simd));
  lsnn_r::RExecutor executor(1, false);
  lsnn::ApproxKnnParams par;
  par.n_trees = static_cast<std::size_t>(n_trees);
  par.leaf_size = static_cast<std::size_t>(leaf_size);
  par.max_candidates = static_cast<std::size_t>(max_candidates);
  par.seed = 42;
  par = lsnn::detail::resolve_approx_params(par, data.n(), data.d(), static_cast<std::size_t>(k));
  const std::size_t n = data.n(), K = static_cast<std::size_t>(k) - 1;
  return lsnn_r::run_core([&]() {
    const lsnn::ScoreSpace space(data, executor);
    std::vector<lsnn::RpTree> trees = lsnn::detail::build_forest(space, par, executor);
    const std::vector<int> perm = trees[0].order;
    std::vector<int> inv(n);
    for (std::size_t s = 0; s < n; ++s) inv[static_cast<std::size_t>(perm[s])] = static_cast<int>(s);
    lsnn::NeighbourHeaps<true> heaps(n, K, data.kernels());
    for (std::size_t t = 0; t < trees.size(); ++t) {
      lsnn::detail::search_leaves(space, trees[t], lsnn::detail::tree_flag(t), inv, heaps, executor);
    }
    const std::size_t filled = lsnn::detail::random_fill(space, perm, par.seed, heaps, executor);
    Rcpp::IntegerMatrix forest = list_matrix(heaps, false), forest_flags = list_matrix(heaps, true);
    lsnn::detail::ReverseLists rev;
    lsnn::detail::reverse_lists(heaps, rev, executor);
    lsnn::detail::Candidates cand(n, par.max_candidates);
    lsnn::detail::sample_candidates(heaps, rev, par.seed, 0, cand, executor);
    Rcpp::IntegerMatrix sampled_flags = list_matrix(heaps, true);
    Rcpp::List fresh(n), stale(n);
    for (std::size_t p = 0; p < n; ++p) {
      fresh[p] = Rcpp::IntegerVector(cand.fresh(p), cand.fresh(p) + cand.new_count[p]);
      stale[p] = Rcpp::IntegerVector(cand.stale(p), cand.stale(p) + cand.old_count[p]);
    }
    // One batch of joins over all rows, then the updates.
    std::vector<std::vector<lsnn::detail::ListUpdate>> updates(1);
    lsnn::detail::JoinWorkspace ws;
    for (std::size_t p = 0; p < n; ++p) lsnn::detail::local_join(p, cand, heaps, space, perm.data(), ws, updates[0]);
    std::vector<double> threshold_before(n), threshold_after(n);
    for (std::size_t p = 0; p < n; ++p) threshold_before[p] = heaps.threshold(p);
    const std::size_t changed = lsnn::detail::apply_updates(updates, 1, heaps, executor);
    for (std::size_t p = 0; p < n; ++p) threshold_after[p] = heaps.threshold(p);
    return Rcpp::List::create(
        Rcpp::Named("perm") = Rcpp::IntegerVector(perm.begin(), perm.end()),
        Rcpp::Named("filled") = static_cast<double>(filled),
        Rcpp::Named("forest") = forest, Rcpp::Named("forest_flags") = forest_flags,
        Rcpp::Named("rev_ptr") = Rcpp::NumericVector(rev.ptr.begin(), rev.ptr.end()),
        Rcpp::Named("rev_source") = Rcpp::IntegerVector(rev.source.begin(), rev.source.begin() + rev.ptr[n]),
        Rcpp::Named("rev_flag") = Rcpp::IntegerVector(rev.flag.begin(), rev.flag.begin() + rev.ptr[n]),
        Rcpp::Named("fresh") = fresh, Rcpp::Named("stale") = stale,
        Rcpp::Named("sampled_flags") = sampled_flags,
        Rcpp::Named("n_updates") = static_cast<double>(updates[0].size()),
        Rcpp::Named("changed") = static_cast<double>(changed),
        Rcpp::Named("threshold_before") = threshold_before,
        Rcpp::Named("threshold_after") = threshold_after,
        Rcpp::Named("joined") = list_matrix(heaps, false));
  });
}
