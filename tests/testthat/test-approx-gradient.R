# The approximate (grid interpolation + FFT, exact near field) gradients against the
# exact one, on a few hundred points.

approx_data <- function() {
  set.seed(1)
  X <- rbind(matrix(stats::rnorm(150 * 5), 150), matrix(stats::rnorm(150 * 5, mean = 4), 150))
  list(X = X, P = perplexity_affinities(X, perplexity = 20))
}

rel_err <- function(Y, P, method = "tsne", ...) {
  e <- cost_gradient(Y, P, method, gradient = "exact", ...)
  a <- cost_gradient(Y, P, method, gradient = "approx", ...)
  c(gradient = sqrt(sum((a$gradient - e$gradient)^2) / sum(e$gradient^2)),
    cost = abs(a$cost / e$cost - 1))
}

# the gradient targets of issue 12: t-SNE 1e-3, the others 1e-2
approx_methods <- list(
  tsne = list(method = "tsne", tol = 1e-3),
  largevis = list(method = "largevis", tol = 1e-2),
  largevis_exp = list(method = "largevis", weight = "exp", tol = 1e-2),
  umap = list(method = "umap", tol = 1e-2),
  tumap = list(method = "tumap", tol = 1e-2)
)

approx_check <- function(Y, P, m, label) {
  args <- m[setdiff(names(m), "tol")]
  err <- do.call(rel_err, c(list(Y, P), args))
  expect_true(all(is.finite(err)), label = label)
  expect_lt(err[["gradient"]], m$tol, label = paste(label, "gradient"))
  expect_lt(err[["cost"]], 1e-3, label = paste(label, "cost"))
}

test_that("approximate gradients and costs agree with the exact ones", {
  dat <- approx_data()
  n <- nrow(dat$X)
  set.seed(3)
  for (m in approx_methods) {
    for (d in 1:2) {
      # random layouts, spread tiny to very wide (the grid's cost is bounded
      # by the number of points, not the width: 1e8 would take minutes with
      # boxes of a fixed width)
      for (s in c(1e-6, 1e-3, 1, 10, 1e3, 1e5, 1e8)) {
        if (m$method == "largevis" && identical(m$weight, "exp") && s > 100) next
        Y <- matrix(stats::rnorm(n * d, sd = s), n, d)
        approx_check(Y, dat$P, m, paste(m$method, d, "sd", s))
      }
      # clustered: two tight groups far apart, and every point twice
      Y <- rbind(matrix(stats::rnorm(n / 2 * d, sd = 0.5), n / 2, d),
                 matrix(stats::rnorm(n / 2 * d, mean = 30, sd = 0.5), n / 2, d))
      approx_check(Y, dat$P, m, paste(m$method, d, "clustered"))
      Y[seq(2, n, 2), ] <- Y[seq(1, n, 2), ]
      approx_check(Y, dat$P, m, paste(m$method, d, "coincident"))
    }
  }
  # a converged layout (the gradient is small there, the test strict)
  Yc <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 300, gradient = "exact")
  approx_check(Yc, dat$P, approx_methods$tsne, "tsne converged")
  Yu <- neighbor_embedding(dat$X, "umap", max_iter = 300, gradient = "exact")
  for (m in approx_methods[-1]) approx_check(Yu, dat$P, m, paste(m$method, "converged"))
})

test_that("each grid shape that t-SNE's grid may take keeps the accuracy at its widest boxes", {
  # nodes per box, box width, near field and its depth, as default_grid()
  # allows them (farfield/settings.h), as one uniform grid over the layout
  shape <- function(nodes, box_width, near_field, near_boxes) {
    list(nodes = nodes, box_width = box_width, min_boxes = 1, near_field = near_field,
         points_per_box = 0, near_boxes = near_boxes, pair_weight = 0, by_components = FALSE)
  }
  shapes <- list(shape(5, 0.3, FALSE, 1), shape(5, 0.45, TRUE, 1), shape(5, 4, TRUE, 2),
                 shape(7, 0.6, FALSE, 1), shape(7, 0.75, TRUE, 1), shape(7, 3, TRUE, 1))
  dat <- approx_data()
  Yc <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 300, gradient = "exact")
  set.seed(4)
  layouts <- list(converged = Yc, random = matrix(stats::rnorm(nrow(dat$X) * 2, sd = 10), ncol = 2),
                  line = matrix(stats::rnorm(nrow(dat$X), sd = 10), ncol = 1))
  old <- options(lsnn.grid = NULL)
  on.exit(options(old))
  for (g in shapes) {
    options(lsnn.grid = g)
    for (nm in names(layouts)) {
      approx_check(layouts[[nm]], dat$P, approx_methods$tsne, paste(nm, paste(unlist(g), collapse = ",")))
    }
  }
})

