entropy_of <- function(w) {
  p <- w / sum(w)
  p <- p[p > 0]
  -sum(p * log(p))
}

test_that("perplexity affinities over all pairs are calibrated, symmetric and sum to 1", {
  set.seed(11)
  X <- matrix(rnorm(60 * 4), 60, 4)
  res <- perplexity_affinities(X, perplexity = 12, ret_extra = TRUE)
  P <- res$P
  expect_s4_class(P, "dgCMatrix")
  expect_equal(dim(P), c(60L, 60L))
  expect_equal(sum(P), 1, tolerance = 1e-12)
  expect_true(Matrix::isSymmetric(P, tol = 0))
  expect_equal(sum(abs(Matrix::diag(P))), 0)
  D2 <- as.matrix(dist(X))^2
  cond <- matrix(0, 60, 60)
  H <- numeric(60)
  for (i in 1:60) {
    w <- exp(-res$beta[i] * D2[i, -i])
    H[i] <- entropy_of(w)
    cond[i, -i] <- w / sum(w)
  }
  expect_lt(max(abs(H - log(12))), 1e-5)
  expect_equal(as.matrix(P), (cond + t(cond)) / 120, tolerance = 1e-10,
               ignore_attr = TRUE)
})

test_that("all-pairs affinities drop the entries that underflow to 0", {
  # Two clusters so far apart that exp(-beta d^2) is exactly 0 between them;
  # 130 rows, more than two 64-row blocks, so the in-place symmetrisation
  # crosses blocks.
  set.seed(12)
  X <- rbind(matrix(rnorm(70 * 3), 70, 3), matrix(rnorm(60 * 3, mean = 50), 60, 3))
  res <- perplexity_affinities(X, perplexity = 10, ret_extra = TRUE, n_threads = 2)
  P <- res$P
  expect_true(all(P@x > 0))
  expect_equal(length(P@x), 70L * 69L + 60L * 59L)
  expect_true(Matrix::isSymmetric(P, tol = 0))
  expect_equal(sum(P), 1, tolerance = 1e-12)
  D2 <- as.matrix(dist(X))^2
  cond <- matrix(0, 130, 130)
  for (i in 1:130) {
    w <- exp(-res$beta[i] * (D2[i, -i] - min(D2[i, -i])))
    cond[i, -i] <- w / sum(w)
  }
  expect_equal(as.matrix(P), (cond + t(cond)) / 260, tolerance = 1e-10, ignore_attr = TRUE)
  expect_identical(perplexity_affinities(X, perplexity = 10), P)
})

test_that("perplexity affinities over a graph use the row's neighbours only", {
  set.seed(12)
  X <- matrix(rnorm(80 * 3), 80, 3)
  g <- exact_graph(X, 21)
  res <- perplexity_affinities(nn_method = g, perplexity = 6, ret_extra = TRUE)
  P <- res$P
  expect_equal(sum(P), 1, tolerance = 1e-12)
  expect_true(Matrix::isSymmetric(P, tol = 0))
  cond <- matrix(0, 80, 80)
  H <- numeric(80)
  for (i in 1:80) {
    w <- exp(-res$beta[i] * g$dist[i, -1]^2)
    H[i] <- entropy_of(w)
    cond[i, g$idx[i, -1]] <- w / sum(w)
  }
  expect_lt(max(abs(H - log(6))), 1e-5)
  expect_equal(as.matrix(P), (cond + t(cond)) / 160, tolerance = 1e-10,
               ignore_attr = TRUE)
  # a data frame works like its numeric matrix
  expect_equal(perplexity_affinities(as.data.frame(X), 6), perplexity_affinities(X, 6))
  # threads do not change the result
  expect_identical(perplexity_affinities(nn_method = g, perplexity = 6, n_threads = 2), P)
})

test_that("perplexity affinities reject bad input", {
  X <- matrix(rnorm(40), 20, 2)
  expect_error(perplexity_affinities(X, perplexity = 20), "less than the number")
  expect_error(perplexity_affinities(X, perplexity = 19), "less than the number")
  expect_error(perplexity_affinities(X, perplexity = 1), "greater than 1")
  Xna <- X
  Xna[3, 1] <- NA
  expect_error(perplexity_affinities(Xna, 5), "NA")
  g <- exact_graph(X, 6)
  expect_error(perplexity_affinities(nn_method = g, perplexity = 5), "neighbours of each point")
  bad <- g
  bad$dist <- bad$dist[, -1]
  expect_error(perplexity_affinities(nn_method = bad, perplexity = 3), "same dimensions")
  bad <- g
  bad$idx[1, 2] <- 99L
  expect_error(perplexity_affinities(nn_method = bad, perplexity = 3), "row numbers")
  expect_error(perplexity_affinities("a"), "numeric matrix")
  expect_error(perplexity_affinities(g, 3), "'X' is a neighbour graph: pass it as 'nn_method'")
  expect_error(perplexity_affinities(X, 3, nn_method = g), "not both")
  expect_error(perplexity_affinities(), "give the data")
  expect_error(perplexity_affinities(nn_method = X), "'nn_method' must be a neighbour graph")
})

