# New points: fit on the 60,000 Fashion-MNIST training images,
# place the 10,000 test images.
#
#   Rscript bench/bench-transform.R [n_train n_test] [--store]
#
# (default 60000 10000; --store also writes the placements' table to
# inst/extdata/transform-comparison.csv, which the new-points vignette shows)
#
# Parts, one process, 2 threads:
#   query   exact and approximate 67-NN of the test rows among the training
#           rows (recall of the approximate one, time ratio), and the LSNN-15
#           query
#   uwot    uwot::umap() with its own neighbours and ret_model, then
#           uwot::umap_transform() of the test rows
#   lsnn    lsnn's UMAP on the LSNN-15 graph and t-SNE (ret_model = TRUE),
#           then neighbor_embedding_transform() of the test rows
#   round   uwot fitted on lsnn's LSNN-15 graph, placing the test rows with
#           the LSNN query as uwot::umap_transform()'s nn_method
# For every placement: the time and the 10-NN label accuracy of each placed
# test point among the training points' labels in the embedding (and, for
# scale, the same accuracy of the training points among themselves).
suppressPackageStartupMessages(library(lsnn))
source(file.path("bench", "common.R"))
ensure_packages("uwot")
args <- commandArgs(TRUE)
store <- "--store" %in% args
args <- setdiff(args, "--store")
n_train <- if (length(args) >= 1) as.integer(args[1]) else 60000L
n_test <- if (length(args) >= 2) as.integer(args[2]) else 10000L
threads <- 2L

fm <- fashion_mnist()
X <- fm$X / 255
label <- fm$label
train <- seq_len(n_train)
test <- 60000L + seq_len(n_test)
Xtr <- X[train, ]
Xte <- X[test, ]
cat(sprintf("Fashion-MNIST: %d training rows, %d test rows, %d threads\n", n_train, n_test,
            threads))

# 10-NN label accuracy of the placed points among the training points
accuracy <- function(Y_train, Y_test) {
  idx <- extended_knn(Y_train, n_neighbors = 9, n_extra = 0, nn_kind = "exact",
                      ret_index = TRUE, n_threads = threads)$index
  nn <- extended_knn_query(idx, Y_test, n_neighbors = 10, nn_kind = "exact",
                           n_threads = threads)
  votes <- matrix(as.integer(label[train])[nn$idx], nrow(nn$idx))
  pred <- apply(votes, 1, function(v) which.max(tabulate(v, 10)))
  mean(pred == as.integer(label[test]))
}
self_accuracy <- function(Y_train) {
  g <- extended_knn(Y_train, n_neighbors = 10, n_extra = 0, nn_kind = "exact",
                    n_threads = threads)
  votes <- matrix(as.integer(label[train])[g$idx[, -1]], nrow(g$idx))
  pred <- apply(votes, 1, function(v) which.max(tabulate(v, 10)))
  mean(pred == as.integer(label[train]))
}
rows <- list()
report <- function(what, fit_s, place_s, Y_train, Y_test) {
  acc <- accuracy(Y_train, Y_test)
  self <- self_accuracy(Y_train)
  rows[[length(rows) + 1]] <<- data.frame(what = what, fit_s = fit_s, place_s = place_s,
                                          placed_acc = acc, train_acc = self)
  cat(sprintf("%-44s fit %7.1f s  place %6.2f s  placed 10-NN accuracy %.4f (training %.4f)\n",
              what, fit_s, place_s, acc, self))
}

# ---- query ----
set.seed(1)
t_index <- elapsed(ref <- extended_knn(Xtr, n_neighbors = 66, n_extra = 0, n_threads = threads,
                                       ret_index = TRUE))
t_exact <- elapsed(ex <- extended_knn_query(ref$index, Xte, 67, nn_kind = "exact",
                                            n_threads = threads))
set.seed(2)
t_approx <- elapsed(ap <- extended_knn_query(ref$index, Xte, 67, n_threads = threads))
recall <- mean(vapply(seq_len(n_test), function(i) length(intersect(ap$idx[i, ], ex$idx[i, ])),
                      numeric(1))) / 67
cat(sprintf("index (approximate 67-NN graph of the training rows): %.1f s\n", t_index))
cat(sprintf("67-NN query: exact %.2f s, approximate %.2f s (%.1fx), recall %.4f\n", t_exact,
            t_approx, t_exact / t_approx, recall))
set.seed(3)
t_lsnn_fit <- elapsed(ls <- locally_scaled_knn(Xtr, n_neighbors = 15, n_threads = threads,
                                               ret_index = TRUE))
set.seed(4)
t_lsnn_q <- elapsed(lq <- locally_scaled_knn_query(ls$index, Xte, n_neighbors = 15,
                                                   n_threads = threads))
cat(sprintf("LSNN-15: graph of the training rows %.1f s, query of the test rows %.2f s\n",
            t_lsnn_fit, t_lsnn_q))

# ---- uwot with its own neighbours ----
set.seed(5)
t_fit <- elapsed(um <- uwot::umap(Xtr, n_neighbors = 15, ret_model = TRUE, n_threads = threads,
                                  n_sgd_threads = threads))
t_place <- elapsed(ut <- uwot::umap_transform(Xte, um, n_threads = threads,
                                              n_sgd_threads = threads))
report("uwot umap + umap_transform (own neighbours)", t_fit, t_place, um$embedding, ut)

# ---- lsnn ----
set.seed(6)
t_fit <- elapsed(fit <- neighbor_embedding(Xtr, "umap", neighbors = "lsnn", ret_model = TRUE,
                                           n_threads = threads))
set.seed(7)
t_place <- elapsed(Y <- neighbor_embedding_transform(Xte, fit$model, n_threads = threads))
report("lsnn umap (LSNN-15) + transform", t_fit, t_place, fit$embedding, Y)

set.seed(8)
t_fit <- elapsed(fit <- neighbor_embedding(Xtr, "tsne", ret_model = TRUE, n_threads = threads))
set.seed(9)
t_place <- elapsed(Y <- neighbor_embedding_transform(Xte, fit$model, n_threads = threads))
report("lsnn t-SNE + transform", t_fit, t_place, fit$embedding, Y)

# ---- uwot on lsnn's LSNN graph, placed with the LSNN query ----
set.seed(10)
t_fit <- elapsed(um <- uwot::umap(Xtr, nn_method = ls$lsnn, ret_model = TRUE,
                                  n_threads = threads, n_sgd_threads = threads))
t_place <- elapsed(ut <- uwot::umap_transform(Xte, um, nn_method = lq, n_threads = threads,
                                              n_sgd_threads = threads))
report("uwot umap (LSNN-15) + umap_transform (LSNN query)", t_fit, t_place + t_lsnn_q,
       um$embedding, ut)

res <- do.call(rbind, rows)
res$n_train <- n_train
res$n_test <- n_test
if (store) {
  utils::write.csv(res, file.path("inst", "extdata", "transform-comparison.csv"),
                   row.names = FALSE)
}
saveRDS(list(placements = res, query = c(exact = t_exact, approx = t_approx, recall = recall,
                                         lsnn_query = t_lsnn_q)),
        file.path(results_dir(), sprintf("transform-%d.rds", n_train)))
