# The callback of neighbor_embedding() and neighbor_embedding_transform():
# when it is called and with what, that FALSE stops the run, that a callback
# which never stops it changes nothing, and that its errors are R errors.

# neighbor_embedding() without the warning of runs shorter than the early
# exaggeration (these tests run few iterations).
quiet_ne <- function(...) {
  withCallingHandlers(neighbor_embedding(...), warning = function(w) {
    if (grepl("is below 'stop_lying_iter'", conditionMessage(w))) invokeRestart("muffleWarning")
  })
}

callback_data <- function(n = 120) {
  set.seed(11)
  X <- far_clusters(n_per = n / 3, dim = 4)$X
  rownames(X) <- paste0("p", seq_len(nrow(X)))
  X
}

# A callback that records its calls and stops after `stop_at` (never: Inf).
recorder <- function(stop_at = Inf) {
  calls <- new.env()
  calls$iter <- integer(0)
  calls$Y <- list()
  f <- function(iteration, Y) {
    calls$iter <- c(calls$iter, iteration)
    calls$Y[[length(calls$Y) + 1]] <- Y
    iteration < stop_at
  }
  list(f = f, calls = calls)
}

test_that("a callback that never stops the run leaves every method's result as it was", {
  X <- callback_data()
  cases <- list(
    list(method = "tsne", gradient = "exact"),
    list(method = "tsne", gradient = "approx"),
    list(method = "largevis", gradient = "exact"),
    list(method = "umap", gradient = "exact"),
    list(method = "tumap", gradient = "sampled"),
    list(method = "pacmap", gradient = "auto"),
    list(method = "localmap", gradient = "auto")
  )
  for (case in cases) {
    args <- c(list(X, case$method, max_iter = 120, epoch = 25, ret_extra = TRUE),
              if (case$method %in% c("pacmap", "localmap")) list(phases = c(40, 40, 40))
              else list(perplexity = 10, gradient = case$gradient))
    ref <- do.call(quiet_ne, c(args, seed = 4))
    rec <- recorder()
    got <- do.call(quiet_ne, c(args, seed = 4, callback = rec$f))
    ref$time <- got$time <- NULL
    expect_identical(got, ref, info = paste(case$method, case$gradient))
    expect_identical(rec$calls$iter, c(25L, 50L, 75L, 100L), info = case$method)
    # each call sees the layout of that iteration, its points named
    expect_identical(dim(rec$calls$Y[[1]]), c(nrow(X), 2L))
    expect_identical(rownames(rec$calls$Y[[4]]), rownames(X))
    expect_false(got$stopped)
  }
})

test_that("returning FALSE stops the run at that iteration, the result says so", {
  X <- callback_data()
  # (UMAP's full gradient: negative sampling's learning rate depends on
  # max_iter, so its stopped run is not the start of a shorter one)
  for (method in c("tsne", "umap", "pacmap")) {
    rec <- recorder(stop_at = 60)
    extra <- if (method == "pacmap") list() else
      list(perplexity = 10, gradient = if (method == "umap") "exact" else "auto")
    res <- do.call(quiet_ne, c(list(X, method, max_iter = 300, epoch = 20, ret_extra = TRUE,
                                    callback = rec$f, seed = 2), extra))
    expect_identical(rec$calls$iter, c(20L, 40L, 60L), info = method)
    expect_identical(res$iterations, 60L, info = method)
    expect_true(res$stopped, info = method)
    expect_identical(names(res$cost)[length(res$cost)], "60", info = method)
    # the result is the layout the callback saw last
    expect_equal(res$embedding, rec$calls$Y[[3]], info = method)
    # and the run stopped is the start of the longer run
    short <- do.call(quiet_ne, c(list(X, method, max_iter = 60, epoch = 20, seed = 2),
                                 if (method != "pacmap") c(extra, tol = 0)))
    if (method != "pacmap") expect_identical(res$embedding, short, info = method)
  }
  # the plain result too
  Y <- quiet_ne(X, "umap", gradient = "exact", max_iter = 100, epoch = 10, seed = 1,
                          callback = function(i, Y) FALSE)
  expect_identical(Y, quiet_ne(X, "umap", gradient = "exact", max_iter = 10, epoch = 10,
                               seed = 1))
  # negative sampling stops there too
  r <- quiet_ne(X, "umap", max_iter = 100, epoch = 10, seed = 1, ret_extra = TRUE,
                callback = function(i, Y) FALSE)
  expect_identical(r$gradient, "sampled")
  expect_identical(r$iterations, 10L)
  expect_true(r$stopped)
})

