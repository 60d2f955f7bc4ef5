# The measurements behind neighbor_embedding()'s defaults, 2 threads:
#
#   Rscript bench/bench-defaults.R [parts]      (from the repository root)
#
# parts: any of tsne, umap-step, crossover, grid (default: all).
#   tsne       t-SNE of all 70,000 Fashion-MNIST images / 255 from one
#              approximate 90-NN perplexity-30 P and one start of each kind:
#              iterations, the step during and after the early exaggeration,
#              the start (spectral or PCA) and the momentum, six runs A-F;
#              time, final exact KL over all pairs and 15-NN preservation.
#   umap-step  UMAP and t-UMAP on the LSNN-15 graph of the first 2,000 and
#              3,000 images (exact gradient, spectral start, one seed):
#              the exact cross-entropy after 500 and 1,000 iterations for
#              step sizes 0.003 to 1 and starts of sd 1e-4 to 3.
#   crossover  the time of one exact and one approximate cost_gradient() of
#              each cost at 2,000 to 20,000 points (layouts resampled from
#              converged 5,000-point layouts, widened as sqrt(n)): where
#              gradient = "auto" switches to the approximation.
#   grid       the relative gradient error of uniform grids (nodes per box,
#              box width, near field none, one or two boxes deep; set by
#              options(lsnn.grid)) against the exact sum, on a converged
#              t-SNE layout of 5,000 images: the shapes refine() may take.
# Results go to bench/results/defaults-<part>.rds and are printed.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))

args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args) == 0) c("tsne", "umap-step", "crossover", "grid") else args
threads <- 2L

rel_error <- function(a, e) sqrt(sum((a - e)^2) / sum(e^2))
median_time <- function(f, reps = 3) stats::median(vapply(seq_len(reps), function(r) elapsed(f()), 0))
save_part <- function(x, part) saveRDS(x, file.path(results_dir(), sprintf("defaults-%s.rds", part)))

# ---- t-SNE at 70,000 points: iterations, step, start, momentum ----
if ("tsne" %in% parts) {
  X <- fashion_data() / 255
  n <- nrow(X)
  set.seed(1)
  g <- extended_knn(X, n_neighbors = 90, n_extra = 0, nn_kind = "approx", n_threads = threads)
  P <- perplexity_affinities(nn_method = g, perplexity = 30, n_threads = threads)
  gx <- extended_knn(X, n_neighbors = 15, n_extra = 0, nn_kind = "exact", n_threads = threads)
  # one start of each kind, scaled as neighbor_embedding() scales its own
  start <- list()
  start_s <- c(spectral = NA_real_, pca = NA_real_)
  for (kind in c("spectral", "pca")) {
    set.seed(2)
    r <- neighbor_embedding(X, "tsne", nn_method = g, init = kind, max_iter = 0,
                            n_threads = threads, ret_extra = TRUE)
    start[[kind]] <- r$embedding
    start_s[kind] <- r$time[["init"]]
  }
  runs <- list(
    A = list(iter = 1000, eta = n / 12, start = "spectral", momentum = 0.5),
    B = list(iter = 1000, eta = NULL, start = "spectral", momentum = 0.5),
    C = list(iter = 750, eta = NULL, start = "spectral", momentum = 0.5),
    D = list(iter = 750, eta = NULL, start = "pca", momentum = 0.5),
    E = list(iter = 750, eta = NULL, start = "pca", momentum = 0.8),
    F = list(iter = 750, eta = n / 12, start = "pca", momentum = 0.5))
  rows <- list()
  for (id in names(runs)) {
    s <- runs[[id]]
    set.seed(3)
    # eta NULL: n / 12 during the exaggeration, then n; a given eta in both
    res <- neighbor_embedding(X, "tsne", nn_method = g, init = start[[s$start]],
                              max_iter = s$iter, eta = s$eta, momentum = s$momentum,
                              final_momentum = 0.8, tol = 0, gradient = "approx",
                              n_threads = threads, ret_extra = TRUE)
    kl <- cost_gradient(res$embedding, P, "tsne", gradient = "exact", n_threads = threads)$cost
    rows[[id]] <- data.frame(
      run = id, iterations = s$iter,
      step = if (is.null(s$eta)) "n/12, n" else "n/12, n/12", start = s$start,
      momentum = if (s$momentum == 0.8) "0.8" else "0.5 then 0.8",
      seconds = res$time[["optimize"]], kl = kl,
      nn15 = neighbor_preservation(gx, res$embedding, k = 15, n_threads = threads))
    print(rows[[id]], row.names = FALSE)
  }
  tab <- do.call(rbind, rows)
  cat(sprintf("\n== t-SNE, 70,000 images: starts spectral %.1f s, PCA %.1f s; optimisation seconds\n",
              start_s[["spectral"]], start_s[["pca"]]))
  print(tab, row.names = FALSE, digits = 5)
  save_part(list(runs = tab, start_seconds = start_s), "tsne")
}

