# Neighbour embeddings at scale: lsnn's approximate t-SNE gradient
# against Rtsne on all 70,000 Fashion-MNIST images; per-iteration time
# against its floor; FIt-SNE too when FITSNE_SRC names its source
# (bench/fitsne.R); the UMAP family against uwot on the LSNN-15 graph; 1e5
# and 1e6 generated rows; 15-NN preservation for every run; the 5,000-row
# accuracy check of the approximate gradient.
#
#   Rscript bench/bench-scale.R [parts]      (from the package root)
#
# parts: any of accuracy, spread, tsne, umap, million (default: all). Environment:
#   LSNN_BENCH_THREADS   threads (2)
#   LSNN_BENCH_UMAP_N    rows for the UMAP-family comparison (70000; above
#                        10,000 lsnn lays these out by negative sampling)
#   LSNN_BENCH_BIG_N     rows of the generated data (1e5,1e6)
#   LSNN_BENCH_BIG_ITER  t-SNE iterations on the generated data (1000)
#   LSNN_BENCH_RTSNE_ITER Rtsne's iterations there (LSNN_BENCH_BIG_ITER)
#   LSNN_BENCH_TSNE_MAX_N, LSNN_BENCH_RTSNE_MAX_N  the largest generated
#                        data lsnn's t-SNE (1e6) and Rtsne (1e5) are run on
#   LSNN_BENCH_BIG_RUNS  which runs on the generated data (umap_lsnn,
#                        umap_uwot, tsne_lsnn, tsne_Rtsne: all)
#   LSNN_BENCH_KL_MAX_N  the largest generated data whose t-SNE layouts get
#                        their exact KL (1e5)
#   LSNN_BENCH_TSNE_ITER lsnn's iterations on the 70,000 images (1000; the
#                        peers run 1,000)
#   LSNN_BENCH_TSNE_RTSNE  "false" leaves Rtsne out of the 70,000-image run
# Results go to bench/results/scale-<part>.rds and are printed.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))

args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args) == 0) c("accuracy", "spread", "tsne", "umap", "million") else args
threads <- as.integer(Sys.getenv("LSNN_BENCH_THREADS", "2"))
out <- list()

# Share of each point's 15 nearest input neighbours among its 15 nearest in
# the embedding (lsnn::neighbor_preservation, the point itself excluded).
# The input graph gx (exact up to 2e5 rows, lsnn's approximate search
# above) is computed once per data set and shared by every run on it.
input_knn <- function(X, k = 15) {
  extended_knn(X, n_neighbors = k, n_extra = 0, n_threads = threads,
               nn_kind = if (nrow(X) > 2e5) "approx" else "exact")
}
preservation <- function(gx, Y, k = 15) {
  neighbor_preservation(gx, Y, k = k, n_threads = threads)
}

# The exact cost of a layout under lsnn's affinities (all pairs, once).
exact_cost <- function(Y, P, method, ...) {
  cost_gradient(Y, P, method, n_threads = threads, gradient = "exact", ...)$cost
}

