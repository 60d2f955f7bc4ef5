# The far field's outputs on a fixed set of layouts: approximate (grid)
# t-SNE gradients and costs of cost_gradient(), short neighbor_embedding()
# runs and one neighbor_embedding_transform(), over layouts that reach every
# path of the far field (whole grids of every shape, halos shed, outliers
# peeled, separate components, 1-D, options(lsnn.grid)).
#
#   Rscript tools/farfield-reference.R save    FILE   # compute and save
#   Rscript tools/farfield-reference.R compare FILE   # recompute, identical()?
#   Rscript tools/farfield-reference.R compare FILE REGEX  # only the cases matching
#
# `compare` prints one line per case and "all N cases identical" or the
# cases that differ, and exits with status 1 when any differs. Run it with
# the installed package to check (R_LIBS=... Rscript ...).
suppressPackageStartupMessages({
  library(lsnn)
  library(Matrix)
})

args <- commandArgs(trailingOnly = TRUE)
if (!length(args) %in% 2:3 || !args[1] %in% c("save", "compare")) {
  stop("usage: Rscript tools/farfield-reference.R save|compare FILE [REGEX]")
}
mode <- args[1]
file <- args[2]
only <- if (length(args) == 3) args[3] else ""
threads <- 2

# A random symmetric affinity matrix (k partners per point, summing to 1):
# the far field does not look at P, and a kNN search of 2e5 points would
# cost more than every case together.
random_p <- function(n, k = 10, seed = 1) {
  set.seed(seed)
  i <- rep(seq_len(n), each = k)
  j <- ((i - 1 + sample.int(n - 1, n * k, replace = TRUE)) %% n) + 1
  P <- sparseMatrix(i = c(i, j), j = c(j, i), x = rep(stats::runif(n * k), 2), dims = c(n, n))
  P <- as(P, "generalMatrix")
  P / sum(P)
}

gauss <- function(n, d, sd = 1, seed = 2) {
  set.seed(seed)
  matrix(stats::rnorm(n * d, sd = sd), n, d)
}

# k clusters of unequal sizes and widths within `span` units: a converged-
# looking layout
clusters <- function(n, d, k = 10, span = 60, seed = 3) {
  set.seed(seed)
  sizes <- as.vector(stats::rmultinom(1, n, stats::runif(k, 0.5, 1.5)))
  centres <- matrix(stats::runif(k * d, -span / 2, span / 2), k, d)
  do.call(rbind, lapply(seq_len(k), function(c) {
    sweep(matrix(stats::rnorm(sizes[c] * d, sd = stats::runif(1, 0.5, 2.5)), sizes[c], d),
          2, centres[c, ], "+")
  }))
}

# one blob and a few points far out, at several distances
outliers <- function(n, d, out = c(1e2, 1e3, 1e4, 3e4, 1e5), seed = 4) {
  Y <- gauss(n - length(out), d, sd = 3, seed = seed)
  rbind(Y, matrix(out, length(out), d))
}

# separate clusters far apart, some small enough to be summed directly, one
# made of two sub-clusters, a lone point very far out
components <- function(d, scale = 1, seed = 5) {
  set.seed(seed)
  centre <- function(k) if (d == 1) c(0, 1000, 1e4, 2500, 5000, 7000, 3e4, 6e4, 9e4)[k] else
    rbind(c(0, 0), c(1000, 0), c(0, 1e4), c(2500, 2500), c(5000, 0), c(7000, 7000),
          c(3e4, 0), c(0, 6e4), c(9e4, 9e4))[k, ]
  blob <- function(m, k, sd) sweep(matrix(stats::rnorm(m * d, sd = sd), m, d), 2, centre(k), "+")
  n_big <- c(500, 400, 300) * scale
  Y <- rbind(blob(n_big[1], 1, 5), blob(n_big[2], 2, 20),
             blob(n_big[3] / 2, 3, 3), sweep(blob(n_big[3] / 2, 3, 3), 2, rep(60, d), "+"))
  for (k in 4:8) Y <- rbind(Y, blob(40 * scale, k, 1))
  rbind(Y, matrix(1e6, 1, d))
}