# Clusters far apart, of unequal sizes (some small enough to be summed
# directly), one of them made of two sub-clusters, and a lone point very far
# out: the layouts that the grid sums by components (farfield/plan.h).
component_layout <- function(d, n_big = c(500, 400, 300), n_small = 40) {
  set.seed(5)
  centre <- function(k) if (d == 1) c(0, 1000, 1e4, 2500, 5000, 7000, 3e4, 6e4, 9e4)[k] else
    rbind(c(0, 0), c(1000, 0), c(0, 1e4), c(2500, 2500), c(5000, 0), c(7000, 7000),
          c(3e4, 0), c(0, 6e4), c(9e4, 9e4))[k, ]
  blob <- function(m, k, sd) sweep(matrix(stats::rnorm(m * d, sd = sd), m, d), 2, centre(k), "+")
  Y <- rbind(blob(n_big[1], 1, 5), blob(n_big[2], 2, 20),
             blob(n_big[3] / 2, 3, 3), sweep(blob(n_big[3] / 2, 3, 3), 2, rep(60, d), "+"))
  for (k in 4:8) Y <- rbind(Y, blob(n_small, k, 1))
  rbind(Y, matrix(1e6, 1, d))
}

test_that("layouts of separate clusters: the sums by components agree with the exact ones", {
  for (d in 1:2) {
    Y <- component_layout(d)
    n <- nrow(Y)
    set.seed(6)
    X <- Y[, rep(1, 3)] + matrix(stats::rnorm(n * 3, sd = 0.1), n, 3)
    P <- perplexity_affinities(X, perplexity = 10)
    for (m in approx_methods) {
      if (m$method == "largevis" && identical(m$weight, "exp")) next
      approx_check(Y, P, m, paste(m$method, d, "components"))
    }
    # LargeVis's exp weights have a width of 1: clusters of that scale
    Ye <- Y / 50
    approx_check(Ye, P, approx_methods$largevis_exp, paste("largevis exp", d, "components"))
    for (m in c("tsne", "umap")) {
      a1 <- cost_gradient(Y, P, m, gradient = "approx", n_threads = 1)
      a2 <- cost_gradient(Y, P, m, gradient = "approx", n_threads = 2)
      expect_identical(a1, a2)
    }
  }
  # a run that starts from the separate clusters (grids split, reused and
  # cached from one iteration to the next) does not depend on n_threads
  skip_if_quick()
  Y <- component_layout(2) / 20
  runs <- lapply(1:2, function(th) {
    neighbor_embedding(Y, "tsne", perplexity = 10, init = Y, max_iter = 60,
                       stop_lying_iter = 20, gradient = "approx", n_threads = th)
  })
  expect_identical(runs[[1]], runs[[2]])
  expect_true(all(is.finite(runs[[1]])))
  # P's values read in place (as for large P) give the same layout and
  # gradients as the approximation's own copy of P
  P <- perplexity_affinities(Y, perplexity = 10)
  own <- lapply(c("tsne", "umap", "largevis"), function(m) {
    cost_gradient(runs[[1]], P, m, gradient = "approx", n_threads = 2)
  })
  own_P <- neighbor_embedding(Y, "tsne", perplexity = 10, init = Y, max_iter = 60,
                              stop_lying_iter = 20, gradient = "approx", n_threads = 2,
                              ret_extra = "P")
  given <- P
  given@x <- given@x + 0
  from_p <- neighbor_embedding(P = given, init = Y, max_iter = 60, stop_lying_iter = 20,
                               gradient = "approx", n_threads = 2)
  old <- options(lsnn.in_place_bytes = 0)
  on.exit(options(old))
  # (P's own columns renumbered in place while the layout runs, and given
  # back as they were)
  in_place <- neighbor_embedding(Y, "tsne", perplexity = 10, init = Y, max_iter = 60,
                                 stop_lying_iter = 20, gradient = "approx", n_threads = 2,
                                 ret_extra = "P")
  expect_identical(in_place$embedding, runs[[2]])
  expect_identical(in_place, own_P)
  # affinities given as P are read, never written
  expect_identical(neighbor_embedding(P = given, init = Y, max_iter = 60, stop_lying_iter = 20,
                                      gradient = "approx", n_threads = 2), from_p)
  expect_identical(given, P)
  read <- lapply(c("tsne", "umap", "largevis"), function(m) {
    cost_gradient(runs[[1]], P, m, gradient = "approx", n_threads = 2)
  })
  expect_identical(read, own)
})

