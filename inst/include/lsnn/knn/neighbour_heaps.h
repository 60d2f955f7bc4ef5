// Bounded candidate lists: for every row, the `capacity` first (score,
// index) pairs offered so far under the total order of graph.h, kept as
// max-heaps in flat arrays. The exact search (exact_knn.h) and the
// approximate search (nndescent.h) build their graphs from them; the
// approximate search also keeps a flag per entry (NeighbourHeaps<true>).
//
// The kept set depends only on what was offered, never on the order, so
// parallel schedules give identical results. A row's indices must stay
// distinct: push() checks, push_new() is for indices known to be absent.
//
// A row may be given a ceiling (set_ceiling): scores above it are refused,
// and threshold() never exceeds it. A row with a ceiling that still has
// room holds every score offered to it at or below the ceiling.
#ifndef LSNN_NEIGHBOUR_HEAPS_H
#define LSNN_NEIGHBOUR_HEAPS_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "../base/graph.h"
#include "distance_kernels.h"

namespace lsnn {

// The k-th smallest of s[0, m) (1 <= k <= m, no NaN), by bisection on the
// values' order-preserving integer keys: 32 vectorised counts, where a
// selection algorithm mispredicts a branch on about every other element.
inline float kth_smallest(const DistanceKernels& kern, const float* s, std::size_t m, std::size_t k) {
  // Non-negative floats order as their bit patterns; negative ones are
  // mapped below them, in reverse (the map is its own inverse).
  auto key_of = [](float f) {
    std::int32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b >= 0 ? b : b ^ 0x7fffffff;
  };
  auto float_of = [&](std::int32_t key) {
    const std::int32_t b = key >= 0 ? key : key ^ 0x7fffffff;
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  };
  // The smallest key x with count(<= x) >= k, in [lo, hi].
  std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = key_of(std::numeric_limits<float>::infinity());
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (kern.count_at_most(s, float_of(static_cast<std::int32_t>(mid)), m) >= k) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return float_of(static_cast<std::int32_t>(lo));
}

// One list entry with its flag, as merge_new() gathers them; `added` marks
// the entries being merged in.
struct HeapEntry {
  float value;
  int index;
  std::uint8_t flag;
  std::uint8_t added;
};

template <bool Flagged = false>
class NeighbourHeaps {
 public:
  NeighbourHeaps(std::size_t n, std::size_t capacity, const DistanceKernels& kernels)
      : cap_(capacity), value_(n * capacity), index_(n * capacity), flag_(Flagged ? n * capacity : 0),
        size_(n, 0), top_(n, std::numeric_limits<float>::infinity()), kernels_(&kernels) {}

  std::size_t n_rows() const { return size_.size(); }
  std::size_t capacity() const { return cap_; }
  std::size_t size(std::size_t row) const { return size_[row]; }
  // The largest score the row can still take: its largest kept score, or
  // +inf while it has room, but never above its ceiling.
  // (Kept in an array of its own, which stays in cache, as the searches
  // read it for rows in no particular order.)
  float threshold(std::size_t row) const { return top_[row]; }
  // The row's ceiling (+inf unless set).
  float ceiling(std::size_t row) const {
    return ceiling_.empty() ? std::numeric_limits<float>::infinity() : ceiling_[row];
  }
  // Refuses scores above `value` from now on (for an empty row; push() and
  // push_new() honour it, merge_new() and fill_new() are for rows without).
  void set_ceiling(std::size_t row, float value) {
    if (ceiling_.empty()) ceiling_.assign(size_.size(), std::numeric_limits<float>::infinity());
    ceiling_[row] = value;
    update_top(row);
  }
  // The largest kept score of a non-empty row.
  float top_value(std::size_t row) const { return value_[row * cap_]; }
  const float* values(std::size_t row) const { return &value_[row * cap_]; }
  const int* indices(std::size_t row) const { return &index_[row * cap_]; }
  int* mutable_indices(std::size_t row) { return &index_[row * cap_]; }
  std::uint8_t* flags(std::size_t row) { return &flag_[row * cap_]; }
  const std::uint8_t* flags(std::size_t row) const { return &flag_[row * cap_]; }

