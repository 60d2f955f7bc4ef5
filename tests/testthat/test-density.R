# densMAP and den-SNE: the density term (embed/density.h), neighbor_embedding(densmap = TRUE)
# and cost_gradient(density =).

# two clusters of very different spread
dens_data <- function(n = 120, d = 4, seed = 1) {
  set.seed(seed)
  h <- n %/% 2
  rbind(matrix(stats::rnorm(h * d, sd = 0.3), h, d),
        matrix(stats::rnorm((n - h) * d, sd = 2), n - h, d) + 4)
}

# the data's log radii computed directly: log(1e-8 + sum_j p_ij |x_i - x_j|^2 / sum_j p_ij)
direct_data_radii <- function(P, X) {
  P <- as.matrix(P)
  diag(P) <- 0
  sq <- as.matrix(stats::dist(X))^2
  log(1e-8 + rowSums(P * sq) / rowSums(P))
}

# the layout's log radii over P's entries, w = 1 / (1 + a q^b)
direct_layout_radii <- function(P, Y, a = 1, b = 1) {
  E <- as.matrix(P) > 0
  diag(E) <- FALSE
  q <- as.matrix(stats::dist(Y))^2
  w <- 1 / (1 + a * q^b) * E
  log(1e-8 + rowSums(w * q) / rowSums(w))
}

# central differences of f at Y
numeric_gradient <- function(f, Y, h = 1e-5) {
  G <- Y
  for (k in seq_along(Y)) {
    Yp <- Y
    Ym <- Y
    Yp[k] <- Yp[k] + h
    Ym[k] <- Ym[k] - h
    G[k] <- (f(Yp) - f(Ym)) / (2 * h)
  }
  G
}

test_that("the density term's gradient agrees with finite differences (exact path)", {
  X <- dens_data(50, 3)
  g <- extended_knn(X, n_neighbors = 8)
  fit <- neighbor_embedding(nn_method = g, method = "umap", ret_extra = c("radii", "P"),
                            max_iter = 30, seed = 3)
  set.seed(4)
  Y <- fit$embedding + matrix(stats::rnorm(length(fit$embedding), sd = 0.1), nrow(X))
  dens <- list(data_radii = fit$radii$data, dens_lambda = 1.5, dens_var_shift = 0.05)
  for (method in c("umap", "tumap", "tsne")) {
    P <- if (method == "tsne") fit$P / sum(fit$P) else fit$P
    # eps = 0: the cost whose exact derivative the gradient is
    cg <- function(Y, density) {
      cost_gradient(Y, P, method, eps = 0, gradient = "exact", density = density)
    }
    whole <- cg(Y, dens)
    num <- numeric_gradient(function(Y) cg(Y, dens)$cost, Y)
    expect_lt(max(abs(num - whole$gradient)), 1e-6 * max(1, max(abs(whole$gradient))),
              label = method)
    # the term alone: its share of the cost and of the gradient
    plain <- cg(Y, NULL)
    term <- whole$gradient - plain$gradient
    expect_gt(max(abs(term)), 0)
    num_term <- numeric_gradient(function(Y) cg(Y, dens)$cost - cg(Y, NULL)$cost, Y)
    expect_lt(max(abs(num_term - term)), 1e-6 * max(abs(term)), label = paste(method, "term"))
    expect_identical(plain$pcost, whole$pcost)
  }
})

test_that("the density term's gradient in 1 and 3 dimensions", {
  X <- dens_data(40, 3)
  g <- extended_knn(X, n_neighbors = 6)
  P <- umap_affinities(nn_method = g)
  radii <- neighbor_embedding(nn_method = g, method = "umap", ret_extra = "radii", max_iter = 10,
                              seed = 1)$radii$data
  set.seed(5)
  for (d in c(1, 3)) {
    Y <- matrix(stats::rnorm(40 * d), 40, d)
    dens <- list(data_radii = radii, dens_lambda = 2)
    cg <- function(Y, density) cost_gradient(Y, P, "umap", eps = 0, density = density)
    term <- cg(Y, dens)$gradient - cg(Y, NULL)$gradient
    num <- numeric_gradient(function(Y) cg(Y, dens)$cost - cg(Y, NULL)$cost, Y)
    expect_lt(max(abs(num - term)), 1e-6 * max(abs(term)), label = paste(d, "dimensions"))
    fit <- neighbor_embedding(X, "umap", n_components = d, densmap = TRUE, max_iter = 50, seed = 1)
    expect_true(all(is.finite(fit)))
  }
})

