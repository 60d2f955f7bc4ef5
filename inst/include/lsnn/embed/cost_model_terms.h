// The cost models of cost_models.h (read that file's top comment first).
//
// Not a normal header: it has no include guard and is included inside a
// namespace, once in lsnn (by cost_models.h, for scalar arithmetic) and once
// in each kernel build's namespace (by cost_kernels_impl.h, for its vector
// arithmetic). GCC compiles a template with the instruction set of the place
// it is defined, so the AVX2 build needs the models defined inside its
// `#pragma GCC target` region: the formulas are written once, here, and
// compiled once per instruction set. It includes nothing itself; <cmath>
// and cost_models.h's CostParams and CostMethod come first.

template <typename Math>
struct TsneModel {
  typedef typename Math::V V;
  static constexpr bool kNormalised = true;
  static constexpr bool kSingular = false;
  V one;
  explicit TsneModel(const CostParams&) : one(Math::splat(1.0)) {}
  V weight(V s) const { return one / (one + s); }
  V repulsion(V s) const {
    const V w = weight(s);
    return w * w;
  }
  V energy(V s) const { return weight(s); }
  void pair_terms(V s, V& repulsion, V& energy) const {
    energy = weight(s);
    repulsion = energy * energy;
  }
  V attraction(V s) const { return weight(s); }
  V sparse_coefficient(V s, V p) const { return p * weight(s); }
  // p log(p / w) in one logarithm (p <= 1 and 1 + s >= 1: no overflow or
  // underflow that the two logarithms would avoid)
  V sparse_cost(V s, V p) const { return p * Math::log(p * (one + s)); }
};

template <typename Math>
struct LargeVisModel {
  typedef typename Math::V V;
  static constexpr bool kNormalised = false;
  static constexpr bool kSingular = true;
  V one, gamma, alpha, eps;
  explicit LargeVisModel(const CostParams& p)
      : one(Math::splat(1.0)),
        gamma(Math::splat(p.gamma)),
        alpha(Math::splat(p.alpha)),
        eps(Math::splat(p.eps)) {}
  // -gamma w / (s + eps), with one division
  V repulsion(V s) const { return -gamma / ((one + alpha * s) * (s + eps)); }
  V energy(V s) const {
    const V u = alpha * s;
    return gamma * Math::log((one + u) / (u + eps));
  }
  void pair_terms(V s, V& rep, V& en) const {
    rep = repulsion(s);
    en = energy(s);
  }
  V attraction(V s) const { return alpha / (one + alpha * s); }
  V sparse_coefficient(V s, V p) const { return p * attraction(s); }
  V sparse_cost(V s, V p) const { return p * Math::log(one + alpha * s); }
};

template <typename Math>
struct LargeVisExpModel {
  typedef typename Math::V V;
  static constexpr bool kNormalised = false;
  static constexpr bool kSingular = false;
  V one, gamma;
  explicit LargeVisExpModel(const CostParams& p)
      : one(Math::splat(1.0)), gamma(Math::splat(p.gamma)) {}
  // w = exp(-s) / (1 + exp(-s)), which does not overflow
  V weight(V s) const {
    const V em = Math::exp(-s);
    return em / (one + em);
  }
  V repulsion(V s) const { return -(gamma * weight(s)); }
  V energy(V s) const { return gamma * Math::log(one + Math::exp(-s)); }
  void pair_terms(V s, V& rep, V& en) const {
    const V em = Math::exp(-s);
    rep = -(gamma * (em / (one + em)));
    en = gamma * Math::log(one + em);
  }
  V attraction(V s) const { return one - weight(s); }
  V sparse_coefficient(V s, V p) const { return p * attraction(s); }
  V sparse_cost(V s, V p) const { return p * (s + Math::log(one + Math::exp(-s))); }
};

template <typename Math>
struct UmapModel {
  typedef typename Math::V V;
  static constexpr bool kNormalised = false;
  static constexpr bool kSingular = true;
  V one, a, b, eps, neg_b;
  bool b_is_one;
  explicit UmapModel(const CostParams& p)
      : one(Math::splat(1.0)),
        a(Math::splat(p.a)),
        b(Math::splat(p.b)),
        eps(Math::splat(p.eps)),
        neg_b(Math::splat(-p.b)),
        b_is_one(p.b == 1.0) {}
  // u = a s^b, so that w = 1 / (1 + u)
  V scaled_power(V s) const { return b_is_one ? a * s : a * Math::pow(s, b); }
  // -b w / (s + eps), with one division
  V repulsion(V s) const { return neg_b / ((one + scaled_power(s)) * (s + eps)); }
  V energy(V s) const {
    const V u = scaled_power(s);
    return Math::log((one + u) / (u + eps));
  }
  void pair_terms(V s, V& rep, V& en) const {
    const V u = scaled_power(s);
    rep = neg_b / ((one + u) * (s + eps));
    en = Math::log((one + u) / (u + eps));
  }
  // a b s^(b - 1) w: unbounded at s = 0 for b < 1, where (y_i - y_j) = 0
  // anyway, so coincident points do not pull
  V attraction(V s) const {
    const V u = scaled_power(s);
    if (b_is_one) return a / (one + u);
    return Math::where_positive(s, b * u / ((one + u) * s));
  }
  // the attraction and the (1 - v) correction of the all-pairs repulsion
  V sparse_coefficient(V s, V p) const {
    const V u = scaled_power(s), w = one / (one + u);
    return Math::where_positive(s, p * (b * u * w / s + b * w / (s + eps)));
  }
  V sparse_cost(V s, V p) const {
    const V q = one - p;
    const V qlogq = Math::where_positive(q, q * Math::log(q));
    return p * Math::log(p) + qlogq + p * Math::log(scaled_power(s) + eps);
  }
};

// f(model) for the model of params.method: the one switch over the costs.
template <typename Math, typename F>
decltype(auto) with_cost_model(const CostParams& params, F&& f) {
  switch (params.method) {
    case CostMethod::tsne:
      return f(TsneModel<Math>(params));
    case CostMethod::largevis:
      return f(LargeVisModel<Math>(params));
    case CostMethod::largevis_exp:
      return f(LargeVisExpModel<Math>(params));
    case CostMethod::umap:
    default:
      return f(UmapModel<Math>(params));
  }
}