  // Frees the scores and flags, keeping each row's members and size: for a
  // last pass that reads the members only (of the 9 bytes an entry takes,
  // 5 go).
  void release_scores() {
    std::vector<float>().swap(value_);
    std::vector<std::uint8_t>().swap(flag_);
    std::vector<float>().swap(top_);
    std::vector<float>().swap(ceiling_);
  }

  bool contains(std::size_t row, int index) const {
    return kernels_->contains_index(indices(row), size_[row], index);
  }

  // Hints that the row's indices (and, with `all`, its scores and flags)
  // are needed soon.
  void prefetch(std::size_t row, bool all = false) const {
#if defined(__GNUC__) || defined(__clang__)
    const char* ix = reinterpret_cast<const char*>(&index_[row * cap_]);
    for (std::size_t b = 0; b < cap_ * sizeof(int); b += 64) __builtin_prefetch(ix + b);
    const char* v = reinterpret_cast<const char*>(&value_[row * cap_]);
    if (!all) {
      __builtin_prefetch(v);
      return;
    }
    for (std::size_t b = 0; b < cap_ * sizeof(float); b += 64) __builtin_prefetch(v + b);
    if (Flagged) {
      const char* f = reinterpret_cast<const char*>(&flag_[row * cap_]);
      for (std::size_t b = 0; b < cap_; b += 64) __builtin_prefetch(f + b);
    }
#else
    (void)row;
    (void)all;
#endif
  }

  // Inserts (value, index) when the row has room or it ranks before the
  // largest entry, and the index is not listed yet.
  bool push(std::size_t row, float value, int index, std::uint8_t flag = 0) {
    if (cap_ == 0) return false;
    if (size_[row] == cap_ && !neighbour_before(value, index, value_[row * cap_], index_[row * cap_])) {
      return false;
    }
    if (contains(row, index)) return false;
    return push_new(row, value, index, flag);
  }

  // push() for an index known not to be listed.
  bool push_new(std::size_t row, float value, int index, std::uint8_t flag = 0) {
    if (cap_ == 0) return false;
    const std::size_t base = row * cap_;
    std::uint32_t& n = size_[row];
    if (n == cap_ && !neighbour_before(value, index, value_[base], index_[base])) return false;
    if (!ceiling_.empty() && !(value <= ceiling_[row])) return false;
    std::size_t c;
    if (n < cap_) {
      // Sift up from the new last slot.
      c = n++;
      while (c > 0) {
        const std::size_t p = (c - 1) / 2;
        if (!neighbour_before(value_[base + p], index_[base + p], value, index)) break;
        move_entry(base, p, c);
        c = p;
      }
    } else {
      c = sift_down(row, 0, value, index);
    }
    set_entry(base, c, value, index, flag);
    update_top(row);
    return true;
  }

  // Adds many entries to a row at once: `entries` (indices not listed in
  // the row, distinct, each with `flag`) join the row's entries and the
  // `capacity` first in the (score, index) order are kept, the heap rebuilt.
  // Cheaper than one push per entry when there are many. Returns how many
  // of `entries` were kept; `scratch` and `values` are the caller's.
  std::size_t merge_new(std::size_t row, const std::pair<float, int>* entries, std::size_t count,
                        std::uint8_t flag, std::vector<HeapEntry>& scratch, std::vector<float>& values) {
    const std::size_t base = row * cap_;
    const std::size_t had = size_[row];
    scratch.clear();
    for (std::size_t c = 0; c < had; ++c) scratch.push_back({value_[base + c], index_[base + c], flag_of(base + c), 0});
    for (std::size_t c = 0; c < count; ++c) scratch.push_back({entries[c].first, entries[c].second, flag, 1});
    if (scratch.size() > cap_) {
      // The cap-th smallest score by bisection (see kth_smallest()); the
      // entries below it are kept, and of those equal to it the ones with
      // the smallest indices.
      values.resize(scratch.size());
      for (std::size_t c = 0; c < scratch.size(); ++c) values[c] = scratch[c].value;
      const float cut = kth_smallest(*kernels_, values.data(), values.size(), cap_);
      std::size_t below = 0;
      for (std::size_t c = 0; c < scratch.size(); ++c) {
        if (scratch[c].value < cut) std::swap(scratch[below++], scratch[c]);
      }
      std::size_t tied = below;
      for (std::size_t c = below; c < scratch.size(); ++c) {
        if (scratch[c].value == cut) std::swap(scratch[tied++], scratch[c]);
      }
      if (tied > cap_) {
        std::sort(scratch.begin() + static_cast<std::ptrdiff_t>(below),
                  scratch.begin() + static_cast<std::ptrdiff_t>(tied),
                  [](const HeapEntry& a, const HeapEntry& b) { return a.index < b.index; });
      }
      scratch.resize(cap_);
    }
    std::size_t kept = 0;
    for (std::size_t c = 0; c < scratch.size(); ++c) {
      set_entry(base, c, scratch[c].value, scratch[c].index, scratch[c].flag);
      kept += scratch[c].added;
    }
    size_[row] = static_cast<std::uint32_t>(scratch.size());
    heapify(row);
    update_top(row);
    return kept;
  }

