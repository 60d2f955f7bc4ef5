# lsnn's main job on generated data: the locally scaled neighbours of an
# S-curve with a hole, their overlap with the plain kNN graph, and uwot
# embeddings of both graphs side by side in lsnn-demo.png.
library(lsnn)
set.seed(42)
data <- scurvehole(n = 5000)
X <- data$X
cat(sprintf("data: S-curve with a hole, %d rows x %d columns\n", nrow(X), ncol(X)))

t0 <- Sys.time()
res <- locally_scaled_knn(X, n_neighbors = 15, n_extra = 50, n_threads = 2,
                          nn_kind = "exact", ret_knn = TRUE)
cat(sprintf("LSNN-15 graph from the 66 nearest neighbours in %.2f s\n",
            as.numeric(Sys.time() - t0, units = "secs")))
cat(sprintf("15-NN overlap between kNN and LSNN graphs: %.3f\n",
            neighbor_overlap(res$knn, res$lsnn)))

if (requireNamespace("uwot", quietly = TRUE)) {
  emb_knn <- uwot::umap(X, nn_method = res$knn, n_threads = 2)
  emb_lsnn <- uwot::umap(X, nn_method = res$lsnn, n_threads = 2)
  out <- "lsnn-demo.png"
  png(out, width = 1400, height = 700, res = 110)
  op <- par(mfrow = c(1, 2), mar = c(1, 1, 3, 1))
  cols <- hcl.colors(100, "Spectral")[cut(data$label, 100, labels = FALSE)]
  plot(emb_knn, col = cols, pch = 20, cex = 0.4, axes = FALSE, xlab = "", ylab = "",
       main = "UMAP on the 15-NN graph")
  plot(emb_lsnn, col = cols, pch = 20, cex = 0.4, axes = FALSE, xlab = "", ylab = "",
       main = "UMAP on the LSNN-15 graph")
  par(op)
  invisible(dev.off())
  cat("wrote", normalizePath(out), "\n")
} else {
  cat("uwot is not installed: no embeddings drawn\n")
}
