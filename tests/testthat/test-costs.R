# Dense reference costs in R (ordered pairs i != j).
ref_cost <- function(Y, P, method, gamma = 1, eps = 0, a = 1, b = 1, alpha = 1,
                     weight = "cauchy") {
  P <- as.matrix(P)
  D2 <- as.matrix(dist(Y))^2
  off <- row(D2) != col(D2)
  if (method == "tsne") {
    W <- 1 / (1 + D2)
    Q <- W / sum(W[off])
    nz <- off & P > 0
    return(sum(P[nz] * log(P[nz] / Q[nz])))
  }
  if (method == "largevis") {
    if (weight == "exp") {
      W <- 1 / (1 + exp(D2))
      return(-sum(P[off] * log(W[off])) - gamma * sum(log(1 - W[off])))
    }
    U <- alpha * D2
    W <- 1 / (1 + U)
    return(-sum(P[off] * log(W[off])) - gamma * sum(log((U[off] + eps) / (1 + U[off]))))
  }
  U <- a * D2^b
  W <- 1 / (1 + U)
  V <- P[off]
  xlx <- function(x) ifelse(x > 0, x * log(x), 0)
  sum(xlx(V) + xlx(1 - V)) - sum(V * log(W[off])) -
    sum((1 - V) * log((U[off] + eps) / (1 + U[off])))
}

cost_cases <- list(
  list(method = "tsne"),
  list(method = "largevis", gamma = 0.05),
  list(method = "largevis", gamma = 0.05, alpha = 2.5),
  list(method = "largevis", gamma = 0.05, weight = "exp"),
  list(method = "umap"),
  list(method = "umap", a = 1.2, b = 0.7),
  list(method = "tumap")
)

make_problem <- function(n = 25, seed = 21) {
  set.seed(seed)
  X <- matrix(rnorm(n * 4), n, 4)
  P <- perplexity_affinities(X, perplexity = 6)
  V <- umap_affinities(nn_method = exact_graph(X, 8))
  list(P = P, V = V, n = n)
}

test_that("costs match dense reference values and pcost sums to the cost", {
  pr <- make_problem()
  set.seed(3)
  Y <- spread_coords(pr$n, 2)
  for (cs in cost_cases) {
    P <- if (cs$method %in% c("umap", "tumap")) pr$V else pr$P
    for (eps in c(0, 0.1)) {
      res <- do.call(cost_gradient, c(list(Y, P, eps = eps), cs))
      ab <- if (cs$method == "umap" && is.null(cs$a)) umap_ab() else c(a = 1, b = 1)
      args <- c(list(Y, P, eps = eps), cs)
      if (cs$method %in% c("umap", "tumap")) {
        args$method <- "umap"
        if (is.null(args$a)) {
          args$a <- ab[["a"]]
          args$b <- ab[["b"]]
        }
      }
      expect_equal(res$cost, do.call(ref_cost, args), tolerance = 1e-10,
                   info = paste(cs, collapse = " "))
      expect_equal(sum(res$pcost), res$cost, tolerance = 1e-12)
    }
  }
})