test_that("UMAP affinities: rho, calibrated sigma, fuzzy union", {
  set.seed(13)
  X <- matrix(rnorm(70 * 3), 70, 3)
  k <- 10
  g <- exact_graph(X, k)
  res <- umap_affinities(nn_method = g, ret_extra = TRUE)
  expect_equal(res$rho, g$dist[, 2])
  Vc <- matrix(0, 70, 70)
  err <- numeric(70)
  for (i in 1:70) {
    v <- exp(-pmax(0, g$dist[i, -1] - res$rho[i]) / res$sigma[i])
    # rows at the lower bound on sigma are not calibrated
    if (res$sigma[i] > 1e-3 * mean(g$dist[i, ]) * (1 + 1e-12)) err[i] <- sum(v) - log2(k)
    Vc[i, g$idx[i, -1]] <- v
  }
  expect_lt(max(abs(err)), 1e-5)
  expect_equal(as.matrix(res$V), Vc + t(Vc) - Vc * t(Vc), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_true(Matrix::isSymmetric(res$V, tol = 0))
  # the intersection, and a mixture
  V0 <- umap_affinities(nn_method = g, set_op_mix_ratio = 0)
  expect_equal(as.matrix(V0), Vc * t(Vc), tolerance = 1e-12, ignore_attr = TRUE)
  Vh <- umap_affinities(nn_method = g, set_op_mix_ratio = 0.25)
  expect_equal(as.matrix(Vh), 0.25 * (Vc + t(Vc) - Vc * t(Vc)) + 0.75 * Vc * t(Vc),
               tolerance = 1e-12, ignore_attr = TRUE)
  # fractional local connectivity interpolates rho, bandwidth scales the target
  r15 <- umap_affinities(nn_method = g, local_connectivity = 1.5, bandwidth = 0.8, ret_extra = TRUE)
  expect_equal(r15$rho, g$dist[, 2] + 0.5 * (g$dist[, 3] - g$dist[, 2]))
  i <- which(r15$sigma > 1e-3 * rowMeans(g$dist) * (1 + 1e-12))[1]
  v <- exp(-pmax(0, g$dist[i, -1] - r15$rho[i]) / r15$sigma[i])
  expect_lt(abs(sum(v) - 0.8 * log2(k)), 1e-5)
})

test_that("UMAP affinities agree with uwot", {
  skip_if_not_installed("uwot")
  set.seed(14)
  X <- matrix(rnorm(100 * 4), 100, 4)
  g <- exact_graph(X, 12)
  ours <- umap_affinities(nn_method = g)
  ref <- uwot::umap(X, n_neighbors = 12, nn_method = g, ret_extra = "fgraph",
                    n_epochs = 0, init = "random")$fgraph
  expect_equal(as.matrix(ours), as.matrix(ref), tolerance = 1e-5, ignore_attr = TRUE)
})

test_that("UMAP affinities reject bad input", {
  X <- matrix(rnorm(40), 20, 2)
  g <- exact_graph(X, 5)
  expect_error(umap_affinities(g), "'X' is a neighbour graph: pass it as 'nn_method'")
  expect_error(umap_affinities(nn_method = X), "'nn_method' must be a neighbour graph")
  expect_error(umap_affinities(X, nn_method = g), "not both")
  # from data: the exact graph of n_neighbors columns
  expect_equal(umap_affinities(X, n_neighbors = 5), umap_affinities(nn_method = g))
  expect_error(umap_affinities(nn_method = g, set_op_mix_ratio = 2), "between 0 and 1")
  expect_error(umap_affinities(nn_method = g, local_connectivity = -1), "at least 0")
  g$dist[2, 3] <- NA
  expect_error(umap_affinities(nn_method = g), "NA")
})

test_that("umap_ab fits UMAP's curve", {
  ab <- umap_ab()
  expect_equal(unname(ab["a"]), 1.577, tolerance = 1e-3)
  expect_equal(unname(ab["b"]), 0.895, tolerance = 1e-3)
  expect_error(umap_ab(spread = 0), "positive")
})