test_that("the density term's gradient on the approximate path", {
  X <- dens_data(160, 4)
  g <- extended_knn(X, n_neighbors = 10)
  fit <- neighbor_embedding(nn_method = g, method = "tsne", perplexity = 10,
                            ret_extra = c("radii", "P"), max_iter = 100, stop_lying_iter = 50,
                            seed = 2)
  Y <- fit$embedding
  dens <- list(data_radii = fit$radii$data)
  for (method in c("tsne", "umap")) {
    P <- if (method == "tsne") fit$P else fit$P / max(fit$P)
    ex <- cost_gradient(Y, P, method, gradient = "exact", density = dens)
    ap <- cost_gradient(Y, P, method, gradient = "approx", density = dens)
    # within the far field's accuracy (test-approx-gradient.R's targets)
    tol <- if (method == "tsne") 1e-3 else 1e-2
    expect_lt(sqrt(sum((ap$gradient - ex$gradient)^2) / sum(ex$gradient^2)), tol, label = method)
    expect_lt(abs(ap$cost / ex$cost - 1), 1e-3, label = method)
    # the term itself is exact on the approximate path: against finite differences
    term <- ap$gradient - cost_gradient(Y, P, method, gradient = "approx")$gradient
    part <- function(Y) {
      cost_gradient(Y, P, method, gradient = "approx", density = dens)$cost -
        cost_gradient(Y, P, method, gradient = "approx")$cost
    }
    sub <- seq_len(20)  # (the far field's evaluations are the slow part)
    num <- numeric_gradient(function(Ys) { Y[sub, ] <- Ys; part(Y) }, Y[sub, ])
    expect_lt(max(abs(num - term[sub, ])), 1e-5 * max(abs(term)), label = paste(method, "term"))
  }
})

test_that("the radii are the direct computation's, for every way to the affinities", {
  X <- dens_data(80, 3)
  g <- extended_knn(X, n_neighbors = 10)
  ab <- umap_ab(1, 0.1)
  cases <- list(
    list(method = "umap", args = list(nn_method = g), a = ab[["a"]], b = ab[["b"]]),
    list(method = "tumap", args = list(X = X), a = 1, b = 1),
    # the graph's perplexity affinities, and those of all pairs of the data
    list(method = "tsne", args = list(nn_method = g, perplexity = 3, stop_lying_iter = 20),
         a = 1, b = 1),
    list(method = "tsne", args = list(X = X, perplexity = 10, stop_lying_iter = 20), a = 1, b = 1)
  )
  for (case in cases) {
    fit <- do.call(neighbor_embedding,
                   c(case$args, list(method = case$method, max_iter = 40, seed = 1,
                                     ret_extra = c("radii", "P"))))
    expect_named(fit$radii, c("data", "layout"))
    expect_equal(fit$radii$data, unname(direct_data_radii(fit$P, X)), tolerance = 1e-10,
                 label = case$method)
    expect_equal(fit$radii$layout,
                 unname(direct_layout_radii(fit$P, fit$embedding, case$a, case$b)),
                 tolerance = 1e-10, label = case$method)
  }
  # densMAP returns the same kind of radii, and correlates them better than UMAP
  dm <- neighbor_embedding(X, "umap", densmap = TRUE, ret_extra = c("radii", "P"), seed = 1)
  um <- neighbor_embedding(X, "umap", ret_extra = "radii", seed = 1)
  expect_equal(dm$radii$data, unname(direct_data_radii(dm$P, X)), tolerance = 1e-10)
  expect_gt(cor(dm$radii$data, dm$radii$layout), cor(um$radii$data, um$radii$layout) + 0.2)
})

test_that("the term's value is -lambda W corr: W = 2 sum(P) for UMAP, 2 for t-SNE", {
  X <- dens_data(60, 3)
  fit <- neighbor_embedding(X, "umap", max_iter = 30, seed = 2, ret_extra = c("radii", "P"))
  set.seed(3)
  Y <- matrix(stats::rnorm(120), 60)
  ab <- umap_ab(1, 0.1)
  # corr: standardised data log radii (over n) against the centred layout's, over
  # sqrt(variance + shift)
  corr_of <- function(P, a, b, shift) {
    ro <- fit$radii$data
    z <- (ro - mean(ro)) / sqrt(mean((ro - mean(ro))^2))
    re <- direct_layout_radii(P, Y, a, b)
    mean(z * (re - mean(re))) / sqrt(mean((re - mean(re))^2) + shift)
  }
  P <- fit$P
  off <- sum(P) - sum(Matrix::diag(P))
  for (case in list(list(method = "umap", P = P, a = ab[["a"]], b = ab[["b"]], W = 2 * off),
                    list(method = "tsne", P = P / sum(P), a = 1, b = 1, W = 2))) {
    dens <- list(data_radii = fit$radii$data, dens_lambda = 1.5, dens_var_shift = 0.1)
    term <- cost_gradient(Y, case$P, case$method, density = dens)$cost -
      cost_gradient(Y, case$P, case$method)$cost
    expect_equal(term, -1.5 * case$W * corr_of(case$P, case$a, case$b, 0.1), tolerance = 1e-8,
                 label = case$method)
  }
})