test_that("t-SNE gradient matches the dense formula", {
  pr <- make_problem()
  set.seed(4)
  Y <- spread_coords(pr$n, 2)
  P <- as.matrix(pr$P)
  W <- 1 / (1 + as.matrix(dist(Y))^2)
  diag(W) <- 0
  M <- 4 * (P - W / sum(W)) * W
  G <- rowSums(M) * Y - M %*% Y
  expect_equal(cost_gradient(Y, pr$P)$gradient, G, tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("every gradient is the derivative of its cost (eps = 0)", {
  pr <- make_problem(n = 18)
  for (d in c(1, 2, 3, 5)) {
    set.seed(100 + d)
    Y <- spread_coords(pr$n, d)
    for (cs in cost_cases) {
      P <- if (cs$method %in% c("umap", "tumap")) pr$V else pr$P
      f <- function(Z) do.call(cost_gradient, c(list(Z, P, eps = 0), cs))$cost
      G <- do.call(cost_gradient, c(list(Y, P, eps = 0), cs))$gradient
      Gfd <- fd_gradient(f, Y)
      rel <- max(abs(G - Gfd)) / max(abs(G))
      expect_lt(rel, 1e-6, label = paste(c(cs, d = d), collapse = " "))
    }
  }
})

test_that("dense and sparse P, threads and kernel builds agree", {
  pr <- make_problem(n = 150)
  set.seed(5)
  Y <- spread_coords(pr$n, 2)
  for (cs in cost_cases) {
    P <- if (cs$method %in% c("umap", "tumap")) pr$V else pr$P
    r1 <- do.call(cost_gradient, c(list(Y, P), cs))
    r2 <- do.call(cost_gradient, c(list(Y, as.matrix(P), n_threads = 2), cs))
    expect_identical(r1, r2)
    old <- options(lsnn.simd = "generic")
    r3 <- do.call(cost_gradient, c(list(Y, P), cs))
    options(old)
    expect_equal(r3$cost, r1$cost, tolerance = 1e-12)
    expect_equal(r3$gradient, r1$gradient, tolerance = 1e-12)
  }
})

test_that("the eps defaults are LargeVis 0.1 and UMAP 0.001", {
  pr <- make_problem()
  set.seed(6)
  Y <- spread_coords(pr$n, 2)
  expect_identical(cost_gradient(Y, pr$P, "largevis"),
                   cost_gradient(Y, pr$P, "largevis", eps = 0.1))
  expect_identical(cost_gradient(Y, pr$V, "umap"),
                   cost_gradient(Y, pr$V, "umap", eps = 0.001))
  # with eps > 0 the repulsion is 4 b (1 - v) w / (d^2 + eps) (y_i - y_j)
  V <- as.matrix(pr$V)
  D2 <- as.matrix(dist(Y))^2
  W <- 1 / (1 + D2)
  M <- 4 * (W * V - (1 - V) * W / (D2 + 0.001))
  diag(M) <- 0
  G <- rowSums(M) * Y - M %*% Y
  expect_equal(cost_gradient(Y, pr$V, "tumap")$gradient, G, tolerance = 1e-10,
               ignore_attr = TRUE)
})

test_that("the symmetry check of P is entry by entry, in O(nnz)", {
  pr <- make_problem()
  Y <- spread_coords(pr$n, 2)
  P <- methods::as(pr$P, "CsparseMatrix")
  ref <- cost_gradient(Y, P)$cost
  # an explicit zero on one side and a missing entry on the other agree
  Pz <- as.matrix(P)
  Pz[1, 2] <- Pz[2, 1] <- 0
  Pz <- methods::as(Matrix::drop0(Matrix::Matrix(Pz, sparse = TRUE)), "generalMatrix")
  tr <- Matrix::summary(Pz)
  Pe <- Matrix::sparseMatrix(i = c(tr$i, 1), j = c(tr$j, 2), x = c(tr$x, 0), dims = dim(Pz))
  expect_equal(length(Pe@x), length(Pz@x) + 1)
  expect_equal(cost_gradient(Y, Pe)$cost, cost_gradient(Y, Pz)$cost)
  # rounding differences of a few ulps are symmetric, a relative 1e-10 is not
  Pr <- P
  j <- which(Pr@x > 0)[1]
  Pr@x[j] <- Pr@x[j] * (1 + 4 * .Machine$double.eps)
  expect_equal(cost_gradient(Y, Pr)$cost, ref, tolerance = 1e-12)
  Pr@x[j] <- P@x[j] * (1 + 1e-10)
  expect_error(cost_gradient(Y, Pr), "'P' must be symmetric")
  # a missing counterpart of a non-zero entry
  Pm <- as.matrix(P)
  Pm[2, 1] <- 0
  expect_error(cost_gradient(Y, Matrix::drop0(Matrix::Matrix(Pm, sparse = TRUE))),
               "'P' must be symmetric")
  # the same answer for any number of threads
  expect_identical(lsnn:::.affinity_check(Pr, 1e-14, 1L, "auto"),
                   lsnn:::.affinity_check(Pr, 1e-14, 2L, "auto"))
})

test_that("cost_gradient rejects bad input", {
  pr <- make_problem()
  Y <- spread_coords(pr$n, 2)
  expect_error(cost_gradient(Y, matrix(0, pr$n, pr$n + 1)), "square")
  expect_error(cost_gradient(Y[-1, ], pr$P), "rows")
  Pa <- as.matrix(pr$P)
  Pa[1, 2] <- Pa[1, 2] + 0.1
  expect_error(cost_gradient(Y, Pa), "symmetric")
  Pn <- as.matrix(pr$P)
  Pn[1, 2] <- Pn[2, 1] <- NA
  expect_error(cost_gradient(Y, Pn), "NA")
  Pm <- as.matrix(pr$P)
  Pm[1, 2] <- Pm[2, 1] <- -1
  expect_error(cost_gradient(Y, Pm), "non-negative")
  Yn <- Y
  Yn[1] <- NA
  expect_error(cost_gradient(Yn, pr$P), "NA")
  expect_error(cost_gradient(Y, pr$P, method = "pca"), "method")
  expect_error(cost_gradient(Y, pr$P, method = "largevis", weight = "gauss"), "weight")
  expect_error(cost_gradient(Y, pr$P, eps = -1), "eps")
})

test_that("the cost kernels follow the lsnn.simd option", {
  # (the option may be set for the whole run, as tools/sanitize.sh does)
  old <- options(lsnn.simd = NULL)
  on.exit(options(old))
  expect_identical(lsnn:::.cost_kernels_name("generic"), "generic")
  expect_identical(lsnn:::.cost_kernels_name("auto"), simd_kernels())
})

test_that("the one-pass check of P finds every kind of problem, in any tile", {
  # .affinity_check() and the check cost_gradient() makes while it sums P
  # must find the same problem
  cost <- lsnn:::ne_cost_list(lsnn:::ne_cost_settings("tsne"), "exact")
  # (and both kernel builds)
  check <- function(P, threads = 1L) {
    res <- lsnn:::.affinity_check(P, 1e-14, threads, "auto")
    expect_identical(lsnn:::.affinity_check(P, 1e-14, threads, "generic"), res)
    Y <- matrix(seq_len(2 * nrow(P)) / 7, nrow(P))
    for (simd in c("auto", "generic")) {
      in_pass <- lsnn:::.cost_gradient(Y, P, cost, threads, simd, 1e-14)$check
      expect_identical(in_pass[1:5], res[1:5])
    }
    res
  }
  set.seed(3)
  for (n in c(5, 70, 300)) {
    for (density in c(0.05, 0.5, 1)) {
      A <- Matrix::rsparsematrix(n, n, density, rand.x = function(k) runif(k, 0.1, 1))
      S <- methods::as(Matrix::drop0(A + Matrix::t(A)), "generalMatrix")
      S <- methods::as(S, "CsparseMatrix")
      Matrix::diag(S) <- 0
      S <- Matrix::drop0(S)
      if (length(S@x) < 2) next
      info <- paste(n, density)
      ok <- check(S)
      expect_identical(ok[1], 0, info = info)
      expect_identical(ok[6:7], c(0, 0), info = info)
      expect_identical(check(S, 2L), ok, info = info)
      tr <- Matrix::summary(S)
      for (k in unique(c(1, nrow(tr), sample(nrow(tr), min(3, nrow(tr)))))) {
        i <- tr$i[k]
        j <- tr$j[k]
        # one side changed, or gone
        B <- S
        B[i, j] <- S[i, j] * 1.5
        res <- check(B)
        expect_identical(res[1], 4, info = info)
        expect_true(all(sort(res[2:3]) == sort(c(i, j))), info = info)
        B[i, j] <- 0
        B <- Matrix::drop0(B)
        res <- check(B)
        expect_identical(res[1], 4, info = info)
        expect_true(all(sort(res[2:3]) == sort(c(i, j))), info = info)
        # not finite, negative
        B <- S
        B@x[k] <- NaN
        expect_identical(check(B)[1], 2, info = info)
        B@x[k] <- -1
        expect_identical(check(B)[1], 3, info = info)
        # an explicit zero facing a missing entry is symmetric, and counted
        B <- S
        B@x[k] <- 0
        B[j, i] <- 0
        B <- methods::as(B, "CsparseMatrix")
        res <- check(B)
        expect_identical(res[1], 0, info = info)
      }
      # the diagonal is counted, not compared
      D <- S
      Matrix::diag(D) <- 2
      expect_identical(check(D)[c(1, 6, 7)], c(0, n, 0), info = info)
    }
  }
  # damaged slots
  P <- methods::as(Matrix::Matrix(diag(3) + 1, sparse = TRUE), "generalMatrix")
  bad <- P
  bad@i[2] <- 7L
  expect_identical(check(bad)[1:2], c(1, 1))
  bad <- P
  bad@i[1:2] <- bad@i[2:1]
  expect_identical(check(bad)[1:2], c(1, 1))
  bad <- P
  bad@p[4] <- 8L
  expect_identical(check(bad)[1:2], c(1, 4))
})

test_that("the check's hash sums agree between kernel builds and see every change", {
  sums <- function(P, simd = "auto") lsnn:::.affinity_sums(P, simd)
  set.seed(11)
  # rows of every length modulo 8 (the kernel's vector width), both sides
  # of the diagonal
  for (n in c(3, 9, 40, 130)) {
    A <- Matrix::rsparsematrix(n, n, 0.4, rand.x = function(k) runif(k, 0.1, 1))
    S <- methods::as(methods::as(Matrix::drop0(A + Matrix::t(A)), "generalMatrix"),
                     "CsparseMatrix")
    info <- paste("n =", n)
    s <- sums(S)
    expect_identical(sums(S, "generic"), s, info = info)
    expect_identical(s[1], s[2], info = info)
    # one entry off the diagonal changed in its low bits only, or in its
    # exponent only
    off <- which(S@i != rep(seq_len(n) - 1L, diff(S@p)))
    for (k in unique(c(off[1], off[length(off)], off[sample(length(off), 5)]))) {
      for (factor in c(1 + 2^-50, 2)) {
        B <- S
        B@x[k] <- B@x[k] * factor
        b <- sums(B)
        expect_false(b[1] == b[2], info = paste(info, k, factor))
        expect_identical(sums(B, "generic"), b, info = info)
        # the transpose swaps the two sums
        expect_identical(sums(methods::as(Matrix::t(B), "CsparseMatrix"))[1:2], b[2:1],
                         info = info)
      }
    }
    # stored zeros and the diagonal are counted
    D <- S
    Matrix::diag(D) <- 1
    D@x[1] <- 0
    expect_identical(sums(D)[3:4], c("1", as.character(n)), info = info)
    expect_identical(sums(D, "generic"), sums(D), info = info)
  }
  # a column out of order or a negative value fails the row
  P <- methods::as(Matrix::Matrix(matrix(1, 12, 12), sparse = TRUE), "generalMatrix")
  bad <- P
  bad@i[3:4] <- bad@i[4:3]
  expect_true(all(is.na(sums(bad))))
  expect_true(all(is.na(sums(bad, "generic"))))
  bad <- P
  bad@x[10] <- -1
  expect_true(all(is.na(sums(bad))))
})

test_that("cost_gradient() reads a clean P in place, with the copy's result", {
  # rows of every length modulo 4: a kNN graph's, and all pairs of 27 points
  pr <- make_problem(n = 27)
  Y <- spread_coords(pr$n, 2)
  P <- methods::as(pr$P, "CsparseMatrix")
  tol <- lsnn:::affinity_tol
  # the same entries and a stored zero, which the in-place sum does not
  # leave out: summed from the copy
  with_zero <- function(A) {
    tr <- Matrix::summary(A)
    Matrix::sparseMatrix(i = c(tr$i, 1), j = c(tr$j, 1), x = c(tr$x, 0), dims = dim(A))
  }
  result <- function(...) {
    res <- lsnn:::.cost_gradient(...)
    expect_identical(res$check[1], 0)
    res$check <- NULL
    res
  }
  for (A in list(pr$V, P)) {
    expect_true(lsnn:::read_affinities(A, "P")$clean)
    Az <- with_zero(A)
    expect_false(lsnn:::read_affinities(Az, "P")$clean)
    for (method in c("tsne", "largevis", "umap")) {
      cost <- lsnn:::ne_cost_list(lsnn:::ne_cost_settings(method), "exact")
      for (d in 1:3) {
        Yd <- spread_coords(pr$n, d)
        copy <- result(Yd, Az, cost, 1L, "auto", tol)
        expect_identical(result(Yd, A, cost, 1L, "auto", tol), copy, info = paste(method, d))
        expect_identical(result(Yd, A, cost, 2L, "generic", tol),
                         result(Yd, Az, cost, 2L, "generic", tol))
      }
    }
  }
  expect_true(length(unique(diff(pr$V@p) %% 4)) > 1)
  # a diagonal: the copy without it
  Pd <- P
  Matrix::diag(Pd) <- 1
  expect_false(lsnn:::read_affinities(Pd, "P")$clean)
  expect_equal(cost_gradient(Y, Pd), cost_gradient(Y, P), tolerance = 1e-12)
})
