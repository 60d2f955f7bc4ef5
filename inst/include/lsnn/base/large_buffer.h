// Storage for large buffers (the far field's node charges, potentials and
// kernel spectra; the merges of sharded graphs): on Linux, blocks of 4 MB
// and more are aligned to 2 MB and marked for transparent huge pages.
// Memory new to a process is mapped one page at a time on first touch, and
// at 4 KB a page faulting in a large spectrum costs more than the transform
// that fills it; 2 MB pages take a few hundred times fewer faults.
// Elsewhere (or where the kernel does not offer them) this is plain malloc.
#ifndef LSNN_LARGE_BUFFER_H
#define LSNN_LARGE_BUFFER_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lsnn {

// Asks the kernel to back the whole 2 MB pages within [data, data + bytes)
// with transparent huge pages, for a block about to be filled. Advice only:
// without huge pages (or off Linux) the block is ordinary memory.
inline void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const std::uintptr_t huge = std::uintptr_t(1) << 21;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// The bytes LargeAllocator holds now and the most it held since reset():
// how much of a large layout's memory is the far field's.
class LargeBufferBytes {
 public:
  void add(std::size_t bytes) {
    const std::size_t now = now_.fetch_add(bytes) + bytes;
    std::size_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  void remove(std::size_t bytes) { now_.fetch_sub(bytes); }
  std::size_t now() const { return now_.load(); }
  std::size_t peak() const { return peak_.load(); }
  void reset() { peak_.store(now_.load()); }

 private:
  std::atomic<std::size_t> now_{0}, peak_{0};
};

inline LargeBufferBytes& large_buffer_bytes() {
  static LargeBufferBytes bytes;
  return bytes;
}

template <typename T>
struct LargeAllocator {
  typedef T value_type;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}

  static constexpr std::size_t kHugePage = std::size_t(1) << 21;
  static constexpr std::size_t kLarge = std::size_t(1) << 22;

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    const std::size_t bytes = n * sizeof(T);
    void* p = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= kLarge) {
      const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      if (posix_memalign(&p, kHugePage, rounded) != 0) throw std::bad_alloc();
      advise_huge_pages(p, rounded);
      large_buffer_bytes().add(bytes);
      return static_cast<T*>(p);
    }
#endif
    p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    large_buffer_bytes().add(bytes);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    large_buffer_bytes().remove(n * sizeof(T));
    std::free(p);
  }
};

template <typename T, typename U>
bool operator==(const LargeAllocator<T>&, const LargeAllocator<U>&) {
  return true;
}
template <typename T, typename U>
bool operator!=(const LargeAllocator<T>&, const LargeAllocator<U>&) {
  return false;
}

// A vector whose storage is a LargeAllocator's.
template <typename T>
using large_vector = std::vector<T, LargeAllocator<T>>;

// Makes `v` hold at least `size` elements (`fill` in all of them when
// `filled`, else those beyond its old size value-initialised) for a caller
// that overwrites what they hold. When it must grow, its old storage goes
// first: a vector that grows copies its elements into the new storage,
// holding both (at the far field's scale, hundreds of MB at once).
template <typename T>
void grow_discarding(large_vector<T>& v, std::size_t size) {
  if (v.size() >= size) return;
  if (v.capacity() < size) large_vector<T>().swap(v);
  v.resize(size);
}
template <typename T>
void assign_discarding(large_vector<T>& v, std::size_t size, const T& fill) {
  if (v.capacity() < size) large_vector<T>().swap(v);
  v.assign(size, fill);
}

}  // namespace lsnn

#endif