# dense clusters in a sparse halo, as early exaggeration leaves a layout
halo <- function(d, scale = 1, seed = 8) {
  set.seed(seed)
  core <- rbind(matrix(stats::rnorm(900 * scale * d, sd = 0.4), 900 * scale, d),
                matrix(stats::rnorm(700 * scale * d, mean = 3, sd = 0.8), 700 * scale, d))
  near_halo <- matrix(stats::runif(60 * scale * d, -40, 40), 60 * scale, d)
  far_halo <- matrix(stats::runif(40 * scale * d, -2000, 2000), 40 * scale, d)
  rbind(core, near_halo, far_halo)
}

# many tight clusters in a wide halo: 2e5 points, as at iteration 260
big_halo <- function(n, seed = 9) {
  set.seed(seed)
  k <- 12
  centres <- matrix(stats::runif(2 * k, -30, 30), k, 2)
  m <- n - n %/% 200
  core <- do.call(rbind, lapply(seq_len(k), function(c) {
    sweep(matrix(stats::rnorm(m %/% k * 2, sd = 0.3), m %/% k, 2), 2, centres[c, ], "+")
  }))
  rbind(core, matrix(stats::runif((n - nrow(core)) * 2, -600, 600), ncol = 2))
}

# The settings of options(lsnn.grid), every field given: the named list of
# the current package, or the positional vector of the version before it.
grid_fields <- c("nodes", "box_width", "min_boxes", "near_field", "points_per_box", "near_boxes",
                 "pair_weight", "smooth_width", "by_components", "shallow_width", "fine_nodes",
                 "fine_smooth_width")
grid <- function(nodes, box_width, min_boxes, near_field = 0, points_per_box = 0,
                 near_boxes = 1, pair_weight = 0, smooth_width = 0, by_components = 0,
                 shallow_width = 0, fine_nodes = 0, fine_smooth_width = 0) {
  list(nodes = nodes, box_width = box_width, min_boxes = min_boxes,
       near_field = near_field != 0, points_per_box = points_per_box, near_boxes = near_boxes,
       pair_weight = pair_weight, smooth_width = smooth_width,
       by_components = by_components != 0, shallow_width = shallow_width,
       fine_nodes = fine_nodes, fine_smooth_width = fine_smooth_width)
}
named_option <- local({
  Y <- gauss(50, 2)
  op <- options(lsnn.grid = grid(5, 4, 1))
  ok <- !inherits(try(cost_gradient(Y, random_p(50), gradient = "approx"), silent = TRUE),
                  "try-error")
  options(op)
  ok
})
with_grid <- function(g, expr) {
  value <- if (is.null(g) || named_option) g else as.numeric(unlist(g[grid_fields]))
  op <- options(lsnn.grid = value)
  on.exit(options(op))
  expr
}

cases <- list()
case <- function(name, f) cases[[name]] <<- f

approx <- function(Y, method = "tsne", g = NULL, P = NULL, ...) {
  if (is.null(P)) P <- random_p(nrow(Y))
  with_grid(g, cost_gradient(Y, P, method, gradient = "approx", n_threads = threads, ...))
}

