// Small counter-based random numbers for the core.
//
// Anything random in lsnn is a pure function of a seed (drawn by the caller,
// in R from R's generator on the main thread) and of the indices of the work
// item, so results never depend on the number of threads or on which thread
// runs what. No state is shared between threads.
#ifndef LSNN_RANDOM_H
#define LSNN_RANDOM_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

namespace lsnn {

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A hash of a seed and up to three counters.
inline std::uint64_t hash64(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                            std::uint64_t c = 0) {
  return mix64(mix64(mix64(seed ^ mix64(a)) ^ b) ^ c);
}

// A sequential generator for work done by one thread (one tree), seeded by
// hash64() of the work item.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for n >= 1 (Lemire's multiply-shift; the bias is below
  // 2^-32 for the sizes used here).
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>(((next() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }
  bool coin() { return (next() >> 63) != 0; }

 private:
  std::uint64_t state_;
};

// m distinct numbers of 0..n-1 (m <= n < 2^32), in increasing order, from
// `seed`: Floyd's sampling, in memory of order m whatever n is.
inline std::vector<std::uint64_t> sample_distinct(std::uint64_t n, std::uint64_t m,
                                                  std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::unordered_set<std::uint64_t> chosen(static_cast<std::size_t>(m));
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(m));
  for (std::uint64_t j = n - m; j < n; ++j) {
    const std::uint64_t t = rng.below(static_cast<std::size_t>(j + 1));
    const std::uint64_t pick = chosen.count(t) ? j : t;
    chosen.insert(pick);
    out.push_back(pick);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lsnn

#endif  // LSNN_RANDOM_H
