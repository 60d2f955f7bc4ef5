# Nothing silent: a condition R raises while the core runs (a time limit,
# an interrupt) reaches the caller's handlers once the core has stopped; a
# diverging layout is an error naming its step size; equal reported
# distances are listed by row number.

# Runs `expr` under an elapsed-time limit of `seconds` inside tryCatch(),
# as R.utils::withTimeout() does. Returns "caught" when the time limit's
# error reached the handler (with `from_core`, raised inside the core: the
# error's call is the .Call into it or its wrapper), else what happened.
# A limit that ran out in R, before the core began (a loaded machine), is
# tried again with twice the time, up to 16 s.
under_time_limit <- function(expr, seconds = 0.5, from_core = TRUE) {
  expr <- substitute(expr)
  env <- parent.frame()
  on.exit(setTimeLimit())
  repeat {
    r <- tryCatch({
      setTimeLimit(elapsed = seconds, transient = TRUE)
      eval(expr, env)
      "finished"
    }, error = function(e) {
      setTimeLimit()
      call <- conditionCall(e)
      fun <- if (is.call(call) && is.name(call[[1]])) as.character(call[[1]]) else ""
      in_core <- fun == ".Call" || (startsWith(fun, ".") &&
                                      exists(fun, envir = asNamespace("lsnn"), inherits = FALSE))
      if (!grepl("time limit", conditionMessage(e))) {
        paste(fun, conditionMessage(e))
      } else if (in_core || !from_core) {
        "caught"
      } else {
        "outside the core"
      }
    })
    if (r != "outside the core" || seconds >= 16) return(r)
    seconds <- 2 * seconds
  }
}

test_that("a time limit reached inside a layout or a search is caught by tryCatch()", {
  skip_on_cran()
  set.seed(1)
  X <- matrix(rnorm(3000 * 5), 3000)
  # the inputs are made first, so that the limit runs out in the core
  P <- perplexity_affinities(X, 30)
  V <- umap_affinities(X, 15)
  G <- locally_scaled_knn(X, 11, nn_kind = "exact")
  Y0 <- matrix(rnorm(3000 * 2, sd = 1e-4), 3000)
  # (a search of a few tenths of a second: the limit must run out inside it)
  Z <- matrix(rnorm(12000 * 300), 12000)
  suppressWarnings(neighbor_embedding(P = P, method = "tsne", max_iter = 2, init = Y0, seed = 1))
  expect_identical(under_time_limit(
    neighbor_embedding(X, "pacmap", nn_method = G, phases = c(100, 100, 1e5), seed = 1)),
    "caught")
  expect_identical(under_time_limit(
    neighbor_embedding(P = P, method = "tsne", max_iter = 1e5, tol = 0, init = Y0, seed = 1)),
    "caught")
  expect_identical(under_time_limit(
    neighbor_embedding(P = V, method = "umap", gradient = "sampled", max_iter = 1e6,
                       init = Y0, seed = 1)), "caught")
  expect_identical(under_time_limit(extended_knn(Z, 15, 0, nn_kind = "exact"), seconds = 0.2),
                   "caught")
  # the core stopped and let go of its memory: the next call runs as usual
  Y <- neighbor_embedding(P = P, method = "tsne", max_iter = 300, init = Y0, seed = 1)
  expect_equal(dim(Y), c(3000L, 2L))
  expect_true(all(is.finite(Y)))
})

test_that("a fallback taken when a solver fails lets a time limit through", {
  expect_identical(lsnn:::value_or(stop("no convergence"), "fallback"), "fallback")
  expect_error(lsnn:::value_or(stop("reached elapsed time limit"), "fallback"),
               "^reached elapsed time limit$")
  expect_error(lsnn:::value_or(stop(gettext("reached CPU time limit", domain = "R")), 1),
               gettext("reached CPU time limit", domain = "R"), fixed = TRUE)
})

test_that("an interrupt inside a layout is caught by tryCatch(interrupt = )", {
  skip_on_cran()
  skip_on_os("windows")
  set.seed(1)
  X <- matrix(rnorm(2000 * 5), 2000)
  G <- locally_scaled_knn(X, 11, nn_kind = "exact")
  # a forked child sends SIGINT (Ctrl-C) while the layout runs
  pid <- Sys.getpid()
  job <- parallel::mcparallel({
    Sys.sleep(1)
    tools::pskill(pid, tools::SIGINT)
  })
  on.exit(parallel::mccollect(job), add = TRUE)
  r <- tryCatch({
    neighbor_embedding(X, "pacmap", nn_method = G, phases = c(100, 100, 1e5), seed = 1)
    "finished"
  }, interrupt = function(e) "interrupted")
  expect_identical(r, "interrupted")
})