# ---- 5,000 rows: approximate against exact gradient ----
# Relative gradient error |g_approx - g_exact| / |g_exact| and relative cost
# error of the default approximation (targets: t-SNE 1e-3, the others 1e-2;
# cost 1e-3), at a random and a converged layout of each method; converged:
# lsnn's exact t-SNE (1,000 iterations), uwot's umap / tumap / lvish on the
# same graphs. Then the final exact KL of an approximate t-SNE run against an
# exact run from the same start (target: within 1 %).
if ("accuracy" %in% parts) {
  ensure_packages("uwot")
  set.seed(1)
  X <- fashion_data()[seq_len(5000), ] / 255
  n <- nrow(X)
  X50 <- stats::prcomp(X, rank. = 50)$x
  g90 <- extended_knn(X50, n_neighbors = 90, n_extra = 0, n_threads = threads)
  g15 <- extended_knn(X50, n_neighbors = 14, n_extra = 0, n_threads = threads)
  Pt <- perplexity_affinities(nn_method = g90, perplexity = 30, n_threads = threads)
  Pu <- umap_affinities(nn_method = g15, n_threads = threads)
  rel <- function(Y, P, method, ...) {
    e <- cost_gradient(Y, P, method, gradient = "exact", n_threads = threads, ...)
    a <- cost_gradient(Y, P, method, gradient = "approx", n_threads = threads, ...)
    c(gradient = sqrt(sum((a$gradient - e$gradient)^2) / sum(e$gradient^2)),
      cost = abs(a$cost / e$cost - 1))
  }
  set.seed(3)
  re <- neighbor_embedding(X50, "tsne", perplexity = 30, max_iter = 1000, tol = 0,
                           gradient = "exact", n_threads = threads, ret_extra = TRUE)
  set.seed(3)
  ra <- neighbor_embedding(X50, "tsne", perplexity = 30, max_iter = 1000, tol = 0,
                           gradient = "approx", n_threads = threads, ret_extra = TRUE)
  uw <- function(f, g, ...) {
    f(NULL, nn_method = list(idx = g$idx, dist = g$dist), n_epochs = 500, n_threads = threads,
      n_sgd_threads = 1, ...)
  }
  set.seed(4)
  conv <- list(tsne = re$embedding, umap = uw(uwot::umap, g15), tumap = uw(uwot::tumap, g15),
               largevis = uw(uwot::lvish, g90, perplexity = 30))
  set.seed(5)
  rand <- list(tsne = matrix(stats::rnorm(2 * n, sd = 1e-4), n),
               umap = matrix(stats::rnorm(2 * n, sd = 10), n))
  lv_gamma <- 1 / (10 * n)
  acc <- rbind(
    tsne_random = rel(rand$tsne, Pt, "tsne"),
    tsne_converged = rel(conv$tsne, Pt, "tsne"),
    largevis_random = rel(rand$umap, Pt, "largevis", gamma = lv_gamma),
    largevis_converged = rel(conv$largevis, Pt, "largevis", gamma = lv_gamma),
    largevis_exp_random = rel(rand$umap, Pt, "largevis", gamma = lv_gamma, weight = "exp"),
    umap_random = rel(rand$umap, Pu, "umap"),
    umap_converged = rel(conv$umap, Pu, "umap"),
    tumap_random = rel(rand$umap, Pu, "tumap"),
    tumap_converged = rel(conv$tumap, Pu, "tumap"))
  final <- c(exact = exact_cost(re$embedding, Pt, "tsne"),
             approx = exact_cost(ra$embedding, Pt, "tsne"))
  times <- c(exact = re$time[["optimize"]], approx = ra$time[["optimize"]])
  cat("\n== 5,000 rows (50 PCs): default approximate vs exact gradient and cost (relative)\n")
  print(signif(acc, 3))
  cat("t-SNE (perplexity 30), final exact KL after 1,000 iterations (same start), time (s):\n")
  print(rbind(kl = signif(final, 5), rel_to_exact = signif(final / final[["exact"]] - 1, 3),
              seconds = signif(times, 3)))
  out$accuracy <- list(gradient = acc, final = final, times = times)
}