test_that("densMAP's learning rate is 6 with the term on, UMAP's 1 without", {
  X <- dens_data(80, 3)
  expect_identical(neighbor_embedding(X, "umap", densmap = TRUE, max_iter = 40, seed = 1),
                   neighbor_embedding(X, "umap", densmap = TRUE, eta = 6, max_iter = 40, seed = 1))
  expect_false(identical(
    neighbor_embedding(X, "umap", densmap = TRUE, max_iter = 40, seed = 1),
    neighbor_embedding(X, "umap", densmap = TRUE, eta = 1, max_iter = 40, seed = 1)))
})

test_that("dens_lambda = 0 gives the plain layout, bit for bit", {
  X <- dens_data(100, 3)
  for (args in list(list(method = "umap"), list(method = "tsne", perplexity = 10, max_iter = 300),
                    list(method = "umap", gradient = "exact", max_iter = 100))) {
    plain <- do.call(neighbor_embedding, c(list(X, seed = 5), args))
    zero <- do.call(neighbor_embedding, c(list(X, seed = 5, densmap = TRUE, dens_lambda = 0), args))
    expect_identical(zero, plain, label = args$method)
  }
})

test_that("dens_lambda defaults to umap-learn's 2 for UMAP and densvis' 0.1 for t-SNE", {
  X <- dens_data(80, 3)
  expect_identical(neighbor_embedding(X, "umap", densmap = TRUE, max_iter = 60, seed = 1),
                   neighbor_embedding(X, "umap", densmap = TRUE, dens_lambda = 2, max_iter = 60,
                                      seed = 1))
  expect_identical(
    neighbor_embedding(X, "tsne", perplexity = 10, densmap = TRUE, max_iter = 100,
                       stop_lying_iter = 50, seed = 1),
    neighbor_embedding(X, "tsne", perplexity = 10, densmap = TRUE, dens_lambda = 0.1,
                       max_iter = 100, stop_lying_iter = 50, seed = 1))
  P <- perplexity_affinities(X, perplexity = 10)
  Y <- matrix(stats::rnorm(160), 80)
  radii <- stats::rnorm(80)
  plain <- cost_gradient(Y, P, "tsne")$cost
  default <- cost_gradient(Y, P, "tsne", density = list(data_radii = radii))$cost
  expect_equal(default - plain,
               cost_gradient(Y, P, "tsne", density = list(data_radii = radii, dens_lambda = 0.1))$cost -
                 plain)
  # the term is -lambda W corr, W = 2 for t-SNE: at most 0.2 in size here
  expect_lte(abs(default - plain), 0.2 + 1e-12)
})

test_that("densMAP and den-SNE do not depend on the number of threads, and follow the seed", {
  X <- dens_data(150, 3)
  for (args in list(list(method = "umap"), list(method = "tumap", gradient = "exact", max_iter = 100),
                    list(method = "tsne", perplexity = 10, max_iter = 200, gradient = "approx",
                         stop_lying_iter = 50))) {
    one <- do.call(neighbor_embedding, c(list(X, densmap = TRUE, dens_frac = 0.5, seed = 7,
                                              n_threads = 1), args))
    two <- do.call(neighbor_embedding, c(list(X, densmap = TRUE, dens_frac = 0.5, seed = 7,
                                              n_threads = 2), args))
    expect_identical(one, two, label = args$method)
    again <- do.call(neighbor_embedding, c(list(X, densmap = TRUE, dens_frac = 0.5, seed = 7),
                                           args))
    expect_identical(again, one, label = args$method)
    plain <- do.call(neighbor_embedding, c(list(X, seed = 7), args))
    expect_false(identical(plain, one))
  }
  other <- neighbor_embedding(X, "umap", densmap = TRUE, seed = 8)
  expect_false(identical(other, neighbor_embedding(X, "umap", densmap = TRUE, seed = 7)))
})