test_that("P made for the layout and not returned is read in single precision in its order", {
  skip_if_quick()
  Y <- component_layout(2) / 20
  layout <- function(method, th) {
    neighbor_embedding(Y, method, perplexity = 10, n_neighbors = 10, init = Y, max_iter = 60,
                       stop_lying_iter = 20, gradient = "approx", n_threads = th)
  }
  kept <- lapply(c("tsne", "umap"), layout, th = 2)
  old <- options(lsnn.in_place_bytes = 0)
  on.exit(options(old))
  for (k in 1:2) {
    method <- c("tsne", "umap")[k]
    # (P rewritten into the approximation's order, its values rounded to
    # single precision: the layout moves by rounding only)
    consumed <- lapply(1:2, function(th) layout(method, th))
    expect_identical(consumed[[1]], consumed[[2]])
    expect_false(identical(consumed[[1]], kept[[k]]))
    expect_lt(max(abs(consumed[[1]] - kept[[k]])) / max(abs(kept[[k]])), 1e-5)
  }
})

test_that("the optimisation of a large layout keeps the exaggeration's grid to the end", {
  skip_if_quick()
  Y <- component_layout(2) / 20
  layout <- function(th = 2) {
    neighbor_embedding(Y, "tsne", perplexity = 10, init = Y, max_iter = 60,
                       stop_lying_iter = 20, gradient = "approx", n_threads = th)
  }
  accurate <- layout()
  P <- perplexity_affinities(Y, perplexity = 10)
  gradient <- cost_gradient(accurate, P, "tsne", gradient = "approx")
  old <- options(lsnn.accurate_grid_points = 0)
  on.exit(options(old))
  large <- layout()
  expect_false(identical(large, accurate))
  expect_identical(layout(1), large)
  # (cost_gradient() keeps the default grid at every size)
  expect_identical(cost_gradient(accurate, P, "tsne", gradient = "approx"), gradient)
  # the exaggeration's grid, set for the whole run
  options(lsnn.accurate_grid_points = NULL,
          lsnn.grid = list(nodes = 3, box_width = 1, min_boxes = 50, near_field = FALSE,
                           near_boxes = 1, points_per_box = 0, pair_weight = 0,
                           smooth_width = 0, shallow_width = 0, fine_nodes = 0,
                           fine_smooth_width = 0))
  expect_identical(layout(), large)
  options(lsnn.grid = NULL)
  plan <- far_field_plan(accurate, exaggerated = TRUE)
  expect_match(plan$text[1], "3 nodes per box, boxes at most 1 wide", fixed = TRUE)
})

# Dense clusters with a sparse halo strewn around them (as the early
# exaggeration leaves a large layout): the halo's points are summed on a
# coarse grid and the clusters by a grid of their own extent
# (the shed regions of farfield/plan.h).
halo_layout <- function(d) {
  set.seed(8)
  core <- rbind(matrix(stats::rnorm(900 * d, sd = 0.4), 900, d),
                matrix(stats::rnorm(700 * d, mean = 3, sd = 0.8), 700, d))
  near_halo <- matrix(stats::runif(60 * d, -40, 40), 60, d)
  far_halo <- matrix(stats::runif(40 * d, -2000, 2000), 40, d)
  rbind(core, near_halo, far_halo)
}

test_that("dense clusters in a sparse halo: the approximate sums agree with the exact ones", {
  for (d in 1:2) {
    Y <- halo_layout(d)
    n <- nrow(Y)
    set.seed(9)
    X <- Y[, rep(1, 3)] + matrix(stats::rnorm(n * 3, sd = 0.1), n, 3)
    P <- perplexity_affinities(X, perplexity = 10)
    for (m in approx_methods) {
      if (m$method == "largevis" && identical(m$weight, "exp")) next
      approx_check(Y, P, m, paste(m$method, d, "halo"))
    }
    approx_check(Y / 50, P, approx_methods$largevis_exp, paste("largevis exp", d, "halo"))
    a1 <- cost_gradient(Y, P, "tsne", gradient = "approx", n_threads = 1)
    a2 <- cost_gradient(Y, P, "tsne", gradient = "approx", n_threads = 2)
    expect_identical(a1, a2)
  }
})

test_that("all points identical: the approximate sums are finite and exact", {
  dat <- approx_data()
  n <- nrow(dat$X)
  Y <- matrix(2.5, n, 2)
  for (m in c("tsne", "largevis", "umap", "tumap")) {
    a <- cost_gradient(Y, dat$P, m, gradient = "approx")
    e <- cost_gradient(Y, dat$P, m, gradient = "exact")
    expect_true(all(is.finite(a$gradient)))
    expect_equal(a$cost, e$cost, tolerance = 1e-12)
    expect_equal(a$gradient, e$gradient, tolerance = 1e-12)
  }
})