# ---- UMAP and t-UMAP: the step size and the start's spread ----
if ("umap-step" %in% parts) {
  X_all <- fashion_data() / 255
  rows <- list()
  run <- function(method, n, iter, eta = NULL, init_sdev = NULL) {
    X <- X_all[seq_len(n), ]
    g <- locally_scaled_knn(X, n_neighbors = 15, nn_kind = "exact", n_threads = threads)
    set.seed(42)
    res <- neighbor_embedding(method = method, nn_method = g, max_iter = iter, eta = eta,
                              init_sdev = init_sdev, init = "spectral", gradient = "exact",
                              tol = 0, n_threads = threads, ret_extra = TRUE)
    cost_at <- function(it) if (it <= iter) res$cost[[as.character(it)]] else NA_real_
    row <- data.frame(method = method, n = n, eta = res$eta,
                      init_sdev = if (is.null(init_sdev)) 1e-4 else init_sdev,
                      cost_500 = cost_at(500), cost_1000 = cost_at(1000),
                      nn15 = neighbor_preservation(X, res$embedding, k = 15, n_threads = threads),
                      width = max(apply(res$embedding, 2, function(v) diff(range(v)))))
    print(row, row.names = FALSE)
    rows[[length(rows) + 1]] <<- row
  }
  for (eta in c(0.003, 0.01, 0.03)) run("umap", 2000, 1000, eta)
  for (eta in c(0.01, 0.03, 0.1, 1)) run("umap", 3000, 500, eta)
  run("umap", 2000, 1000, init_sdev = 1e-2)
  for (s in c(1, 3)) run("umap", 3000, 500, init_sdev = s)
  for (eta in c(0.01, 0.03)) run("tumap", 2000, 500, eta)
  tab <- do.call(rbind, rows)
  cat("\n== UMAP cross-entropy (exact, all pairs) by step size and start spread\n")
  print(tab, row.names = FALSE, digits = 5)
  save_part(tab, "umap-step")
}

