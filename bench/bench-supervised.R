# Supervised UMAP on Fashion-MNIST: fit on the 60,000 training images / 255
# with their labels, place the 10,000 test images without labels, and score
# the test images' 10-NN label accuracy among the training points; lsnn
# (neighbor_embedding(y = ) + neighbor_embedding_transform()) against uwot
# (umap(y = ) + umap_transform()), both at their defaults on 2 threads.
# Then a supervised UMAP of all 70,000 images with half the labels hidden:
# the 10-NN label accuracy of the hidden half, against the unsupervised one.
#
#   Rscript bench/bench-supervised.R [parts]    (from the repository root)
#
# parts: any of split, hidden (default: both). Results go to
# bench/results/supervised-<part>.rds and are printed.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
ensure_packages("uwot")

args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args) == 0) c("split", "hidden") else args
threads <- 2L
fm <- fashion_mnist()
X <- fm$X / 255
label <- fm$label
train <- 1:60000
test <- 60001:70000

if ("split" %in% parts) {
  t_lsnn <- elapsed({
    fit <- neighbor_embedding(X[train, ], "umap", y = label[train], ret_model = TRUE,
                              n_threads = threads, seed = 1)
    Y_new <- neighbor_embedding_transform(X[test, ], fit$model, n_threads = threads, seed = 1)
  })
  acc_lsnn <- knn_label_accuracy(Y_new, fit$embedding, label[test], label[train], FALSE, threads)
  set.seed(1)
  t_uwot <- elapsed({
    m <- uwot::umap(X[train, ], y = label[train], ret_model = TRUE, n_threads = threads)
    U_new <- uwot::umap_transform(X[test, ], m, n_threads = threads)
  })
  acc_uwot <- knn_label_accuracy(U_new, m$embedding, label[test], label[train], FALSE, threads)
  res <- data.frame(package = c("lsnn", "uwot"), seconds = c(t_lsnn, t_uwot),
                    test_knn10_accuracy = c(acc_lsnn, acc_uwot))
  res$time_ratio <- res$seconds / t_uwot
  print(res)
  saveRDS(res, file.path(results_dir(), "supervised-split.rds"))
}

if ("hidden" %in% parts) {
  set.seed(2)
  hidden <- sort(sample(nrow(X), nrow(X) / 2))
  y <- label
  y[hidden] <- NA
  Y_sup <- neighbor_embedding(X, "umap", y = y, n_threads = threads, seed = 1)
  Y_uns <- neighbor_embedding(X, "umap", n_threads = threads, seed = 1)
  shown <- setdiff(seq_len(nrow(X)), hidden)
  acc <- function(Y) knn_label_accuracy(Y[hidden, ], Y[shown, ], label[hidden], label[shown],
                                        FALSE, threads)
  res <- data.frame(layout = c("supervised, half the labels", "unsupervised"),
                    hidden_knn10_accuracy = c(acc(Y_sup), acc(Y_uns)))
  print(res)
  saveRDS(res, file.path(results_dir(), "supervised-hidden.rds"))
}
