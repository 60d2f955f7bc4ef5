// The far-field plan in words: one paragraph per region, saying what it is,
// how it is summed and the numbers that decided it (describe_plan()).
// Printed by neighbor_embedding(verbose = TRUE) and far_field_plan().
#ifndef LSNN_FARFIELD_DESCRIBE_H
#define LSNN_FARFIELD_DESCRIBE_H

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cmath>
#include <string>
#include <vector>

#include "plan.h"

namespace lsnn {

namespace describe_detail {

inline std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// "41 x 37" or "41"
inline std::string pair(std::size_t d, std::size_t a, std::size_t b) {
  return d == 2 ? format("%zu x %zu", a, b) : format("%zu", a);
}
inline std::string pair(std::size_t d, double a, double b) {
  return d == 2 ? format("%.4g x %.4g", a, b) : format("%.4g", a);
}

inline std::string near_words(const GridShape& g) {
  if (!g.near_field) return "no near field";
  return format("near field %zu box%s deep", g.near_depth, g.near_depth == 1 ? "" : "es");
}

// a grid's shape: nodes per box, boxes and their width, near field, nodes
inline std::string shape_words(const GridShape& g) {
  return format("%zu nodes per box, %s boxes %s wide, %s; %s nodes (transforms %s)",
                g.nodes_per_box, pair(g.dims, g.boxes[0], g.boxes[1]).c_str(),
                pair(g.dims, g.box_width[0], g.box_width[1]).c_str(), near_words(g).c_str(),
                pair(g.dims, g.nodes[0], g.nodes[1]).c_str(),
                pair(g.dims, g.padded[0], g.padded[1]).c_str());
}

inline std::string settings_words(const GridSettings& gs) {
  // (an unbounded width lets the points alone set the boxes)
  std::string s = std::isfinite(gs.box_width)
                      ? format("%d nodes per box, boxes at most %.4g wide", gs.nodes, gs.box_width)
                      : format("%d nodes per box, boxes set by the points alone", gs.nodes);
  if (gs.min_boxes > 1) s += format(", at least %d per dimension", gs.min_boxes);
  if (gs.near_field) {
    s += format(", near field %d box%s deep", gs.near_boxes, gs.near_boxes == 1 ? "" : "es");
    if (gs.points_per_box > 0.0) s += format(", at most %.4g points per box", gs.points_per_box);
    if (gs.pair_weight > 0.0) s += format(", shape by cost (a near pair = %.4g)", gs.pair_weight);
  } else {
    s += ", no near field";
  }
  s += gs.by_components ? ", split into regions" : ", one grid";
  s += format(", memory budget %.0f MB", gs.memory_mb);
  return s;
}

inline std::string region_name(const FarFieldPlan& plan, std::size_t k) {
  const FarFieldRegion& r = plan.region(k);
  if (r.parent == FarFieldRegion::none) return "1";
  return region_name(plan, r.parent) + format(".%zu", r.slot + 1);
}

inline const char* role(const FarFieldPlan& plan, std::size_t k) {
  const FarFieldRegion& r = plan.region(k);
  if (r.parent == FarFieldRegion::none) return "the whole layout";
  switch (plan.region(r.parent).kind) {
    case RegionKind::shed:
      return "the core";
    case RegionKind::peel:
      return "the largest component";
    default:
      return "a component";
  }
}

inline std::string shape_reasons(const FarFieldRegion& r) {
  const ShapeReport& sr = r.shape_report;
  const std::size_t d = r.grid.dims;
  std::string s = format("    boxes at the set width: %s",
                         pair(d, sr.base_boxes[0], sr.base_boxes[1]).c_str());
  if (sr.floor_boxes[0] > 1 || (d == 2 && sr.floor_boxes[1] > 1)) {
    s += format(" (at least %s)", pair(d, sr.floor_boxes[0], sr.floor_boxes[1]).c_str());
  }
  if (sr.widened) s += ", widened to stay within the most nodes per dimension";
  if (sr.by_cost) {
    if (sr.chosen < sr.costed.size()) {
      const ShapeCandidate& c = sr.costed[sr.chosen];
      const double mb = 1048576.0;
      if (c.bytes > sr.budget) {
        s += format("; no shape of the %zu costed fits the memory budget of %.0f MB: the one "
                    "needing least, %.0f MB, boxes %.4g times %s", sr.costed.size(),
                    sr.budget / mb, c.bytes / mb, c.scale >= 1.0 ? c.scale : 1.0 / c.scale,
                    c.scale >= 1.0 ? "finer" : "coarser");
      } else {
        s += format("; chosen by cost among %zu shapes: boxes %.4g times %s, cost %.3g",
                    sr.costed.size(), c.scale >= 1.0 ? c.scale : 1.0 / c.scale,
                    c.scale >= 1.0 ? "finer" : "coarser", c.cost);
        double next = -1.0;
        for (std::size_t i = 0; i < sr.costed.size(); ++i) {
          const ShapeCandidate& o = sr.costed[i];
          if (i != sr.chosen && o.bytes <= sr.budget && (next < 0.0 || o.cost < next)) next = o.cost;
        }
        if (next >= 0.0) s += format(" (next best %.3g)", next);
        s += format("; needs %.0f MB of the memory budget of %.0f MB", c.bytes / mb,
                    sr.budget / mb);
        if (sr.over_budget > 0) {
          s += format(" (%zu cheaper shape%s over it)", sr.over_budget,
                      sr.over_budget == 1 ? "" : "s");
        }
      }
    } else {
      s += "; no refined shape fits: the set shape";
    }
  }
  if (sr.wider_steps[0] + sr.wider_steps[1] > 0) {
    s += format("; boxes %s ladder steps wider to reuse cached spectra",
                pair(d, static_cast<std::size_t>(sr.wider_steps[0]),
                     static_cast<std::size_t>(sr.wider_steps[1])).c_str());
  }
  return s + "\n";
}

inline std::string shed_reasons(const FarFieldRegion& r) {
  const SplitReport& rep = r.report;
  if (!rep.shed_tested) return "";
  std::string s = format("    halo test on a coarse grid of %s boxes %s wide: fullest box %zu points, "
                         "well filled from %zu",
                         pair(rep.shed_grid.dims, rep.shed_grid.boxes[0], rep.shed_grid.boxes[1]).c_str(),
                         pair(rep.shed_grid.dims, rep.shed_grid.box_width[0],
                              rep.shed_grid.box_width[1]).c_str(),
                         rep.fullest, rep.well);
  if (rep.halo > 0) {
    s += format("; halo %zu points; core extent %.0f of %.0f boxes (shed at most %.2g)", rep.halo,
                rep.area_core, rep.area_all, FarFieldTuning::shed_area_share);
    if (rep.components_core > 0) {
      s += format(", core components %zu against %zu", rep.components_core, rep.components_all);
    }
  }
  return s + format(": %s\n", rep.shed_outcome);
}

inline std::string component_reasons(const FarFieldRegion& r) {
  const SplitReport& rep = r.report;
  if (rep.tries == 0) return "";
  std::string s = "    components on coarse grids of";
  for (std::size_t t = 0; t < rep.tries; ++t) {
    s += format("%s %.4g nodes per point: %zu", t == 0 ? "" : ",", rep.tried_nodes_per_point[t],
                rep.tried_components[t]);
  }
  if (rep.largest_points > 0) {
    s += format("; largest %zu points, the others %zu (peeled up to %zu)", rep.largest_points,
                rep.other_points, FarFieldTuning::peel_points);
  }
  if (rep.removal_budget > 0.0) {
    s += format("; taking off their own sums %.3g node pairs (at most %.3g)", rep.removal_work,
                rep.removal_budget);
  }
  return s + "\n";
}

inline std::string how(const FarFieldRegion& r) {
  switch (r.kind) {
    case RegionKind::shed:
      return format("halo of %zu points on the coarse grid (%s), the core a region",
                    r.n - r.core_points.size(), shape_words(r.coarse.shape()).c_str());
    case RegionKind::peel:
      return format("%zu outlying points summed directly, the largest component a region",
                    r.outliers.size());
    case RegionKind::components:
      return format("%zu components: their pairs on the coarse grid (%s); %zu summed directly, "
                    "%zu regions",
                    r.components.count(), shape_words(r.coarse.shape()).c_str(),
                    r.direct_components.size(), r.children.size());
    default:
      return format("one grid (%s): %s", r.report.whole_reason, shape_words(r.grid).c_str());
  }
}

}  // namespace describe_detail

// The plan, one paragraph per region in the order they run.
inline std::string describe_plan(const FarFieldPlan& plan) {
  using namespace describe_detail;
  const FarFieldRegion& root = plan.region(0);
  std::string s = format("far field of %zu points in %zu-D; grid settings: %s\n", root.n,
                         plan.dims(), settings_words(plan.settings()).c_str());
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const FarFieldRegion& r = plan.region(k);
    s += format("region %s, %s, %zu points: %s\n", region_name(plan, k).c_str(), role(plan, k), r.n,
                how(r).c_str());
    s += shed_reasons(r);
    if (r.kind != RegionKind::shed) s += component_reasons(r);
    if (r.kind == RegionKind::grid && r.shape_report.costed.size() + r.shape_report.base_boxes[0] > 0) {
      s += shape_reasons(r);
    }
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace lsnn

#endif  // LSNN_FARFIELD_DESCRIBE_H
