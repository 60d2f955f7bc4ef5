// Internal entry points that run single pieces of the core on their own, for
// the tests (tests/testthat/test-core.R).
#include <Rcpp.h>

#include <lsnn/neighbour_heaps.h>
#include <lsnn/tile_schedule.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels.h"

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