test_that("the density term starts at the last dens_frac of the run", {
  X <- dens_data(100, 3)
  seen <- function() {
    at <- list()
    list(callback = function(iteration, Y) {
      at[[as.character(iteration)]] <<- Y
      TRUE
    }, at = function() at)
  }
  for (method in c("tsne", "umap")) {
    plain <- seen()
    dens <- seen()
    # 100 iterations, the term from iteration floor(0.7 * 100) + 1 = 71 on (densMAP's
    # learning rate for both)
    neighbor_embedding(X, method, perplexity = 10, max_iter = 100, epoch = 10, tol = 0,
                       stop_lying_iter = 20, callback = plain$callback, seed = 1,
                       eta = if (method == "umap") 6)
    neighbor_embedding(X, method, perplexity = 10, max_iter = 100, epoch = 10, tol = 0,
                       stop_lying_iter = 20, densmap = TRUE, callback = dens$callback, seed = 1)
    expect_identical(dens$at()[["70"]], plain$at()[["70"]], label = method)
    expect_false(identical(dens$at()[["80"]], plain$at()[["80"]]), label = method)
  }
})

test_that("tol does not end a run before the density term has started", {
  X <- dens_data(200, 3)
  plain <- neighbor_embedding(X, "tsne", perplexity = 10, tol = 1e-2, ret_extra = TRUE, seed = 1)
  dens <- neighbor_embedding(X, "tsne", perplexity = 10, tol = 1e-2, densmap = TRUE,
                             ret_extra = TRUE, seed = 1)
  # the term starts at floor(0.7 * 750) + 1 = 526
  expect_true(plain$converged)
  expect_lt(plain$iterations, 526)
  expect_gt(dens$iterations, 526)
})

test_that("density arguments are checked, by name", {
  X <- dens_data(40, 3)
  expect_error(neighbor_embedding(X, "umap", densmap = TRUE, dens_lambda = -1), "'dens_lambda'")
  expect_error(neighbor_embedding(X, "umap", densmap = TRUE, dens_lambda = NA), "'dens_lambda'")
  expect_error(neighbor_embedding(X, "umap", densmap = TRUE, dens_frac = 0), "'dens_frac'")
  expect_error(neighbor_embedding(X, "umap", densmap = TRUE, dens_frac = 1.5), "'dens_frac'")
  expect_error(neighbor_embedding(X, "umap", densmap = TRUE, dens_var_shift = -0.1),
               "'dens_var_shift'")
  expect_error(neighbor_embedding(X, "umap", densmap = NA), "'densmap'")
  expect_error(neighbor_embedding(X, "pacmap", densmap = TRUE), "'densmap'")
  expect_error(neighbor_embedding(X, "largevis", densmap = TRUE), "'densmap'")
  P <- perplexity_affinities(X, perplexity = 5)
  expect_error(neighbor_embedding(P = P, method = "tsne", densmap = TRUE), "'densmap'")
  expect_error(neighbor_embedding(P = P, method = "tsne", ret_extra = "radii"), "'ret_extra'")
  expect_error(neighbor_embedding(X, "pacmap", ret_extra = "radii"), "'ret_extra'")
  expect_error(neighbor_embedding(X, "largevis", ret_extra = "radii"), "'ret_extra'")
  Y <- matrix(stats::rnorm(80), 40)
  expect_error(cost_gradient(Y, P, "tsne", density = list(data_radii = 1:3)), "'density")
  expect_error(cost_gradient(Y, P, "tsne", density = list(data_radii = rep(0, 40), lambda = 2)),
               "'density'")
  expect_error(cost_gradient(Y, P, "largevis", density = list(data_radii = rep(0, 40))),
               "'density'")
  expect_error(cost_gradient(Y, P, "tsne",
                             density = list(data_radii = rep(0, 40), dens_lambda = -1)),
               "dens_lambda")
})

test_that("a densMAP model places new points, and survives saveRDS()", {
  X <- dens_data(140, 3)
  keep <- seq(1, 140, by = 7)
  fit <- neighbor_embedding(X[-keep, ], "umap", densmap = TRUE, ret_model = TRUE, seed = 2)
  set.seed(3)
  Y <- neighbor_embedding_transform(X[keep, ], fit$model)
  expect_equal(dim(Y), c(length(keep), 2))
  expect_true(all(is.finite(Y)))
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file))
  saveRDS(fit$model, file)
  model <- readRDS(file)
  set.seed(3)
  expect_identical(neighbor_embedding_transform(X[keep, ], model), Y)
  # den-SNE too
  ts <- neighbor_embedding(X[-keep, ], "tsne", perplexity = 10, max_iter = 200, densmap = TRUE,
                           stop_lying_iter = 50, ret_model = TRUE, seed = 2)
  expect_true(all(is.finite(neighbor_embedding_transform(X[keep, ], ts$model))))
})