# cost_gradient(): one evaluation each, a fresh evaluator
for (n in c(100, 1000, 20000)) {
  for (sd in c(1e-3, 1, 30, 1e3)) {
    local({
      n <- n; sd <- sd
      case(sprintf("gauss2d n=%d sd=%g", n, sd), function() approx(gauss(n, 2, sd)))
    })
  }
}
for (n in c(1000, 20000)) {
  local({
    n <- n
    case(sprintf("gauss1d n=%d", n), function() approx(gauss(n, 1, 5)))
    case(sprintf("gauss1d wide n=%d", n), function() approx(gauss(n, 1, 1e4)))
  })
}
case("gauss2d n=200000", function() approx(gauss(2e5, 2, 20)))
case("clusters2d n=5000", function() approx(clusters(5000, 2)))
case("clusters2d n=50000", function() approx(clusters(50000, 2, k = 15, span = 120)))
case("clusters1d n=20000", function() approx(clusters(20000, 1, span = 400)))
case("outliers2d n=3000", function() approx(outliers(3000, 2)))
case("outliers2d n=30000", function() approx(outliers(30000, 2)))
case("outliers1d n=5000", function() approx(outliers(5000, 1)))
case("components2d", function() approx(components(2)))
case("components1d", function() approx(components(1)))
case("components2d x10", function() approx(components(2, 10)))
case("components2d x10 /20", function() approx(components(2, 10) / 20))
case("components1d x10", function() approx(components(1, 10)))
case("halo2d", function() approx(halo(2)))
case("halo1d", function() approx(halo(1)))
case("halo2d x20", function() approx(halo(2, 20)))
case("halo1d x20", function() approx(halo(1, 20)))
case("halo2d n=200000", function() approx(big_halo(2e5)))
case("identical points", function() approx(matrix(2.5, 300, 2)))
# no box of the halo test's grid is well filled
case("uniform2d n=600 wide", function() {
  set.seed(15)
  approx(matrix(stats::runif(1200, 0, 1000), ncol = 2))
})
# clusters within clusters: components down to the most levels
case("nested clusters 2d", function() {
  set.seed(16)
  offsets <- as.matrix(expand.grid(c(0, 2e4), c(0, 1500), c(0, 150), c(0, 20)))
  centres <- cbind(rowSums(offsets[, c(1, 3)]), rowSums(offsets[, c(2, 4)]))
  do.call(rbind, lapply(seq_len(nrow(centres)), function(k) {
      sweep(matrix(stats::rnorm(600, sd = 0.5), ncol = 2), 2, centres[k, ], "+")
  })) |> approx()
})
# a component filling many coarse boxes: its own sums are taken off by FFT
case("components2d fft", function() {
  set.seed(17)
  approx(rbind(matrix(stats::runif(3.8e5, 0, 300), ncol = 2),
               cbind(stats::runif(1e4, 316, 352), stats::runif(1e4, 0, 36))))
})
# new points on and off the grid of a fixed reference
case("reference off grid", function() {
  Yref <- clusters(3000, 2, span = 40)
  Ynew <- rbind(Yref[1:20, ] + 0.1, c(1e4, 1e4), c(-500, 30))
  m <- nrow(Ynew)
  set.seed(18)
  col <- as.integer(sapply(seq_len(m), function(i) sample.int(3000, 5)) - 1L)
  cost <- with_grid(NULL, lsnn:::ne_cost_list(lsnn:::ne_cost_settings("tsne"), "approx"))
  lsnn:::.placement_cost_gradient(Yref, Ynew, as.integer(seq(0, 5 * m, 5)), col,
                                  rep(1 / (5 * m * 3000), 5 * m), cost, threads,
                                  lsnn:::simd_option())
})
case("three dimensions", function() approx(gauss(500, 3)))
case("no energy placement", function() {
  Y <- clusters(3000, 2)
  approx(Y, "umap")
})
for (m in c("largevis", "umap", "tumap")) {
  local({
    m <- m
    case(paste(m, "clusters"), function() approx(clusters(5000, 2), m))
    case(paste(m, "halo"), function() approx(halo(2, 4), m))
    case(paste(m, "components"), function() approx(components(2), m))
    case(paste(m, "1d"), function() approx(clusters(3000, 1), m))
  })
}
case("largevis exp clusters", function() approx(clusters(5000, 2) / 10, "largevis", weight = "exp"))
case("largevis exp halo", function() approx(halo(2) / 50, "largevis", weight = "exp"))

# options(lsnn.grid): forced shapes and plain grids
shapes <- list(
  plain = grid(3, 1, 1),
  plain50 = grid(3, 1, 50),
  near1 = grid(5, 1, 1, near_field = 1, points_per_box = 16),
  smooth = grid(5, 0.3, 1, near_field = 1),
  shallow = grid(5, 0.45, 1, near_field = 1, near_boxes = 1),
  deep = grid(5, 4, 1, near_field = 1, near_boxes = 2),
  fine_smooth = grid(7, 0.6, 1, near_field = 1),
  fine = grid(7, 3, 1, near_field = 1, near_boxes = 1),
  refined_only = grid(5, 4, 1, 1, 64, 2, 1, 0.3, 0, 0.45, 7, 0.6),
  default_spelt = grid(5, 4, 1, 1, 64, 2, 1, 0.3, 1, 0.45, 7, 0.6),
  components_plain = grid(5, 2, 1, 1, 32, 2, 0, 0, 1, 0, 0, 0),
  wide_boxes = grid(9, 20, 1, 1, 81, 3, 2, 0, 1, 0, 0, 0)
)
for (s in names(shapes)) {
  local({
    s <- s
    case(paste("grid", s, "clusters"), function() approx(clusters(4000, 2), g = shapes[[s]]))
    case(paste("grid", s, "halo"), function() approx(halo(2) / 200, g = shapes[[s]]))
    case(paste("grid", s, "1d"), function() approx(gauss(2000, 1, 10), g = shapes[[s]]))
  })
}