test_that("approximate gradient does not depend on n_threads", {
  dat <- approx_data()
  n <- nrow(dat$X)
  for (m in c("tsne", "largevis", "umap", "tumap")) {
    for (d in 1:2) {
      Y <- matrix(stats::rnorm(n * d, sd = 3), n, d)
      a1 <- cost_gradient(Y, dat$P, m, gradient = "approx", n_threads = 1)
      a2 <- cost_gradient(Y, dat$P, m, gradient = "approx", n_threads = 2)
      expect_identical(a1, a2)
    }
  }
  skip_if_quick()
  Y1 <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 100, init = "pca",
                           stop_lying_iter = 50, gradient = "approx", n_threads = 1)
  Y2 <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 100, init = "pca",
                           stop_lying_iter = 50, gradient = "approx", n_threads = 2)
  expect_identical(Y1, Y2)
  Y1 <- neighbor_embedding(dat$X, "umap", max_iter = 50, init = "pca", gradient = "approx",
                           n_threads = 1)
  Y2 <- neighbor_embedding(dat$X, "umap", max_iter = 50, init = "pca", gradient = "approx",
                           n_threads = 2)
  expect_identical(Y1, Y2)
})

test_that("three or more dimensions take the exact sum", {
  dat <- approx_data()
  n <- nrow(dat$X)
  Y3 <- matrix(stats::rnorm(n * 3), n, 3)
  for (m in c("tsne", "largevis", "umap", "tumap")) {
    expect_identical(cost_gradient(Y3, dat$P, m, gradient = "approx"),
                     cost_gradient(Y3, dat$P, m, gradient = "exact"))
  }
  Y2 <- matrix(stats::rnorm(n * 2), n, 2)
  expect_error(cost_gradient(Y2, dat$P, "tsne", gradient = "fast"), "gradient")
})

test_that("an approximate run reaches the exact run's cost", {
  dat <- approx_data()
  set.seed(2)
  ra <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 400, tol = 0,
                           gradient = "approx", ret_extra = TRUE)
  set.seed(2)
  re <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 400, tol = 0,
                           gradient = "exact", ret_extra = TRUE)
  expect_identical(ra$gradient, "approx")
  expect_identical(re$gradient, "exact")
  ca <- cost_gradient(ra$embedding, dat$P)$cost
  ce <- cost_gradient(re$embedding, dat$P)$cost
  # at 300 points two exact runs from different starts differ by a few per
  # cent (different local minima): the bound is loose
  expect_lt(abs(ca / ce - 1), 0.05)
  # the reported cost is the approximate KL of the final layout
  expect_equal(unname(utils::tail(ra$cost, 1)), ca, tolerance = 1e-2)
  # "auto" keeps the exact sum on small data
  ra <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 5, stop_lying_iter = 2,
                           ret_extra = TRUE)
  expect_identical(ra$gradient, "exact")
  expect_identical(lsnn:::ne_gradient_kind("auto", "tsne", 3000, 2), "exact")
  expect_identical(lsnn:::ne_gradient_kind("auto", "tsne", 3001, 2), "approx")
  expect_identical(lsnn:::ne_gradient_kind("auto", "tsne", 20000, 3), "exact")
})

test_that("the measurement option lsnn.grid is checked and sets the grid", {
  dat <- approx_data()
  set.seed(11)
  Y <- matrix(stats::rnorm(nrow(dat$X) * 2, sd = 5), ncol = 2)
  old <- options(lsnn.grid = list(nodes = 5, box_width = NA))
  on.exit(options(old))
  expect_error(cost_gradient(Y, dat$P, "tsne", gradient = "approx"), "lsnn.grid")
  options(lsnn.grid = list(nodes = 0))
  expect_error(cost_gradient(Y, dat$P, "tsne", gradient = "approx"), "lsnn.grid")
  # the default t-SNE grid spelt out in full (by components, refined)
  full <- list(nodes = 5, box_width = 4, min_boxes = 1, near_field = TRUE, points_per_box = 64,
               near_boxes = 2, pair_weight = 1, smooth_width = 0.3, by_components = TRUE,
               shallow_width = 0.45, fine_nodes = 33, fine_smooth_width = 0.6)
  options(lsnn.grid = full)
  expect_error(cost_gradient(Y, dat$P, "tsne", gradient = "approx"), "lsnn.grid")
  full$fine_nodes <- 7
  options(lsnn.grid = full)
  a <- cost_gradient(Y, dat$P, "tsne", gradient = "approx")
  options(lsnn.grid = NULL)
  expect_identical(a, cost_gradient(Y, dat$P, "tsne", gradient = "approx"))
  # a field given alone: the others keep the method's default
  options(lsnn.grid = list(fine_nodes = 7))
  expect_identical(a, cost_gradient(Y, dat$P, "tsne", gradient = "approx"))
})