  // Fills an empty row with at most `capacity` distinct entries, all with
  // the same flag.
  void fill_new(std::size_t row, const std::pair<float, int>* entries, std::size_t count,
                std::uint8_t flag = 0) {
    count = std::min(count, cap_);
    const std::size_t base = row * cap_;
    for (std::size_t c = 0; c < count; ++c) set_entry(base, c, entries[c].first, entries[c].second, flag);
    size_[row] = static_cast<std::uint32_t>(count);
    heapify(row);
    update_top(row);
  }

 private:
  void update_top(std::size_t row) {
    const float top = cap_ > 0 && size_[row] == cap_ ? value_[row * cap_] : std::numeric_limits<float>::infinity();
    top_[row] = ceiling_.empty() ? top : std::min(top, ceiling_[row]);
  }

  std::uint8_t flag_of(std::size_t at) const { return Flagged ? flag_[at] : 0; }

  void set_entry(std::size_t base, std::size_t c, float value, int index, std::uint8_t flag) {
    value_[base + c] = value;
    index_[base + c] = index;
    if (Flagged) flag_[base + c] = flag;
  }

  void move_entry(std::size_t base, std::size_t from, std::size_t to) {
    value_[base + to] = value_[base + from];
    index_[base + to] = index_[base + from];
    if (Flagged) flag_[base + to] = flag_[base + from];
  }

  // Moves the entries below slot c up while they rank after (value, index)
  // and returns the slot where that entry belongs (the caller writes it).
  std::size_t sift_down(std::size_t row, std::size_t c, float value, int index) {
    const std::size_t base = row * cap_;
    const float* v = &value_[base];
    const int* ix = &index_[base];
    const std::size_t count = size_[row];
    for (;;) {
      std::size_t child = 2 * c + 1;
      if (child >= count) break;
      if (child + 1 < count && neighbour_before(v[child], ix[child], v[child + 1], ix[child + 1])) ++child;
      if (!neighbour_before(value, index, v[child], ix[child])) break;
      move_entry(base, child, c);
      c = child;
    }
    return c;
  }

  // Floyd's heap construction over the row's entries.
  void heapify(std::size_t row) {
    const std::size_t base = row * cap_;
    for (std::size_t start = size_[row] / 2; start-- > 0;) {
      const float value = value_[base + start];
      const int index = index_[base + start];
      const std::uint8_t flag = flag_of(base + start);
      set_entry(base, sift_down(row, start, value, index), value, index, flag);
    }
  }

  std::size_t cap_;
  std::vector<float> value_;
  std::vector<int> index_;
  std::vector<std::uint8_t> flag_;  // empty unless Flagged
  std::vector<std::uint32_t> size_;
  std::vector<float> top_;      // threshold(): min(largest score of a full row or +inf, ceiling)
  std::vector<float> ceiling_;  // empty unless a ceiling was set
  const DistanceKernels* kernels_;
};

}  // namespace lsnn

#endif  // LSNN_NEIGHBOUR_HEAPS_H