test_that("every optimiser stops with an error naming 'eta' when the layout diverges", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  diverged <- "the embedding diverged at iteration [0-9]+ .*'eta'"
  # gradient descent (t-SNE), with early exaggeration named too
  expect_error(neighbor_embedding(X, "tsne", eta = 1e12, seed = 1),
               "the embedding diverged at iteration [0-9]+ .*'eta' or 'exaggeration'")
  # Adam (PaCMAP, LocalMAP)
  expect_error(neighbor_embedding(X, "pacmap", eta = 1e6, seed = 1), diverged)
  expect_error(neighbor_embedding(X, "localmap", eta = 1e6, seed = 1), diverged)
  # negative sampling (UMAP, LargeVis)
  expect_error(neighbor_embedding(X, "umap", gradient = "sampled", eta = 1e6, seed = 1), diverged)
  expect_error(neighbor_embedding(X, "largevis", gradient = "sampled", eta = 1e6, seed = 1),
               diverged)
  # new points placed in an existing embedding
  ref <- X[seq(1, nrow(X), by = 2), ]
  new <- X[seq(2, nrow(X), by = 2), ]
  for (method in c("tsne", "umap", "pacmap")) {
    m <- neighbor_embedding(ref, method, ret_model = TRUE, seed = 1)
    expect_error(neighbor_embedding_transform(new, m$model, eta = 1e12, seed = 1), diverged)
  }
  expect_no_error(neighbor_embedding_transform(new, m$model, seed = 1))
})

test_that("the default step sizes do not trip the divergence check", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  for (method in c("tsne", "largevis", "umap", "tumap")) {
    for (gradient in c("exact", "approx", "sampled")) {
      if (method == "tsne" && gradient == "sampled") next
      Y <- neighbor_embedding(X, method, gradient = gradient, seed = 1)
      expect_true(all(is.finite(Y)), info = paste(method, gradient))
    }
  }
  for (method in c("pacmap", "localmap")) {
    expect_true(all(is.finite(neighbor_embedding(X, method, seed = 1))))
  }
})

# Whether every row lists neighbours at equal distance by row number (the
# self column aside).
ties_by_row_number <- function(idx, dist, first = 2L) {
  k <- ncol(idx)
  if (k <= first) return(TRUE)
  bad <- 0
  for (c in (first + 1L):k) {
    bad <- bad + sum(dist[, c] == dist[, c - 1L] & idx[, c] < idx[, c - 1L])
  }
  bad == 0
}

has_ties <- function(dist, first = 2L) {
  any(dist[, -(1:first), drop = FALSE] == dist[, -c(1:(first - 1L), ncol(dist)), drop = FALSE])
}

test_that("equal reported distances are listed by row number in every graph", {
  X <- as.matrix(iris[, 1:4])  # with its duplicated rows
  graphs <- list(
    exact = extended_knn(X, 15, 10, nn_kind = "exact"),
    approx = extended_knn(X, 15, 10, nn_kind = "approx", seed = 1),
    lsnn_exact = locally_scaled_knn(X, 15, nn_kind = "exact"),
    lsnn_approx = locally_scaled_knn(X, 15, nn_kind = "approx", seed = 1))
  for (name in names(graphs)) {
    g <- graphs[[name]]
    expect_true(has_ties(g$dist), info = name)
    expect_identical(g$idx[, 1], seq_len(nrow(X)), info = name)
    expect_true(all(diff(t(g$dist)) >= 0), info = name)
    expect_true(ties_by_row_number(g$idx, g$dist), info = name)
  }
  # sort_knn_graph() keeps a sorted graph as it is
  expect_identical(sort_knn_graph(graphs$exact), graphs$exact)
  # queries (no self column)
  ref <- X[1:100, ]
  for (kind in c("exact", "approx")) {
    ix <- extended_knn(ref, 15, 10, nn_kind = "exact", ret_index = TRUE)$index
    q <- extended_knn_query(ix, X[101:150, ], 20, nn_kind = kind, seed = 1)
    expect_true(ties_by_row_number(q$idx, q$dist, first = 1L), info = kind)
    li <- locally_scaled_knn(ref, 15, nn_kind = "exact", ret_index = TRUE)$index
    lq <- locally_scaled_knn_query(li, X[101:150, ], 10, nn_kind = kind, seed = 1)
    expect_true(ties_by_row_number(lq$idx, lq$dist, first = 1L), info = kind)
  }
})
