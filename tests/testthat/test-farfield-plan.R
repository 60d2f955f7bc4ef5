# The far field's plan (inst/include/lsnn/farfield/plan.h): which regions a
# layout is split into and which grid each gets, made without any FFT
# (far_field_plan()).

blobs <- function(centres, m, sd = 1) {
  do.call(rbind, lapply(seq_len(nrow(centres)), function(k) {
    sweep(matrix(stats::rnorm(m * ncol(centres), sd = sd), m), 2, centres[k, ], "+")
  }))
}

test_that("one cluster is one grid, chosen by cost, and the printout says so", {
  set.seed(1)
  p <- far_field_plan(matrix(stats::rnorm(2000), ncol = 2))
  expect_s3_class(p, "lsnn_far_field_plan")
  expect_identical(nrow(p$regions), 1L)
  r <- p$regions[1, ]
  expect_identical(r$kind, "grid")
  expect_identical(r$points, 1000L)
  expect_identical(r$why, "one component")
  expect_true(r$nodes %in% c(5L, 7L))
  expect_true(r$near_boxes %in% 0:2)
  expect_match(p$text[1], "^far field of 1000 points in 2-D")
  expect_match(p$text[2], "^region 1, the whole layout, 1000 points: one grid \\(one component\\)")
  expect_true(any(grepl("chosen by cost among [0-9]+ shapes", p$text)))
  out <- capture.output(res <- print(p))
  expect_identical(out, p$text)
  expect_identical(res, p)
})

test_that("small layouts and 1-D layouts", {
  set.seed(2)
  p <- far_field_plan(matrix(stats::rnorm(600), ncol = 2))
  expect_identical(p$regions$kind, "grid")
  expect_identical(p$regions$why, "too few points to split")
  p1 <- far_field_plan(matrix(stats::rnorm(3000), ncol = 1))
  expect_identical(p1$regions$kind, "grid")
  expect_true(is.na(p1$regions$boxes_y) && is.na(p1$regions$width_y))
  expect_match(p1$text[1], "in 1-D")
})

test_that("separate clusters are components, each a region of its own", {
  set.seed(3)
  Y <- blobs(rbind(c(0, 0), c(500, 0), c(0, 500)), 1000)
  p <- far_field_plan(Y)
  reg <- p$regions
  expect_identical(reg$kind, c("components", "grid", "grid", "grid"))
  expect_identical(reg$region, c("1", "1.1", "1.2", "1.3"))
  expect_identical(reg$parent, c(NA, 1L, 1L, 1L))
  expect_identical(reg$points, c(3000L, 1000L, 1000L, 1000L))
  expect_identical(reg$depth, c(0L, 1L, 1L, 1L))
  # the coarse grid is far coarser than the components' own grids
  expect_true(all(reg$width_x[-1] < reg$width_x[1] / 10))
  expect_match(p$text[2], "3 components: their pairs on the coarse grid")
  # small components are summed directly, not made regions
  Y2 <- rbind(Y, blobs(rbind(c(500, 500)), 100))
  p2 <- far_field_plan(Y2)
  expect_identical(p2$regions$kind, c("components", "grid", "grid", "grid"))
  expect_match(p2$text[2], "4 components: .* 1 summed directly, 3 regions")
})

test_that("a few far points are peeled off, a sparse halo is shed", {
  set.seed(4)
  # a large and a small cluster, five points between them: no halo worth
  # shedding (it lies within the clusters' extent), and few enough points
  # outside the largest component to sum directly
  Y <- rbind(blobs(rbind(c(0, 0)), 3000, 3), blobs(rbind(c(200, 0)), 40, 0.5),
             blobs(rbind(c(100, 0)), 5, 0.5))
  p <- far_field_plan(Y)
  expect_identical(p$regions$kind, c("peel", "grid"))
  expect_identical(p$regions$points, c(3045L, 3000L))
  expect_identical(p$regions$peels, c(0L, 1L))
  expect_match(p$text[2], "45 outlying points summed directly")
  # dense clusters in a wide sparse halo
  set.seed(8)
  core <- rbind(matrix(stats::rnorm(1800, sd = 0.4), 900),
                matrix(stats::rnorm(1400, mean = 3, sd = 0.8), 700))
  Yh <- rbind(core, matrix(stats::runif(120, -40, 40), 60), matrix(stats::runif(80, -2000, 2000), 40))
  ph <- far_field_plan(Yh)
  expect_identical(ph$regions$kind[1], "shed")
  expect_identical(utils::tail(ph$regions$kind, 1), "grid")
  expect_true(all(diff(ph$regions$points) <= 0))
  expect_true(any(grepl("halo test on a coarse grid .*: shed$", ph$text)))
  # the coarse grids keep 5 nodes a box, or a plain grid's fewer
  expect_identical(ph$regions$nodes[1], 5L)
  pe <- far_field_plan(Yh, exaggerated = TRUE)
  expect_identical(pe$regions$kind[1], "shed")
  expect_identical(unique(pe$regions$nodes), 3L)
})