# ---- cost_gradient() at 5,000 rows: time against the layout's width ----
# A converged t-SNE layout of 5,000 Fashion-MNIST images (50 PCs, 90-NN
# perplexity-30 affinities) scaled to a spread (sd of the first coordinate)
# of 1e-3 to 1e5: the median time of cost_gradient(gradient = "approx") and
# its relative gradient error; and, at the layout's own scale, the exact
# cost_gradient() against one optimizer iteration (targets: within 2x of
# the time at spread 1, and within 3x of an iteration).
if ("spread" %in% parts) {
  X <- fashion_data()[seq_len(5000), ] / 255
  n <- nrow(X)
  set.seed(1)
  X50 <- stats::prcomp(X, rank. = 50)$x
  g90 <- extended_knn(X50, n_neighbors = 90, n_extra = 0, n_threads = threads)
  Pt <- perplexity_affinities(nn_method = g90, perplexity = 30, n_threads = threads)
  Yc <- neighbor_embedding(nn_method = g90, method = "tsne", n_threads = threads)
  Yc <- Yc / stats::sd(Yc[, 1])
  median_time <- function(f, reps = 5) stats::median(vapply(seq_len(reps), function(r) elapsed(f()), 0))
  rows <- lapply(c(1e-3, 1, 10, 100, 1e3, 1e5), function(s) {
    Y <- Yc * s
    e <- cost_gradient(Y, Pt, "tsne", n_threads = threads, gradient = "exact")
    a <- cost_gradient(Y, Pt, "tsne", n_threads = threads, gradient = "approx")
    c(spread = s,
      approx_s = median_time(function() cost_gradient(Y, Pt, "tsne", n_threads = threads,
                                                      gradient = "approx")),
      exact_s = median_time(function() cost_gradient(Y, Pt, "tsne", n_threads = threads,
                                                     gradient = "exact")),
      gradient_error = sqrt(sum((a$gradient - e$gradient)^2) / sum(e$gradient^2)))
  })
  spread <- do.call(rbind, rows)
  # one optimizer iteration at the same layout: 60 against 10 iterations
  iter_time <- function(it) elapsed(neighbor_embedding(nn_method = g90, method = "tsne",
                                                       init = Yc * 30, max_iter = it, tol = 0,
                                                       exaggeration = 1, gradient = "exact",
                                                       epoch = 1e5, n_threads = threads))
  per_iter <- (iter_time(60) - iter_time(10)) / 50
  cat("\n== cost_gradient(), t-SNE, 5,000 rows: median time (s) by spread\n")
  print(signif(spread, 3))
  cat(sprintf("one exact optimizer iteration: %.4f s; exact cost_gradient() / iteration: %.2f\n",
              per_iter, spread[spread[, "spread"] == 1, "exact_s"] / per_iter))
  out$spread <- list(spread = spread, per_iteration = per_iter)
}

