// The far field's one 2-D FFT engine (Eigen's FFT module, kissfft backend).
// A 2-D transform is a pass of 1-D transforms along x (the rows) and a pass
// along y (the columns), each line transformed on its own, so that the
// result does not depend on how the lines are split among threads:
//  - grids: real transforms of many L0 x L1 grids at once (half spectra of
//    H0 = L0 / 2 + 1 columns), each pass one parallel loop over all the
//    grids' lines (forward(), inverse());
//  - small complex grids (a component's own extent): the same passes on one
//    worker, from within a task that owns the grid (complex()).
#ifndef LSNN_FARFIELD_FFT2_H
#define LSNN_FARFIELD_FFT2_H

#include <unsupported/Eigen/FFT>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <vector>

namespace lsnn {

class Fft2 {
 public:
  typedef std::complex<double> cplx;
  enum class Direction { forward, inverse };

  // kissfft builds its plan (factors and twiddles) on an FFT object's first
  // transform of each length, so each worker keeps its FFT object and
  // scratch from one pass to the next; every line's transform is the same
  // whichever worker runs it.
  struct Worker {
    Eigen::FFT<double> fft;
    std::vector<double> line;
    std::vector<cplx> a, b;
    Worker() { fft.SetFlag(Eigen::FFT<double>::HalfSpectrum); }
  };

  // The padded grid: L0 x L1 values, half spectra of H0 x L1.
  struct Plane {
    std::size_t L0, L1;
    std::size_t H0() const { return L0 / 2 + 1; }
    std::size_t S() const { return H0() * L1; }
  };

  // Real 2-D transforms of `count` grids: grid o's first `rows` rows (of
  // `width` values each, the rest zero) start at src + o * sstride, its half
  // spectrum goes to dst + o * S: x by real FFT, then y.
  template <typename Executor>
  void forward(const Plane& g, const double* src, std::size_t count, std::size_t sstride,
               std::size_t rows, std::size_t width, cplx* dst, Executor& executor) {
    const std::size_t L0 = g.L0, H0 = g.H0(), S = g.S();
    in_slabs(count * rows, executor, [&](Worker& wk, std::size_t t0, std::size_t t1) {
      std::vector<double>& line = wk.line;
      line.resize(L0);
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t o = t / rows, r = t % rows;
        const double* row = src + o * sstride + r * width;
        std::copy(row, row + width, line.begin());
        std::fill(line.begin() + width, line.end(), 0.0);
        wk.fft.fwd(dst + o * S + r * H0, line.data(), static_cast<Eigen::Index>(L0));
      }
    });
    if (g.L1 == 1) return;
    // rows >= `rows` are zero: the column pass pads them itself
    const auto spectrum = [dst, S](std::size_t o, std::size_t e) { return dst[o * S + e]; };
    column_pass(g, count, Direction::forward, spectrum, rows, g.L1, dst, executor);
  }

