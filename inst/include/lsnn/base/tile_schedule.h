// The schedule of the all-pairs tiles (the exact search's score tiles,
// costs.h's pair sums): the rows are cut into blocks, and the tiles (I, J),
// I <= J, are run in the rounds of a round-robin tournament of the blocks
// (the circle method), so that the tiles of one round touch disjoint rows
// and run in parallel without locks, and every sum is taken in the same
// order whatever the number of threads.
#ifndef LSNN_TILE_SCHEDULE_H
#define LSNN_TILE_SCHEDULE_H

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace lsnn {

typedef std::vector<std::pair<std::size_t, std::size_t>> TileRound;

// Round 0 holds the diagonal tiles (b, b); every pair I < J then appears
// in exactly one round, as (I, J), and no block twice in a round.
inline std::vector<TileRound> round_robin_rounds(std::size_t n_blocks) {
  std::vector<TileRound> rounds;
  if (n_blocks == 0) return rounds;
  TileRound diagonal;
  for (std::size_t b = 0; b < n_blocks; ++b) diagonal.emplace_back(b, b);
  rounds.push_back(diagonal);
  const std::size_t p = n_blocks + (n_blocks % 2);  // with a bye when odd
  for (std::size_t r = 0; r + 1 < p; ++r) {
    TileRound round;
    for (std::size_t t = 0; t < p / 2; ++t) {
      // Block p - 1 stays in place; the others turn around the circle.
      const std::size_t a = t == 0 ? r : (r + t) % (p - 1);
      const std::size_t b = t == 0 ? p - 1 : (r + p - 1 - t) % (p - 1);
      if (a >= n_blocks || b >= n_blocks) continue;  // the bye
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    if (!round.empty()) rounds.push_back(round);
  }
  return rounds;
}

}  // namespace lsnn

#endif  // LSNN_TILE_SCHEDULE_H
