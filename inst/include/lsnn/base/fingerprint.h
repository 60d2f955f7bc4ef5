// A 64-bit fingerprint of a matrix of doubles: its shape and the bits of
// its values, in storage order. It tells a changed shard from the one a run
// was made for; it guards against accident (other data written to the same
// file), not against someone forging a collision.
#ifndef LSNN_FINGERPRINT_H
#define LSNN_FINGERPRINT_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "random.h"

namespace lsnn {

// The fingerprint of an n_rows x n_cols matrix, fed its values in storage
// order by one or more calls of add(). Eight lanes take the values in turn,
// so that their multiplications overlap (one per value: one lane would make
// the hash wait on every multiplication's latency); the shape seeds
// the lanes, and the lanes are mixed in order at the end.
class MatrixFingerprint {
 public:
  MatrixFingerprint(std::size_t n_rows, std::size_t n_cols)
      : shape_(hash64(0x6c736e6e2d666970ULL, n_rows, n_cols)) {
    for (std::size_t l = 0; l < lanes; ++l) lane_[l] = mix64(shape_ + l);
  }

  // The next `count` values.
  void add(const double* values, std::size_t count) {
    std::size_t i = 0;
    // (first the lanes a previous call left short of a whole group)
    for (; i < count && next_lane_ != 0; ++i) absorb_one(values[i]);
    const std::size_t whole = i + (count - i) / lanes * lanes;
    // (the lanes held in locals, which the compiler keeps in registers)
    std::uint64_t lane[lanes], w[lanes];
    std::memcpy(lane, lane_, sizeof lane);
    for (; i < whole; i += lanes) {
      std::memcpy(w, values + i, sizeof w);
      for (std::size_t l = 0; l < lanes; ++l) lane[l] = absorb(lane[l], w[l]);
    }
    std::memcpy(lane_, lane, sizeof lane);
    for (; i < count; ++i) absorb_one(values[i]);
  }

  std::uint64_t value() const {
    std::uint64_t h = shape_;
    for (std::size_t l = 0; l < lanes; ++l) h = mix64(h ^ lane_[l]);
    return h;
  }

 private:
  static constexpr std::size_t lanes = 8;

  // One word into a lane. For a fixed lane the step is a bijection of the
  // word (addition, rotation, an odd multiplier), so two values that differ
  // in one word always leave that lane different.
  static std::uint64_t absorb(std::uint64_t lane, std::uint64_t word) {
    const std::uint64_t x = lane + word;
    return ((x << 31) | (x >> 33)) * 0x9e3779b97f4a7c15ULL;
  }
  void absorb_one(double value) {
    std::uint64_t word;
    std::memcpy(&word, &value, sizeof word);
    lane_[next_lane_] = absorb(lane_[next_lane_], word);
    next_lane_ = (next_lane_ + 1) % lanes;
  }

  std::uint64_t shape_;
  std::uint64_t lane_[lanes];
  std::size_t next_lane_ = 0;  // the lane of the next value
};

inline std::uint64_t matrix_fingerprint(const double* values, std::size_t n_rows,
                                        std::size_t n_cols) {
  MatrixFingerprint fingerprint(n_rows, n_cols);
  fingerprint.add(values, n_rows * n_cols);
  return fingerprint.value();
}

// Rows [first, first + count) of the column-major n_rows x n_cols matrix x
// into `out` (count x n_cols, column-major), and into `fingerprint` (of a
// count x n_cols matrix) unless it is null: each piece of a column is
// hashed right after it is copied, while it is in the cache, so the
// fingerprint costs no second pass over memory.
inline void copy_rows(const double* x, std::size_t n_rows, std::size_t n_cols,
                      std::size_t first, std::size_t count, double* out,
                      MatrixFingerprint* fingerprint) {
  constexpr std::size_t piece = 4096;
  for (std::size_t j = 0; j < n_cols; ++j) {
    const double* from = x + j * n_rows + first;
    double* to = out + j * count;
    for (std::size_t start = 0; start < count; start += piece) {
      const std::size_t size = std::min(piece, count - start);
      std::memcpy(to + start, from + start, size * sizeof(double));
      if (fingerprint != nullptr) fingerprint->add(to + start, size);
    }
  }
}

}  // namespace lsnn

#endif  // LSNN_FINGERPRINT_H
