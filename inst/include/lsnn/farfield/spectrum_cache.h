// What the grids of one evaluator share: the kernels' spectra
// (SpectrumCache) and the scratch buffers of a grid evaluation
// (GridWorkspace). The grid that sums a part of the layout changes from one
// evaluation to the next (the regions of plan.h follow the layout) while
// its size and spacing often do not, and the spectra of a large grid cost
// three transforms and many kernel values to make again; grids hold the
// spectra themselves, not copies.
#ifndef LSNN_FARFIELD_SPECTRUM_CACHE_H
#define LSNN_FARFIELD_SPECTRUM_CACHE_H

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "../base/large_buffer.h"
#include "grid_shape.h"

namespace lsnn {

// A kernel's spectrum, shared by the grids (and the cache) that use it.
typedef std::shared_ptr<const large_vector<std::complex<double>>> SharedSpectrum;
typedef std::shared_ptr<large_vector<std::complex<double>>> SpectrumBuffer;

// Kernel spectra (and near-field tables) by kernel slot and key. Entries
// unused for a whole evaluation are dropped (next_generation(), once per
// evaluation). Used from the calling thread only.
class SpectrumCache {
 public:
  struct Entry {
    std::size_t slot;
    GridKernelKey key;
    SpectrumBuffer spectrum;
    std::vector<double> near;
    std::size_t used;
  };
  bool contains(std::size_t slot, const GridKernelKey& key) const {
    return index_of(slot, key) < entries_.size();
  }
  // the entry (marked as used in this evaluation), or null
  const Entry* find(std::size_t slot, const GridKernelKey& key) {
    const std::size_t k = index_of(slot, key);
    if (k == entries_.size()) return nullptr;
    entries_[k].used = generation_;
    return &entries_[k];
  }
  void add(std::size_t slot, const GridKernelKey& key, SpectrumBuffer spectrum,
           const std::vector<double>& near) {
    entries_.push_back({slot, key, std::move(spectrum), near, generation_});
  }
  // Called once per evaluation, with the bytes the far field may hold
  // (`budget`) and those it holds outside the cache (`other`, the grids'
  // scratch). Entries unused for kKeep evaluations are dropped, and of those
  // unused in the last one, the least recently used beyond twice the bytes
  // of those used in it, or beyond what the budget leaves: a layout whose
  // grid flips between two or three sizes and shapes (its extent at a step
  // of the width ladder) finds each in the cache.
  void next_generation(double budget, double other) {
    budget_ = budget;
    other_ = other;
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.used > b.used; });
    double used = 0.0;
    for (const Entry& e : entries_) {
      if (e.used == generation_) used += entry_bytes(e);
    }
    const double room = std::max(0.0, budget - other - used);
    double kept = 0.0;
    std::size_t k = 0;
    for (; k < entries_.size(); ++k) {
      if (entries_[k].used == generation_) continue;
      kept += entry_bytes(entries_[k]);
      if (kept > std::min(2.0 * used, room) || entries_[k].used + kKeep < generation_) break;
    }
    // the spectra of the dropped entries that no grid holds are kept for
    // reuse, at most as many bytes as those in use and what the budget
    // leaves
    for (std::size_t e = k; e < entries_.size(); ++e) {
      if (entries_[e].spectrum.use_count() == 1) spare_.push_back(std::move(entries_[e].spectrum));
    }
    entries_.resize(k);
    kept = 0.0;
    for (const Entry& e : entries_) {
      if (e.used != generation_) kept += entry_bytes(e);
    }
    double spare_bytes = 0.0;
    std::size_t s = 0;
    for (; s < spare_.size(); ++s) {
      spare_bytes += static_cast<double>(spare_[s]->capacity()) * 16.0;
      if (spare_bytes > std::min(used, room - kept)) break;
    }
    spare_.resize(s);
    ++generation_;
  }
  // Storage for a spectrum of `size` values: the smallest spare one large
  // enough (memory new to the process costs a page fault per page, more
  // than the transform that fills it), else new, after the least recently
  // used entries unused in this evaluation (and held by no grid) have given
  // back their memory while it would exceed the budget.
  SpectrumBuffer storage(std::size_t size) {
    std::size_t best = spare_.size();
    for (std::size_t s = 0; s < spare_.size(); ++s) {
      if (spare_[s]->capacity() >= size &&
          (best == spare_.size() || spare_[s]->capacity() < spare_[best]->capacity())) {
        best = s;
      }
    }
    if (best == spare_.size()) {
      make_room(16.0 * static_cast<double>(size));
      return std::make_shared<large_vector<std::complex<double>>>(size);
    }
    SpectrumBuffer b = std::move(spare_[best]);
    spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(best));
    b->resize(size);
    return b;
  }
  // the bytes of the entries and spare spectra
  double bytes() const {
    double b = 0.0;
    for (const Entry& e : entries_) b += entry_bytes(e);
    for (const SpectrumBuffer& s : spare_) b += static_cast<double>(s->capacity()) * 16.0;
    return b;
  }
  // evaluations an unused entry is kept at most
  static constexpr std::size_t kKeep = 8;

 private:
  // Drops spare spectra, then the least recently used entries unused in
  // this evaluation whose spectra no grid holds, until `more` bytes fit in
  // the budget (or nothing more can go).
  void make_room(double more) {
    while (!spare_.empty() && over_budget(more)) spare_.pop_back();
    while (over_budget(more)) {
      std::size_t victim = entries_.size();
      for (std::size_t k = 0; k < entries_.size(); ++k) {
        const Entry& e = entries_[k];
        if (e.used == generation_ || e.spectrum.use_count() != 1) continue;
        if (victim == entries_.size() || e.used < entries_[victim].used) victim = k;
      }
      if (victim == entries_.size()) return;
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  // whether `more` bytes would take the far field beyond its budget
  bool over_budget(double more) const { return bytes() + other_ + more > budget_; }

  static double entry_bytes(const Entry& e) {
    return static_cast<double>(e.spectrum->size()) * 16.0 + static_cast<double>(e.near.size()) * 8.0;
  }
  std::size_t index_of(std::size_t slot, const GridKernelKey& key) const {
    std::size_t k = 0;
    while (k < entries_.size() && !(entries_[k].slot == slot && entries_[k].key == key)) ++k;
    return k;
  }

  std::vector<Entry> entries_;
  std::vector<SpectrumBuffer> spare_;
  std::size_t generation_ = 0;
  // the budget and the bytes held outside the cache, as of next_generation()
  double budget_ = HUGE_VAL, other_ = 0.0;
};

// The scratch buffers of a grid evaluation (node charges and their spectra,
// the products, the node potentials, the kernel's values), shared by all
// grids of one evaluator: each grid uses them only from spread() to the end
// of its potentials(), and the grids of one evaluation run one after
// another, so the memory is faulted in once rather than per grid.
struct GridWorkspace {
  large_vector<double> charges, potentials, kernel_values;
  large_vector<std::complex<double>> charge_spectra, products;
  double bytes() const {
    return 8.0 * static_cast<double>(charges.capacity() + potentials.capacity() +
                                     kernel_values.capacity()) +
           16.0 * static_cast<double>(charge_spectra.capacity() + products.capacity());
  }
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_SPECTRUM_CACHE_H
