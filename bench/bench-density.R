# densMAP and den-SNE on the 70,000 Fashion-MNIST images / 255, 2 threads:
#
#   UMAP_SRC=<umap-learn 0.5.7 checkout> Rscript bench/bench-density.R [parts]
#
# parts: any of densmap, densne (default: both).
#   densmap  lsnn's neighbor_embedding(method = "umap", densmap = TRUE) and
#            umap-learn's densMAP (run from its source by
#            bench/densmap-peer.py with Debian's python3-numba,
#            python3-sklearn and python3-pynndescent, NUMBA_NUM_THREADS=2,
#            compiled before the clock starts), both with 15 neighbours at
#            their defaults otherwise; the whole call's time and the Pearson
#            correlation of the data's and the layout's log radii, each
#            program's own (umap-learn's layout radii come from a new graph
#            of its layout), lsnn's measure over the same edges for both
#            layouts, and umap-learn's measure (over a new UMAP graph of the
#            layout) for both; plain UMAP's for reference.
#   densne   t-SNE and den-SNE at their defaults: time, the radius
#            correlation, and the KL of the layout (the grid's, over P).
#   big      1e6 x 50 generated clusters of unequal spread
#            (generate_clusters()): UMAP and densMAP on one approximate
#            15-NN graph (searched once, not timed): the layouts' times and
#            radius correlations.
# Results go to bench/results/density-<part>.rds and are printed.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))

args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args) == 0) c("densmap", "densne") else args
threads <- 2L
X <- if (any(c("densmap", "densne") %in% parts)) fashion_data() / 255
radius_cor <- function(r) cor(r$radii$data, r$radii$layout)

if ("densmap" %in% parts) {
  t_lsnn <- elapsed(r <- neighbor_embedding(X, "umap", densmap = TRUE,
                                            ret_extra = c("radii", "P"), n_threads = threads,
                                            seed = 1))
  plain <- neighbor_embedding(X, "umap", ret_extra = "radii", n_threads = threads, seed = 1)
  dir <- tempfile("densmap-peer")
  dir.create(dir)
  writeBin(as.vector(t(X)), file.path(dir, "x.f32"), size = 4)
  writeBin(as.vector(t(r$embedding)), file.path(dir, "lsnn.f32"), size = 4)
  out <- system2("/usr/bin/python3",
                 c("bench/densmap-peer.py", file.path(dir, "x.f32"), nrow(X), ncol(X), 15,
                   file.path(dir, "y.f32"), file.path(dir, "lsnn.f32")),
                 stdout = TRUE, env = c(paste0("UMAP_SRC=", Sys.getenv("UMAP_SRC")),
                                        "NUMBA_NUM_THREADS=2"))
  peer <- parse_peer_line(tail(out, 1))
  Y_peer <- matrix(readBin(file.path(dir, "y.f32"), "numeric", 2 * nrow(X), size = 4),
                   ncol = 2, byrow = TRUE)
  ab <- umap_ab(1, 0.1)
  same_edges <- function(Y) {
    cor(r$radii$data, lsnn:::dens_radii_result(r$radii$data, Y, r$P,
                                               list(a = ab[["a"]], b = ab[["b"]]),
                                               threads)$layout)
  }
  res <- data.frame(
    program = c("lsnn densMAP", "umap-learn densMAP", "lsnn UMAP"),
    seconds = c(t_lsnn, peer$seconds, NA),
    own_radius_correlation = c(radius_cor(r), peer$radius_correlation, radius_cor(plain)),
    lsnn_radius_correlation = c(radius_cor(r), same_edges(Y_peer), radius_cor(plain)),
    umap_learn_radius_correlation = c(peer$other_radius_correlation,
                                      peer$remeasured_radius_correlation, NA))
  res$time_ratio <- res$seconds / peer$seconds
  print(res)
  saveRDS(res, file.path(results_dir(), "density-densmap.rds"))
}

if ("densne" %in% parts) {
  runs <- lapply(c(FALSE, TRUE), function(d) {
    t <- elapsed(r <- neighbor_embedding(X, "tsne", densmap = d, ret_extra = c("radii", "P"),
                                         n_threads = threads, seed = 1))
    kl <- cost_gradient(r$embedding, r$P, "tsne", gradient = "approx",
                        n_threads = threads)$cost
    data.frame(layout = if (d) "den-SNE" else "t-SNE", seconds = t,
               radius_correlation = radius_cor(r), kl = kl)
  })
  res <- do.call(rbind, runs)
  res$kl_ratio <- res$kl / res$kl[1]
  print(res)
  saveRDS(res, file.path(results_dir(), "density-densne.rds"))
}

if ("big" %in% parts) {
  Xb <- generate_clusters(1e6)
  g <- extended_knn(Xb, 15, 0, nn_kind = "approx", n_threads = threads, seed = 1)
  rm(Xb)
  # (twice, alternating, for epoch times here vary between runs of one
  # build: each densMAP is compared with the UMAP run just before it)
  runs <- lapply(rep(c(FALSE, TRUE), 2), function(d) {
    t <- elapsed(r <- neighbor_embedding(nn_method = g, method = "umap", densmap = d,
                                         ret_extra = "radii", n_threads = threads, seed = 1))
    data.frame(layout = if (d) "densMAP" else "UMAP", seconds = t,
               radius_correlation = radius_cor(r))
  })
  res <- do.call(rbind, runs)
  res$time_ratio <- res$seconds / rep(res$seconds[c(1, 3)], each = 2)
  print(res)
  saveRDS(res, file.path(results_dir(), "density-big.rds"))
}
