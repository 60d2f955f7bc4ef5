# Progress of long work under verbose = TRUE: a cli progress bar per phase
# (drawn at once and as plain lines here) and one summary line per phase;
# nothing at all without verbose.

bar_options <- list(cli.progress_show_after = 0, cli.dynamic = FALSE)

# The messages `expr` gives, with the bar options set.
collect_messages <- function(expr) {
  old <- options(bar_options)
  on.exit(options(old))
  msgs <- character()
  withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  msgs
}

# n points in d columns around 10 random centres.
blobs <- function(n, d) {
  centres <- matrix(rnorm(10 * d, sd = 5), 10, d)
  centres[sample.int(10, n, TRUE), ] + matrix(rnorm(n * d), n, d)
}

test_that("the searches show a bar and a summary line per phase under verbose", {
  set.seed(3)
  X <- blobs(3000, 4)
  msgs <- collect_messages(extended_knn(X, 15, 0, verbose = TRUE))
  expect_true(any(grepl("^approx kNN: forest .*%", msgs)))
  expect_true(any(grepl("^approx kNN: descent .*%", msgs)))
  expect_true(any(grepl("^approx kNN: 3000 rows, 4 columns, k = 16; ", msgs)))
  expect_true(any(grepl("^approx kNN: descent, [0-9]+ of at most", msgs)))
  expect_true(any(grepl("^approx kNN: exact distances, 0 rows", msgs)))
  msgs <- collect_messages(extended_knn(X, 15, 0, nn_kind = "exact", verbose = TRUE))
  expect_true(any(grepl("^exact kNN .*%", msgs)))
  expect_true(any(grepl("^exact kNN: 3000 rows, 4 columns, k = 16; [0-9]+ tiles", msgs)))
  msgs <- collect_messages(locally_scaled_knn(X, 10, 10, verbose = TRUE))
  expect_true(any(grepl("^approx kNN: descent, ", msgs)))
})

test_that("calibration and optimization show a bar and a summary line under verbose", {
  set.seed(4)
  X <- blobs(400, 3)
  msgs <- collect_messages(neighbor_embedding(X, perplexity = 10, max_iter = 30,
                                              stop_lying_iter = 10, verbose = TRUE))
  expect_true(any(grepl("^perplexity calibration .*%", msgs)))
  expect_true(any(grepl("^perplexity calibration: 400 points, perplexity 10; 0 missed", msgs)))
  expect_true(any(grepl("^optimization .*%", msgs)))
  expect_true(any(grepl("^optimization: 30 iterations, cost ", msgs)))
  g <- exact_graph(X, 15)
  msgs <- collect_messages(umap_affinities(nn_method = g, verbose = TRUE))
  expect_true(any(grepl("^UMAP memberships: 400 points", msgs)))
  msgs <- collect_messages(perplexity_affinities(nn_method = g, perplexity = 5, verbose = TRUE))
  expect_true(any(grepl("^perplexity calibration: 400 points, perplexity 5", msgs)))
})

test_that("nothing is printed without verbose", {
  old <- options(bar_options)
  on.exit(options(old))
  set.seed(5)
  X <- blobs(3000, 4)
  expect_silent(extended_knn(X, 15, 0))
  expect_silent(extended_knn(X, 15, 0, nn_kind = "exact"))
  expect_silent(locally_scaled_knn(X, 10, 10))
  Y <- X[1:400, ]
  expect_silent(neighbor_embedding(Y, perplexity = 10, max_iter = 30, stop_lying_iter = 10))
  expect_silent(neighbor_embedding(Y, method = "umap", max_iter = 30))
  g <- exact_graph(Y, 15)
  expect_silent(umap_affinities(nn_method = g))
  expect_silent(perplexity_affinities(nn_method = g, perplexity = 5))
  expect_silent(perplexity_affinities(Y, perplexity = 5))
})