test_that("the plan follows the settings: exaggeration and options(lsnn.grid)", {
  set.seed(5)
  Y <- matrix(stats::rnorm(4000), ncol = 2)
  pe <- far_field_plan(Y, exaggerated = TRUE)
  expect_identical(pe$regions$nodes, 3L)
  expect_identical(pe$regions$near_boxes, 0L)
  expect_identical(far_field_plan(Y, "umap")$regions$nodes, 3L)
  expect_identical(far_field_plan(Y, "largevis")$regions$nodes, 4L)
  old <- options(lsnn.grid = list(nodes = 7, box_width = 0.5, min_boxes = 20, near_field = FALSE,
                                  pair_weight = 0, by_components = FALSE))
  on.exit(options(old))
  p <- far_field_plan(Y)
  expect_identical(p$regions$why, "splitting is off")
  expect_identical(p$regions$nodes, 7L)
  expect_identical(p$regions$near_boxes, 0L)
  # at least 20 boxes per dimension, at most 0.5 wide
  expect_gte(p$regions$boxes_x, 20)
  expect_lte(p$regions$width_x, 0.5)
  # a grid set by the option is kept through exaggeration
  expect_identical(far_field_plan(Y, exaggerated = TRUE)$regions, p$regions)
  options(lsnn.grid = list(by_components = FALSE))
  expect_identical(far_field_plan(blobs(rbind(c(0, 0), c(500, 0)), 1000))$regions$kind, "grid")
})

test_that("the plan does not depend on n_threads, and verbose runs print it", {
  set.seed(6)
  Y <- blobs(rbind(c(0, 0), c(300, 0)), 800)
  expect_identical(far_field_plan(Y, n_threads = 1), far_field_plan(Y, n_threads = 2))
  X <- Y[, c(1, 2, 1)] + matrix(stats::rnorm(4800, sd = 0.1), ncol = 3)
  msgs <- character(0)
  withCallingHandlers(
    neighbor_embedding(X, "tsne", init = Y, max_iter = 6, stop_lying_iter = 3, perplexity = 10,
                       gradient = "approx", verbose = TRUE),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
  plans <- grep("^far field of 1600 points in 2-D", msgs, value = TRUE)
  # the exaggeration's grid, then the default grid
  expect_length(plans, 2)
  expect_match(plans[1], "3 nodes per box, boxes at most 1 wide, at least 50 per dimension")
  expect_match(plans[2], "5 nodes per box, boxes at most 4 wide")
})

test_that("far_field_plan() checks its arguments", {
  Y <- matrix(stats::rnorm(30), ncol = 3)
  expect_error(far_field_plan(Y), "^'Y' must have 1 or 2 columns")
  expect_error(far_field_plan(Y[, 1:2], "pacmap"), "^'method' must be one of")
  expect_error(far_field_plan(Y[, 1:2], exaggerated = NA), "^'exaggerated'")
})

test_that("the far field's buffers are counted while they live", {
  before <- lsnn:::.large_buffer_mb(TRUE)
  expect_named(before, c("now", "peak"))
  set.seed(4)
  Y <- matrix(rnorm(4000 * 2, sd = 20), ncol = 2)
  P <- perplexity_affinities(Y, perplexity = 10)
  invisible(cost_gradient(Y, P, "tsne", gradient = "approx"))
  after <- lsnn:::.large_buffer_mb(FALSE)
  # the evaluation's grids were counted, and given back when it ended
  expect_gt(after[["peak"]], before[["now"]])
  expect_equal(after[["now"]], before[["now"]])
})

test_that("the plan keeps its memory budget and says so", {
  set.seed(3)
  Y <- matrix(stats::runif(2 * 40000, 0, 30), ncol = 2)
  needs <- function(p) {
    line <- grep("needs [0-9]+ MB|needing least, [0-9]+ MB", p$text, value = TRUE)
    as.numeric(sub(".*need(s|ing least,) ([0-9]+) MB.*", "\\2", line))
  }
  p <- far_field_plan(Y)
  expect_match(p$text[1], "memory budget 256 MB$")
  expect_true(any(grepl("needs [0-9]+ MB of the memory budget of 256 MB", p$text)))
  fastest <- needs(p)
  expect_gt(fastest, 4)
  old <- options(lsnn.grid = list(memory_mb = 4))
  on.exit(options(old))
  small <- far_field_plan(Y)
  expect_lte(needs(small), 4)
  expect_true(any(grepl("cheaper shapes? over it", small$text)))
  # a budget no shape fits: the shape needing least memory, said so
  options(lsnn.grid = list(memory_mb = 1))
  least <- far_field_plan(Y)
  expect_true(any(grepl("no shape of the [0-9]+ costed fits the memory budget of 1 MB", least$text)))
  expect_lte(needs(least), needs(small))
  # the grids' buffers follow the shape, and the gradient keeps its accuracy
  P <- perplexity_affinities(nn_method = extended_knn(Y, 16), perplexity = 5)
  peak <- function(mb) {
    options(lsnn.grid = if (!is.null(mb)) list(memory_mb = mb))
    lsnn:::.large_buffer_mb(TRUE)
    g <- cost_gradient(Y, P, "tsne", gradient = "approx")$gradient
    list(mb = lsnn:::.large_buffer_mb(TRUE)[["peak"]], g = g)
  }
  whole <- peak(NULL)
  tight <- peak(4)
  expect_lte(tight$mb, 4.5)
  expect_lt(tight$mb, whole$mb)
  options(lsnn.grid = NULL)
  exact <- cost_gradient(Y, P, "tsne", gradient = "exact", n_threads = 2)$gradient
  rel <- function(g) sqrt(sum((g - exact)^2) / sum(exact^2))
  expect_lt(rel(tight$g), 1e-4)
  options(lsnn.grid = list(memory_mb = 0))
  expect_error(far_field_plan(Y), "field 'memory_mb' = 0; it must be a finite number of at least 1")
})