# ---- t-SNE of 70,000 images: lsnn against Rtsne ----
if ("tsne" %in% parts) {
  ensure_packages("Rtsne")
  X <- fashion_data() / 255
  n <- nrow(X)
  lsnn_iter <- as.integer(Sys.getenv("LSNN_BENCH_TSNE_ITER", "1000"))
  t_lsnn <- elapsed(res <- neighbor_embedding(X, "tsne", perplexity = 30, max_iter = lsnn_iter,
                                              tol = 0, n_threads = threads, ret_extra = TRUE,
                                              verbose = TRUE))
  rt <- NULL
  t_rtsne <- NA_real_
  if (Sys.getenv("LSNN_BENCH_TSNE_RTSNE", "true") == "true") {
    set.seed(1)
    t_rtsne <- elapsed(rt <- Rtsne::Rtsne(X, perplexity = 30, max_iter = 1000, theta = 0.5,
                                          num_threads = 2, check_duplicates = FALSE))
  }
  # FIt-SNE (bench only, built from the checkout named by FITSNE_SRC): PCA
  # to 50, then fftRtsne() at its defaults with 1,000 iterations
  fit <- NULL
  if (nzchar(Sys.getenv("FITSNE_SRC"))) {
    source(file.path("bench", "fitsne.R"))
    fit <- fitsne_run(X, perplexity = 30, max_iter = 1000, threads = threads, rand_seed = 1)
  }
  P <- res$P
  kl <- c(lsnn = exact_cost(res$embedding, P, "tsne"))
  if (!is.null(rt)) kl[["Rtsne"]] <- exact_cost(rt$Y, P, "tsne")
  if (!is.null(fit)) kl[["FIt-SNE"]] <- exact_cost(fit$Y, P, "tsne")
  # the floor of one iteration: one pass over P (a sparse product) and the
  # FFTs of the final layout's default grid (5 nodes per box, boxes at most
  # 4 units wide and at least sqrt(n / 4) per dimension, padded twice; 7
  # two-dimensional transforms of real data: the charges, 3 kernels, 3
  # potentials; R's own FFT as the yardstick)
  Y <- res$embedding
  t_p <- elapsed(for (r in 1:20) P %*% Y) / 20
  L <- 2 * 5 * pmax(ceiling(apply(Y, 2, function(v) diff(range(v))) / 4), floor(sqrt(n / 4)))
  G <- matrix(stats::rnorm(prod(L)), L[1], L[2])
  t_fft <- elapsed(for (r in 1:5) stats::fft(G)) / 5 * 7 / 2
  per_iter <- res$time[["optimize"]] / res$iterations
  gx <- input_knn(X)
  pres <- c(lsnn = preservation(gx, res$embedding))
  if (!is.null(rt)) pres[["Rtsne"]] <- preservation(gx, rt$Y)
  if (!is.null(fit)) pres[["FIt-SNE"]] <- preservation(gx, fit$Y)
  cat(sprintf("\n== t-SNE, 70,000 Fashion-MNIST images, perplexity 30, lsnn %d iterations, the peers 1,000\n",
              lsnn_iter))
  cat(sprintf("lsnn %.1f s (affinities %.1f, init %.1f, optimise %.1f), Rtsne %.1f s: %.1fx\n",
              t_lsnn, res$time[["affinities"]], res$time[["init"]], res$time[["optimize"]],
              t_rtsne, t_rtsne / t_lsnn))
  if (!is.null(fit)) {
    cat(sprintf("FIt-SNE %.1f s (PCA %.1f, t-SNE %.1f): lsnn takes %.2f of its time\n",
                fit$seconds[["total"]], fit$seconds[["pca"]], fit$seconds[["tsne"]],
                t_lsnn / fit$seconds[["total"]]))
  }
  cat("final exact KL (lsnn's P):", paste(names(kl), sprintf("%.4f", kl), collapse = ", "), "\n")
  cat(sprintf(paste("per iteration %.1f ms; floor %.1f ms (P once %.1f + FFTs %.1f",
                    "on a %d x %d grid): %.1fx\n"),
              1000 * per_iter, 1000 * (t_p + t_fft), 1000 * t_p, 1000 * t_fft, L[1], L[2],
              per_iter / (t_p + t_fft)))
  cat("15-NN preservation:", paste(names(pres), sprintf("%.3f", pres), collapse = ", "), "\n")
  out$tsne <- list(time = c(lsnn = t_lsnn, Rtsne = t_rtsne,
                            `FIt-SNE` = if (is.null(fit)) NA else fit$seconds[["total"]]),
                   kl = kl, per_iter = per_iter,
                   floor = c(P = t_p, fft = t_fft), preservation = pres, lsnn_time = res$time)
}

# ---- UMAP, t-UMAP, LargeVis against uwot on the same graph ----
if ("umap" %in% parts) {
  ensure_packages("uwot")
  n_umap <- as.integer(Sys.getenv("LSNN_BENCH_UMAP_N", "70000"))
  X <- fashion_data()[seq_len(n_umap), ] / 255
  g <- locally_scaled_knn(X, n_neighbors = 15, n_threads = threads)
  # LargeVis's perplexity-30 affinities (both programs) from 90 exact
  # neighbours; their first 15 are the input neighbours of the preservation
  gk <- extended_knn(X, n_neighbors = 90, n_extra = 0, n_threads = threads,
                     nn_kind = "exact")
  gx <- list(idx = gk$idx[, 1:16], dist = gk$dist[, 1:16])
  rows <- list()
  for (m in c("umap", "tumap", "largevis")) {
    if (m == "largevis") {
      t_l <- elapsed(res <- neighbor_embedding(method = m, nn_method = gk, perplexity = 30,
                                               max_iter = 500, n_threads = threads,
                                               ret_extra = TRUE))
      t_u <- elapsed(yu <- uwot::lvish(NULL, nn_method = gk, perplexity = 30, n_epochs = 500,
                                       n_threads = 2, n_sgd_threads = 2))
      P <- res$P
      # the cost's own repulsion weight (res$gamma weighs one negative sample)
      gamma <- 1 / (10 * n_umap)
      cost <- c(lsnn = exact_cost(res$embedding, P, m, gamma = gamma),
                uwot = exact_cost(yu, P, m, gamma = gamma))
    } else {
      t_l <- elapsed(res <- neighbor_embedding(method = m, nn_method = g, max_iter = 500,
                                               n_threads = threads, ret_extra = TRUE))
      fn <- if (m == "umap") uwot::umap else uwot::tumap
      t_u <- elapsed(yu <- fn(NULL, nn_method = g, n_epochs = 500, n_threads = 2,
                              n_sgd_threads = 2))
      P <- res$P
      cost <- c(lsnn = exact_cost(res$embedding, P, m, a = res$a, b = res$b),
                uwot = exact_cost(yu, P, m, a = res$a, b = res$b))
    }
    pres <- c(lsnn = preservation(gx, res$embedding), uwot = preservation(gx, yu))
    rows[[m]] <- c(lsnn_s = t_l, uwot_s = t_u, lsnn_cost = cost[["lsnn"]],
                   uwot_cost = cost[["uwot"]], lsnn_15nn = pres[["lsnn"]],
                   uwot_15nn = pres[["uwot"]])
  }
  tab <- do.call(rbind, rows)
  cat(sprintf("\n== UMAP family, %d Fashion-MNIST images, 500 iterations / epochs\n", n_umap))
  print(signif(tab, 4))
  out$umap <- tab
}

