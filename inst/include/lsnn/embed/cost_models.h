// One model per embedding cost: the only place where a cost's formulas are
// written. Every path that evaluates a cost (the all-pairs tiles, the sparse
// attraction, the grid's near field and kernels, negative sampling) asks the
// model for its terms, so adding a cost means adding one model here and one
// case to with_cost_model().
//
// With s = d_ij^2 the squared output distance and w the output weight:
//
//   tsne          w = 1 / (1 + s); all pairs: repulsion w^2, energy w (the
//                 terms of Z); the repulsion is normalised by Z (costs.h).
//   largevis      w = 1 / (1 + alpha s); cost -p log w - gamma log(1 - w).
//   largevis_exp  w = 1 / (1 + exp(s)); the same cost.
//   umap          w = 1 / (1 + a s^b); cost v log(v / w) + (1 - v)
//                 log((1 - v) / (1 - w)): its repulsion is weighted by
//                 1 - v, so the sparse part also corrects the all-pairs one.
//
// A model's terms, all functions of s (the gradient of a pair is
// 4 c (y_i - y_j) for the coefficient c, summed over ordered pairs):
//   repulsion(s)          c of the all-pairs part (gamma included);
//   energy(s)             the all-pairs cost of an ordered pair (t-SNE: w);
//   pair_terms(s, c, e)   both at once, sharing their common work;
// and two traits: kNormalised (the all-pairs part is divided by Z: t-SNE)
// and kSingular (the repulsion may be infinite at s = 0 when eps = 0).
//   attraction(s)         c of the attraction per unit of p (= d(-log w)/ds);
//   sparse_coefficient(s, p), sparse_cost(s, p)
//                         c and cost of a stored affinity p.
//
// Models are templates on their arithmetic (`Math`): ScalarMath below, or
// the four-lane vectors of cost_kernels_impl.h. Masks are expressed as
// Math::where_positive(x, v): v where x > 0, else 0 (no branch per lane).
// The models themselves are in cost_model_terms.h, included below and in
// each vector build of the kernels (see that file for why).
#ifndef LSNN_COST_MODELS_H
#define LSNN_COST_MODELS_H

#include <cmath>

namespace lsnn {

enum class CostMethod { tsne = 0, largevis = 1, largevis_exp = 2, umap = 3 };

// The parameters of every cost, in one place (each model reads its own).
struct CostParams {
  CostMethod method = CostMethod::tsne;
  double gamma = 1.0;  // LargeVis: weight of the repulsion
  double alpha = 1.0;  // LargeVis: w = 1 / (1 + alpha s)
  double a = 1.0;      // UMAP: w = 1 / (1 + a s^b)
  double b = 1.0;
  double eps = 0.0;    // added to s in the singular repulsive terms
};

// Whether the all-pairs part is normalised (t-SNE: divided by Z, and
// combined with the attraction as 4 (A - S F / Z)) rather than added.
inline bool normalised(CostMethod m) { return m == CostMethod::tsne; }

struct ScalarMath {
  typedef double V;
  static V splat(double x) { return x; }
  static V log(V x) { return std::log(x); }
  static V exp(V x) { return std::exp(x); }
  static V pow(V x, V y) { return std::pow(x, y); }
  static V where_positive(V x, V v) { return x > 0.0 ? v : 0.0; }
};

#include "cost_model_terms.h"

}  // namespace lsnn

#endif  // LSNN_COST_MODELS_H
