# The defaults a first try meets: neighbor_embedding() at its defaults on
# the first n Fashion-MNIST images / 255, 2 threads, against uwot at its
# defaults on the same graph (UMAP) and against lsnn's other gradients
# (t-SNE), so that bench/README.md "First tries" shows what every threshold
# of the defaults rests on:
#
#   Rscript bench/bench-first-try.R [parts]      (from the repository root)
#
# parts: any of umap, tsne (default: both).
#   umap   n = 1,000, 5,000, 20,000: lsnn's LSNN-15 graph (exact); the whole
#          neighbor_embedding(method = "umap", nn_method = g) call and
#          uwot::umap(X = NULL, nn_method = g, n_threads = 2) (its defaults
#          otherwise: 500 epochs up to 10,000 points, then 200; one SGD
#          thread); time, the sd of the coordinates and the 15-NN
#          preservation against the data's exact 15-NN.
#   tsne   n = 1,000 to 20,000: the whole default call and the same call
#          with gradient = "exact" and "approx"; time and the final KL over
#          all pairs (exact); at 70,000 the default call alone.
# Results go to bench/results/first-try-<part>.rds and are printed.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
ensure_packages("uwot")

args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args) == 0) c("umap", "tsne") else args
threads <- 2L
X_all <- fashion_data() / 255

if ("umap" %in% parts) {
  rows <- list()
  for (n in c(1000, 5000, 20000)) {
    X <- X_all[seq_len(n), ]
    g <- locally_scaled_knn(X, 15, nn_kind = "exact", n_threads = threads)
    gx <- extended_knn(X, 15, 0, nn_kind = "exact", n_threads = threads)
    set.seed(1)
    t_lsnn <- elapsed(Y <- neighbor_embedding(method = "umap", nn_method = g, n_threads = threads))
    set.seed(1)
    t_uwot <- elapsed(U <- uwot::umap(X = NULL, nn_method = g, n_threads = threads))
    rows[[length(rows) + 1]] <- data.frame(
      n = n, lsnn_s = t_lsnn, uwot_s = t_uwot, ratio = t_lsnn / t_uwot,
      lsnn_sd = sd(Y), uwot_sd = sd(U),
      lsnn_nn15 = neighbor_preservation(gx, Y, k = 15, n_threads = threads),
      uwot_nn15 = neighbor_preservation(gx, U, k = 15, n_threads = threads))
    print(rows[[length(rows)]], row.names = FALSE, digits = 4)
  }
  tab <- do.call(rbind, rows)
  saveRDS(tab, file.path(results_dir(), "first-try-umap.rds"))
  cat("\n== UMAP at the defaults, on lsnn's LSNN-15 graph\n")
  print(tab, row.names = FALSE, digits = 4)
}

if ("tsne" %in% parts) {
  rows <- list()
  for (n in c(1000, 2000, 3000, 5000, 20000, 70000)) {
    X <- X_all[seq_len(n), ]
    kinds <- if (n <= 20000) c("auto", "exact", "approx") else "auto"
    for (kind in kinds) {
      set.seed(1)
      t <- elapsed(r <- neighbor_embedding(X, "tsne", gradient = kind, n_threads = threads,
                                           ret_extra = c("P")))
      kl <- if (n <= 20000) {
        cost_gradient(r$embedding, r$P, "tsne", gradient = "exact", n_threads = threads)$cost
      } else NA_real_
      rows[[length(rows) + 1]] <- data.frame(n = n, gradient = kind, seconds = t, kl = kl)
      print(rows[[length(rows)]], row.names = FALSE, digits = 5)
      rm(r)
    }
  }
  tab <- do.call(rbind, rows)
  saveRDS(tab, file.path(results_dir(), "first-try-tsne.rds"))
  cat("\n== t-SNE at the defaults ('auto') and by each gradient\n")
  print(tab, row.names = FALSE, digits = 5)
}