# runs: one evaluator over many evaluations (cached spectra, grids kept and
# released, exaggeration's grid then the default)
data_of <- function(Y, seed = 10) {
  set.seed(seed)
  Y[, rep(seq_len(ncol(Y)), length.out = 6)] + matrix(stats::rnorm(nrow(Y) * 6, sd = 0.1), nrow(Y))
}
run <- function(Y, iters, lying, method = "tsne", init = Y, g = NULL, ...) {
  X <- data_of(Y)
  set.seed(11)
  with_grid(g, neighbor_embedding(X, method, init = init, max_iter = iters,
                                  stop_lying_iter = lying, gradient = "approx",
                                  n_threads = threads, ret_extra = TRUE, ...)[c("embedding", "cost")])
}
case("run tsne components", function() run(components(2) / 20, 120, 40, perplexity = 10))
case("run tsne halo", function() run(halo(2, 3), 60, 30, perplexity = 15))
case("run tsne clusters 1d", function() run(clusters(3000, 1, span = 100), 100, 30, n_components = 1,
                                            perplexity = 15))
case("run tsne gauss pca", function() {
  X <- data_of(clusters(4000, 2, span = 30))
  set.seed(12)
  neighbor_embedding(X, "tsne", max_iter = 150, stop_lying_iter = 60, gradient = "approx",
                     n_threads = threads, perplexity = 20)
})
case("run tsne outliers", function() run(outliers(2000, 2, c(300, 3000)), 50, 20, perplexity = 10))
case("run tsne grid", function() run(clusters(2000, 2), 60, 20, g = shapes$near1, perplexity = 10))
# two blobs of one cluster of the data, started apart beside a third
# cluster: they merge, and the grids of the component that is gone are
# released
case("run tsne merging", function() {
  set.seed(19)
  X <- rbind(matrix(stats::rnorm(3900, sd = 1), ncol = 3), matrix(stats::rnorm(900, 30), ncol = 3))
  Y0 <- rbind(matrix(stats::rnorm(2000, sd = 1), ncol = 2),
              sweep(matrix(stats::rnorm(600, sd = 0.5), ncol = 2), 2, c(25, 0), "+"),
              sweep(matrix(stats::rnorm(600, sd = 1), ncol = 2), 2, c(0, -80), "+"))
  set.seed(20)
  neighbor_embedding(X, "tsne", init = Y0, max_iter = 100, stop_lying_iter = 60, perplexity = 15,
                     gradient = "approx", n_threads = threads)
})
case("run umap", function() run(clusters(2000, 2), 60, 0, method = "umap"))
case("transform tsne", function() {
  X <- data_of(clusters(3000, 2, span = 40))
  set.seed(13)
  fit <- neighbor_embedding(X[1:2500, ], "tsne", max_iter = 60, stop_lying_iter = 30,
                            gradient = "approx", n_threads = threads, perplexity = 15,
                            ret_model = TRUE)
  set.seed(14)
  neighbor_embedding_transform(X[2501:3000, ], fit$model, max_iter = 40, n_threads = threads)
})

results <- list()
for (nm in grep(only, names(cases), value = TRUE)) {
  t0 <- proc.time()[["elapsed"]]
  results[[nm]] <- cases[[nm]]()
  if (mode == "save") cat(sprintf("%-34s %6.2f s\n", nm, proc.time()[["elapsed"]] - t0))
}

if (mode == "save") {
  saveRDS(results, file)
  cat("saved", length(results), "cases to", file, "\n")
} else {
  ref <- readRDS(file)
  missing <- setdiff(grep(only, names(ref), value = TRUE), names(results))
  differ <- names(results)[!vapply(names(results), function(nm) {
    identical(results[[nm]], ref[[nm]])
  }, logical(1))]
  for (nm in differ) cat("DIFFERS:", nm, "\n")
  for (nm in missing) cat("MISSING:", nm, "\n")
  if (length(differ) + length(missing) == 0) {
    cat("all", length(results), "cases identical\n")
  } else {
    quit(status = 1)
  }
}