# ---- gradient = "auto": where the approximation becomes cheaper ----
if ("crossover" %in% parts) {
  sizes <- c(2000, 5000, 7000, 10000, 20000)
  X <- fashion_data()[seq_len(max(sizes)), ] / 255
  set.seed(1)
  X50 <- stats::prcomp(X, rank. = 50)$x
  graphs <- function(n) {
    list(g90 = extended_knn(X50[seq_len(n), ], n_neighbors = 90, n_extra = 0,
                            nn_kind = "exact", n_threads = threads),
         g15 = extended_knn(X50[seq_len(n), ], n_neighbors = 14, n_extra = 0,
                            nn_kind = "exact", n_threads = threads))
  }
  affinities <- function(method, g) {
    if (method %in% c("tsne", "largevis")) {
      perplexity_affinities(nn_method = g$g90, perplexity = 30, n_threads = threads)
    } else {
      umap_affinities(nn_method = g$g15, n_threads = threads)
    }
  }
  methods <- c("tsne", "umap", "tumap", "largevis")
  g5 <- graphs(5000)
  converged <- lapply(stats::setNames(methods, methods), function(m) {
    set.seed(3)
    neighbor_embedding(method = m, nn_method = if (m %in% c("tsne", "largevis")) g5$g90 else g5$g15,
                       n_threads = threads)
  })
  rows <- list()
  for (n in sizes) {
    g <- graphs(n)
    for (m in methods) {
      P <- affinities(m, g)
      Yc <- converged[[m]]
      set.seed(4)
      pick <- sample.int(nrow(Yc), n, replace = TRUE)
      Y <- Yc[pick, ] * sqrt(n / nrow(Yc)) +
        matrix(stats::rnorm(2 * n, sd = 1e-3 * stats::sd(Yc[, 1])), n)
      gamma <- if (m == "largevis") 1 / (10 * n) else 1
      f <- function(kind) function() cost_gradient(Y, P, m, gamma = gamma, gradient = kind,
                                                   n_threads = threads)
      t_exact <- median_time(f("exact"))
      t_approx <- median_time(f("approx"))
      rows[[length(rows) + 1]] <- data.frame(method = m, n = n, exact_s = t_exact,
                                             approx_s = t_approx, exact_over_approx = t_exact / t_approx)
      print(rows[[length(rows)]], row.names = FALSE)
    }
  }
  tab <- do.call(rbind, rows)
  cat("\n== one exact / one approximate cost_gradient() (above 1: the approximation is cheaper)\n")
  print(stats::xtabs(exact_over_approx ~ method + n, tab), digits = 3)
  save_part(tab, "crossover")
}

# ---- the grid's shapes: error against box width and near field ----
if ("grid" %in% parts) {
  X <- fashion_data()[seq_len(5000), ] / 255
  set.seed(1)
  X50 <- stats::prcomp(X, rank. = 50)$x
  g90 <- extended_knn(X50, n_neighbors = 90, n_extra = 0, n_threads = threads)
  Pt <- perplexity_affinities(nn_method = g90, perplexity = 30, n_threads = threads)
  set.seed(3)
  Y <- neighbor_embedding(method = "tsne", nn_method = g90, perplexity = 30, max_iter = 1000,
                          tol = 0, gradient = "exact", n_threads = threads)
  exact <- cost_gradient(Y, Pt, "tsne", gradient = "exact", n_threads = threads)$gradient
  error_of <- function(grid) {
    op <- options(lsnn.grid = grid)
    on.exit(options(op))
    rel_error(cost_gradient(Y, Pt, "tsne", gradient = "approx", n_threads = threads)$gradient,
              exact)
  }
  # c(nodes, box width, min_boxes, near, points_per_box, near_boxes): one
  # uniform grid over the whole layout, boxes at most `width` wide
  shapes <- rbind(
    expand.grid(nodes = 5:8, width = c(0.3, 0.35, 0.4, 0.42, 0.5, 0.59, 0.6, 0.7), depth = 0),
    expand.grid(nodes = 5:8, width = c(0.45, 0.5, 0.59, 0.6, 0.71, 1, 1.4, 2, 4, 8), depth = 1),
    expand.grid(nodes = 5, width = c(1, 4), depth = 2))
  shapes$error <- NA_real_
  for (i in seq_len(nrow(shapes))) {
    s <- shapes[i, ]
    shapes$error[i] <- error_of(c(s$nodes, s$width, 1, as.numeric(s$depth > 0), 0,
                                  max(1, s$depth)))
  }
  default_error <- rel_error(cost_gradient(Y, Pt, "tsne", gradient = "approx",
                                           n_threads = threads)$gradient, exact)
  cat(sprintf("\n== relative gradient error, converged t-SNE layout of 5,000 images (%.0f units wide)\n",
              max(apply(Y, 2, function(v) diff(range(v))))))
  for (d in 0:2) {
    cat(c("no near field", "near field one box deep", "near field two boxes deep")[d + 1], "\n")
    print(signif(stats::xtabs(error ~ width + nodes, shapes[shapes$depth == d, ]), 2))
  }
  cat(sprintf("the defaults (refine()'s choice): %.2g\n", default_error))
  save_part(list(shapes = shapes, default = default_error), "grid")
}