# ---- generated data: 1e5 and 1e6 rows, 50 columns, clustered ----
# Every run in its own R process (peak memory: the high-water mark it adds
# to the data and graph already built). UMAP: lsnn and uwot lay out the same
# approximate 15-NN graph from lsnn (500 epochs each). t-SNE: lsnn's whole
# call from X (its own approximate graph and affinities), against Rtsne up
# to LSNN_BENCH_RTSNE_MAX_N rows. 15-NN preservation against the input's
# 15-NN (exact up to 2e5 rows, lsnn's approximate search above).
if ("million" %in% parts) {
  ensure_packages(c("uwot", "Rtsne"))
  sizes <- as.numeric(strsplit(Sys.getenv("LSNN_BENCH_BIG_N", "1e5,1e6"), ",")[[1]])
  iters <- as.integer(Sys.getenv("LSNN_BENCH_BIG_ITER", "1000"))
  # Rtsne's iterations (default: the same as lsnn's)
  rtsne_iters <- as.integer(Sys.getenv("LSNN_BENCH_RTSNE_ITER", iters))
  tsne_max_n <- as.numeric(Sys.getenv("LSNN_BENCH_TSNE_MAX_N", "1e6"))
  rtsne_max_n <- as.numeric(Sys.getenv("LSNN_BENCH_RTSNE_MAX_N", "1e5"))
  kl_max_n <- as.numeric(Sys.getenv("LSNN_BENCH_KL_MAX_N", "1e5"))
  big_runs <- strsplit(Sys.getenv("LSNN_BENCH_BIG_RUNS",
                                  "umap_lsnn,umap_uwot,tsne_lsnn,tsne_Rtsne"), ",")[[1]]
  rows <- list()
  for (nb in sizes) {
    data_setup <- sprintf(paste(
      "suppressMessages(library(lsnn)); set.seed(1); n <- %d",
      "centres <- matrix(rnorm(20 * 50, sd = 5), 20)",
      "X <- centres[sample.int(20, n, TRUE), ] + matrix(rnorm(n * 50), n)", sep = "; "), nb)
    graph_file <- file.path(results_dir(), sprintf("scale-graph-%d.rds", nb))
    out_file <- function(tag) file.path(results_dir(), sprintf("scale-%s-%d.rds", tag, nb))
    eval(parse(text = data_setup))
    g15 <- extended_knn(X, n_neighbors = 14, n_extra = 0, n_threads = threads,
                        nn_kind = "approx")
    saveRDS(g15, graph_file, compress = FALSE)
    gx <- input_knn(X)
    P_kl <- NULL
    runs <- list(
      umap_lsnn = c("g <- readRDS('%s')", paste(
        "t <- system.time(Y <- neighbor_embedding(nn_method = g, method = 'umap',",
        "n_threads = %d))[['elapsed']]")),
      umap_uwot = c("g <- readRDS('%s')", paste(
        "t <- system.time(Y <- uwot::umap(NULL, nn_method = g, n_epochs = 500,",
        "n_threads = %d, n_sgd_threads = %1$d))[['elapsed']]")),
      tsne_lsnn = c("%.0s", paste(
        "zz <- file(LOGFILE, 'w'); sink(zz, type = 'message');",
        "t <- system.time(Y <- neighbor_embedding(X, 'tsne', max_iter = %d, tol = 0,",
        "n_threads = %d, verbose = TRUE))[['elapsed']]; sink(type = 'message'); close(zz)")),
      tsne_Rtsne = c("%.0s", paste(
        "t <- system.time(Y <- Rtsne::Rtsne(X, perplexity = 30, max_iter = %d, theta = 0.5,",
        "num_threads = %d, pca = FALSE, check_duplicates = FALSE)$Y)[['elapsed']]")))
    if (nb > tsne_max_n) runs$tsne_lsnn <- NULL
    if (nb > rtsne_max_n) runs$tsne_Rtsne <- NULL
    runs <- runs[intersect(names(runs), big_runs)]
    log_file <- file.path(results_dir(), sprintf("scale-tsne-lsnn-%d.log", nb))
    for (tag in names(runs)) {
      r <- runs[[tag]]
      setup <- paste(data_setup, sprintf(r[1], graph_file), sep = "; ")
      code <- if (tag == "tsne_Rtsne") sprintf(r[2], rtsne_iters, threads)
              else if (startsWith(tag, "tsne")) sprintf(r[2], iters, threads) else sprintf(r[2], threads)
      code <- sub("LOGFILE", sprintf("'%s'", log_file), code, fixed = TRUE)
      code <- paste(code, sprintf("saveRDS(list(Y = Y, t = t), '%s')", out_file(tag)), sep = "; ")
      cat(sprintf("-- %s, %d rows\n", tag, nb))
      mem <- peak_memory_mb(setup, code)
      res <- readRDS(out_file(tag))
      # t-SNE: the final exact KL (all pairs) under lsnn's perplexity-30
      # affinities over the 90 nearest neighbours (exact up to 2e5 rows), one
      # P for every program, up to LSNN_BENCH_KL_MAX_N rows
      kl <- NA_real_
      if (startsWith(tag, "tsne") && nb <= kl_max_n) {
        if (is.null(P_kl)) {
          g90 <- extended_knn(X, n_neighbors = 89, n_extra = 0, n_threads = threads,
                              nn_kind = if (nb > 2e5) "approx" else "exact")
          P_kl <- perplexity_affinities(nn_method = g90, perplexity = 30, n_threads = threads)
        }
        kl <- exact_cost(res$Y, P_kl, "tsne")
      }
      rows[[sprintf("%s_%d", tag, nb)]] <- data.frame(
        run = tag, n = nb, seconds = res$t, peak_mb = mem[["added"]],
        nn15 = preservation(gx, res$Y), kl = kl)
      print(rows[[length(rows)]])
      if (tag == "tsne_lsnn") {
        # time of each block of 50 iterations, from the verbose log
        lines <- grep("^iteration [0-9]+: cost", readLines(log_file), value = TRUE)
        at <- as.numeric(sub(".*\\(([0-9.]+) s\\)$", "\\1", lines))
        blocks <- diff(at)
        cat(sprintf("lsnn t-SNE, %d rows: seconds per 50 iterations %s; median %.2f, max / median %.2f\n",
                    nb, paste(fmt(blocks, 1), collapse = " "), stats::median(blocks),
                    max(blocks) / stats::median(blocks)))
      }
    }
  }
  tab <- do.call(rbind, rows)
  rownames(tab) <- NULL
  cat(sprintf("\n== generated data (50 columns, 20 clusters); t-SNE %d iterations, UMAP 500 epochs\n",
              iters))
  print(tab, digits = 4)
  out$million <- tab
}

# one file per part, so that parts run separately keep each other's results
for (part in names(out)) {
  saveRDS(out[[part]], file.path(results_dir(), sprintf("scale-%s.rds", part)))
}