test_that("values other than FALSE let the run go on", {
  X <- callback_data(60)
  ref <- quiet_ne(X, "umap", max_iter = 50, seed = 3)
  for (value in list(TRUE, NULL, NA, 0, "stop", c(FALSE, FALSE))) {
    got <- quiet_ne(X, "umap", max_iter = 50, epoch = 10, seed = 3,
                              callback = function(i, Y) value)
    expect_identical(got, ref)
  }
})

test_that("an error or a bad callback is an R error naming 'callback'", {
  X <- callback_data(60)
  expect_error(quiet_ne(X, "umap", max_iter = 50, epoch = 10,
                                  callback = function(i, Y) if (i == 30) stop("no more")),
               "^'callback' failed at iteration 30: no more$")
  # a callback of another form is refused before the run
  expect_error(quiet_ne(X, "umap", max_iter = 50, epoch = 10,
                                  callback = function() TRUE),
               "^'callback' must take two arguments.*it takes 0$")
  expect_error(quiet_ne(X, "umap", max_iter = 50, epoch = 10,
                        callback = function(a, b, c, d) TRUE),
               "^'callback' must take two arguments.*it takes 4 \\(a, b, c, d\\)$")
  expect_error(quiet_ne(X, "pacmap", max_iter = 50, epoch = 10,
                                  callback = function(i, Y) stop("pairs")),
               "^'callback' failed at iteration 10: pairs$")
  expect_error(quiet_ne(X, "umap", callback = "plot"), "^'callback' must be a function")
  expect_error(quiet_ne(X, "umap", callback = TRUE), "^'callback' must be a function")
  # the package is still usable afterwards
  expect_identical(dim(quiet_ne(X, "umap", max_iter = 20)), c(60L, 2L))
  # the sampled stepper too
  expect_error(quiet_ne(X, "umap", gradient = "sampled", max_iter = 50, epoch = 5,
                                  callback = function(i, Y) stop("sampled")),
               "^'callback' failed at iteration 5: sampled$")
})

test_that("new points placed with a callback", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  keep <- seq(1, nrow(X), by = 2)
  new <- X[-keep, ]
  rownames(new) <- paste0("new", seq_len(nrow(new)))
  for (method in c("tsne", "umap", "pacmap")) {
    fit <- do.call(quiet_ne, c(list(X[keep, ], method, ret_model = TRUE, max_iter = 200,
                                    seed = 1), if (method != "pacmap") list(perplexity = 10)))
    ref <- neighbor_embedding_transform(new, fit, seed = 2)
    rec <- recorder()
    got <- neighbor_embedding_transform(new, fit, seed = 2, callback = rec$f, epoch = 20)
    expect_identical(got, ref, info = method)
    expect_identical(rec$calls$iter[1:3], c(20L, 40L, 60L), info = method)
    expect_identical(rownames(rec$calls$Y[[1]]), rownames(new))
    expect_identical(dim(rec$calls$Y[[1]]), dim(ref))
    rec <- recorder(stop_at = 40)
    got <- neighbor_embedding_transform(new, fit, seed = 2, callback = rec$f, epoch = 20)
    expect_identical(attr(got, "iterations"), 40L, info = method)
    expect_equal(unclass(got)[, ], rec$calls$Y[[2]], ignore_attr = TRUE, info = method)
  }
  expect_error(neighbor_embedding_transform(new, fit, epoch = 0), "^'epoch' must be at least 1")
  expect_error(neighbor_embedding_transform(new, fit, callback = function(i, Y) stop("x")),
               "^'callback' failed at iteration 10: x$")
})

test_that("a callback of three arguments is called as uwot's epoch_callback", {
  X <- callback_data(60)
  seen <- list()
  f <- function(epoch, n_epochs, coords) {
    seen[[length(seen) + 1]] <<- list(epoch = epoch, n_epochs = n_epochs, dim = dim(coords))
    TRUE
  }
  for (gradient in c("sampled", "exact")) {
    seen <- list()
    Y <- quiet_ne(X, "umap", gradient = gradient, max_iter = 40, epoch = 20, callback = f,
                  seed = 5)
    expect_identical(vapply(seen, `[[`, 0L, "epoch"), c(20L, 40L)[seq_along(seen)])
    expect_true(length(seen) >= 1)
    expect_identical(seen[[1]]$n_epochs, 40L)
    expect_identical(seen[[1]]$dim, c(60L, 2L))
    # and the run is the run without it
    expect_identical(Y, quiet_ne(X, "umap", gradient = gradient, max_iter = 40, seed = 5))
  }
  # a function of `...` alone gets (iteration, Y)
  got <- NULL
  quiet_ne(X, "umap", max_iter = 20, epoch = 20, callback = function(...) got <<- list(...))
  expect_length(got, 2)
})