  // Inverse real 2-D transforms (scaled) of `count` half spectra given by
  // spectrum(o, e) (e < S; the product of two spectra, formed on the fly):
  // the first M0 x M1 values of grid o go to out + o * ostride. `scratch`
  // holds the spectra between the passes.
  template <typename Executor, typename Spectrum>
  void inverse(const Plane& g, std::size_t count, Spectrum&& spectrum, std::size_t M0,
               std::size_t M1, cplx* scratch, double* out, std::size_t ostride,
               Executor& executor) {
    const std::size_t L0 = g.L0, H0 = g.H0(), S = g.S();
    if (g.L1 > 1) {
      // only the first M1 rows are kept
      column_pass(g, count, Direction::inverse, spectrum, g.L1, M1, scratch, executor);
    } else {
      for (std::size_t o = 0; o < count; ++o) {
        for (std::size_t e = 0; e < S; ++e) scratch[o * S + e] = spectrum(o, e);
      }
    }
    in_slabs(count * M1, executor, [&](Worker& wk, std::size_t t0, std::size_t t1) {
      std::vector<double>& line = wk.line;
      line.resize(L0);
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t o = t / M1, r = t % M1;
        wk.fft.inv(line.data(), scratch + o * S + r * H0, static_cast<Eigen::Index>(L0));
        std::copy(line.begin(), line.begin() + M0, out + o * ostride + r * M0);
      }
    });
  }

  // In-place complex 2-D transform of a (w x h, rows of w), forward or
  // inverse (scaled), rows then columns, on one worker.
  static void complex(Worker& wk, cplx* a, std::size_t w, std::size_t h, Direction dir) {
    std::vector<cplx>& out = wk.b;
    out.resize(std::max(w, h));
    for (std::size_t r = 0; r < h; ++r) {
      cplx* row = a + r * w;
      transform(wk, dir, out.data(), row, w);
      std::copy(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(w), row);
    }
    if (h == 1) return;
    const auto source = [a](std::size_t, std::size_t e) { return a[e]; };
    for (std::size_t cb = 0; cb < w; cb += kColumnBlock) {
      column_block(wk, dir, source, 0, cb, std::min(kColumnBlock, w - cb), w, h, h, h, a);
    }
  }

  // Gives back the workers' scratch and plans.
  void release() { std::vector<Worker>().swap(workers_); }

 private:
  // columns are gathered in blocks of this many, so that the gather and
  // the scatter touch whole cache lines
  static constexpr std::size_t kColumnBlock = 8;
  // a pass is cut into at most this many slabs, each with a long-lived
  // worker (enough to balance two to a few threads)
  static constexpr std::size_t kSlabs = 16;

  static void transform(Worker& wk, Direction dir, cplx* dst, const cplx* src, std::size_t len) {
    if (dir == Direction::forward) {
      wk.fft.fwd(dst, src, static_cast<Eigen::Index>(len));
    } else {
      wk.fft.inv(dst, src, static_cast<Eigen::Index>(len));
    }
  }

  // 1-D transforms along y of columns [cb, cb + w) of grid o, whose rows are
  // `stride` values apart: column c is read as src(o, r * stride + c) for its
  // first `rows` rows, the rest zero up to `len`; the first `keep` values of
  // its transform go to row r, column c of out. The block is gathered
  // before it is written back, so src may read out.
  template <typename Source>
  static void column_block(Worker& wk, Direction dir, Source& src, std::size_t o, std::size_t cb,
                           std::size_t w, std::size_t stride, std::size_t rows, std::size_t len,
                           std::size_t keep, cplx* out) {
    std::vector<cplx>&a = wk.a, &b = wk.b;
    a.resize(kColumnBlock * len);
    b.resize(len);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t k = 0; k < w; ++k) a[k * len + r] = src(o, r * stride + cb + k);
    }
    for (std::size_t k = 0; k < w; ++k) {
      cplx* col = a.data() + k * len;
      std::fill(col + rows, col + len, cplx(0.0, 0.0));
      transform(wk, dir, b.data(), col, len);
      std::copy(b.begin(), b.end(), col);
    }
    for (std::size_t r = 0; r < keep; ++r) {
      for (std::size_t k = 0; k < w; ++k) out[r * stride + cb + k] = a[k * len + r];
    }
  }

  // The y pass over `count` half spectra, in blocks of columns.
  template <typename Executor, typename Source>
  void column_pass(const Plane& g, std::size_t count, Direction dir, Source&& src,
                   std::size_t rows, std::size_t keep, cplx* dst, Executor& executor) {
    const std::size_t L1 = g.L1, H0 = g.H0(), S = g.S();
    const std::size_t nblocks = (H0 + kColumnBlock - 1) / kColumnBlock;
    in_slabs(count * nblocks, executor, [&](Worker& wk, std::size_t t0, std::size_t t1) {
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t o = t / nblocks, cb = (t % nblocks) * kColumnBlock;
        column_block(wk, dir, src, o, cb, std::min(kColumnBlock, H0 - cb), H0, rows, L1, keep,
                     dst + o * S);
      }
    });
  }

  // body(worker, t0, t1) over [0, count), in slabs run in parallel.
  template <typename Executor, typename Body>
  void in_slabs(std::size_t count, Executor& executor, Body&& body) {
    if (count == 0) return;
    const std::size_t slabs = std::min(count, kSlabs);
    while (workers_.size() < slabs) workers_.emplace_back();
    executor.parallel_for(
        0, slabs,
        [&](std::size_t s0, std::size_t s1) {
          for (std::size_t s = s0; s < s1; ++s) {
            body(workers_[s], count * s / slabs, count * (s + 1) / slabs);
          }
        },
        1);
  }

  std::vector<Worker> workers_;
};

}  // namespace lsnn

#endif  // LSNN_FARFIELD_FFT2_H
