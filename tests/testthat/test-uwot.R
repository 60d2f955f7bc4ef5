test_that("uwot accepts every graph lsnn returns, with and without data", {
  skip_if_not_installed("uwot")
  skip_if_quick()
  set.seed(13)
  X <- clustered(300, 6)
  res <- locally_scaled_knn(X, 15, nn_kind = "exact", ret_knn = TRUE)
  enn <- extended_knn(X, 15, 10, nn_kind = "exact")
  graphs <- list(lsnn = res$lsnn, knn = res$knn, enn = enn, sorted = sort_knn_graph(enn),
                 truncated = truncate_graph(enn, 10), from_enn = enn_to_lsnn(enn, 12),
                 cosine = extended_knn(X, 15, 0, nn_kind = "exact", metric = "cosine"))
  for (name in names(graphs)) {
    g <- graphs[[name]]
    e1 <- uwot::umap(X, nn_method = g, n_epochs = 10, init = "random")
    e2 <- uwot::umap(NULL, nn_method = g, n_epochs = 10, init = "random")
    expect_equal(dim(e1), c(300, 2), info = name)
    expect_equal(dim(e2), c(300, 2), info = name)
    expect_true(all(is.finite(e1)), info = name)
  }
})
