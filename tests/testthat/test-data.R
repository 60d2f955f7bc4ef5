# Synthetic generators ---------------------------------------------------------

test_that("scurvehole has the S-curve's shape with the hole cut out", {
  set.seed(11)
  s <- scurvehole(5000)
  expect_named(s, c("X", "label"))
  expect_true(is.matrix(s$X) && is.double(s$X))
  expect_identical(colnames(s$X), c("x", "y", "z"))
  expect_length(s$label, nrow(s$X))
  expect_true(is.numeric(s$label))
  # About 5% of the points fall in the hole.
  expect_gt(nrow(s$X), 0.9 * 5000)
  expect_lt(nrow(s$X), 5000)
  d2 <- s$X[, "x"]^2 + (s$X[, "y"] - 1)^2 + s$X[, "z"]^2
  expect_gt(min(d2), 0.3)
  # The points lie on the sheet, at their label's position along it.
  t <- s$label
  expect_true(all(abs(t) <= 1.5 * pi))
  expect_equal(unname(s$X[, "x"]), sin(t))
  expect_equal(unname(s$X[, "z"]), sign(t) * (cos(t) - 1))
  expect_true(all(s$X[, "y"] >= 0 & s$X[, "y"] <= 2))
  # Points remain just outside the hole.
  expect_gt(sum(d2 < 0.35), 0)
})

test_that("swissroll is the classic roll, labelled by the roll parameter", {
  set.seed(12)
  r <- swissroll(1000)
  expect_named(r, c("X", "label"))
  expect_equal(dim(r$X), c(1000L, 3L))
  expect_identical(colnames(r$X), c("x", "y", "z"))
  t <- r$label
  expect_true(all(t >= 1.5 * pi & t <= 4.5 * pi))
  expect_equal(unname(r$X[, "x"]), t * cos(t))
  expect_equal(unname(r$X[, "z"]), t * sin(t))
  expect_true(all(r$X[, "y"] >= 0 & r$X[, "y"] <= 21))
  # Noise moves points off the roll.
  set.seed(12)
  rn <- swissroll(1000, noise = 0.5)
  expect_equal(rn$label, r$label)
  expect_false(isTRUE(all.equal(rn$X, r$X)))
  expect_equal(sd(as.vector(rn$X - r$X)), 0.5, tolerance = 0.1)
})

test_that("spheres puts points at the right radii around the right centres", {
  set.seed(13)
  s <- spheres(n_spheres = 3, n_per_sphere = 40, dim = 11, radius = 2,
               n_outer = 50, outer_radius = 9)
  expect_named(s, c("X", "label", "centers"))
  expect_equal(dim(s$X), c(3L * 40L + 50L, 11L))
  expect_s3_class(s$label, "factor")
  expect_identical(levels(s$label), c("1", "2", "3", "outer"))
  expect_equal(as.vector(table(s$label)), c(40, 40, 40, 50))
  expect_equal(dim(s$centers), c(3L, 11L))
  small <- s$label != "outer"
  k <- as.integer(s$label[small])
  r_small <- sqrt(rowSums((s$X[small, ] - s$centers[k, ])^2))
  expect_equal(r_small, rep(2, sum(small)))
  r_outer <- sqrt(rowSums(s$X[!small, ]^2))
  expect_equal(r_outer, rep(9, sum(!small)))
})

test_that("spheres defaults are the topological autoencoders set", {
  set.seed(14)
  s <- spheres()
  expect_equal(dim(s$X), c(10000L, 101L))
  expect_equal(as.vector(table(s$label)), c(rep(500, 10), 5000))
  expect_identical(levels(s$label)[11], "outer")
  # Centres are N(0, 1) per coordinate.
  expect_equal(sd(as.vector(s$centers)), 1, tolerance = 0.1)
  expect_equal(range(sqrt(rowSums(s$X[s$label == "outer", ]^2))), c(25, 25))
  # Without shift the small spheres share the origin as centre.
  s0 <- spheres(n_spheres = 2, n_per_sphere = 5, dim = 4, n_outer = 0,
                shift_sd = 0)
  expect_equal(s0$centers, matrix(0, 2, 4))
  expect_equal(sqrt(rowSums(s0$X^2)), rep(5, 10))
  expect_identical(levels(s0$label), c("1", "2", "outer"))
})

test_that("hierarchical nests micro clusters in meso clusters in macro ones", {
  set.seed(15)
  h <- hierarchical(n_per_cluster = 4)
  expect_named(h, c("X", "label", "meso", "micro"))
  expect_equal(dim(h$X), c(5L * 5L * 5L * 4L, 50L))
  expect_identical(nlevels(h$label), 5L)
  expect_identical(nlevels(h$meso), 25L)
  expect_identical(nlevels(h$micro), 125L)
  expect_equal(as.vector(table(h$micro)), rep(4, 125))
  # Names give the path: micro "a.b.c" lies in meso "a.b" and macro "a".
  micro <- as.character(h$micro)
  expect_identical(sub("\\.[0-9]+$", "", micro), as.character(h$meso))
  expect_identical(sub("\\..*$", "", micro), as.character(h$label))
  # Spreads shrink level by level: mean distances to each level's mean.
  spread <- function(g) {
    m <- rowsum(h$X, g) / as.vector(table(g))
    mean(sqrt(rowSums((h$X - m[as.integer(g), ])^2)))
  }
  s_micro <- spread(h$micro)
  s_meso <- spread(h$meso)
  s_macro <- spread(h$label)
  expect_lt(s_micro, s_meso)
  expect_lt(s_meso, s_macro)
  # Points scatter around their micro centre with sd sqrt(10) per coordinate.
  expect_equal(s_micro, sqrt(10 * 50 * 3 / 4), tolerance = 0.1)
})

test_that("hierarchical takes other shapes", {
  set.seed(16)
  h <- hierarchical(n_per_cluster = 3, dim = 7, n_macro = 2, n_meso = 3,
                    n_micro = 4, sd = c(10, 5, 2, 1))
  expect_equal(dim(h$X), c(2L * 3L * 4L * 3L, 7L))
  expect_identical(levels(h$label), c("1", "2"))
  expect_identical(levels(h$meso), c("1.1", "1.2", "1.3", "2.1", "2.2", "2.3"))
  expect_identical(levels(h$micro)[1:5], c("1.1.1", "1.1.2", "1.1.3", "1.1.4",
                                           "1.2.1"))
  h0 <- hierarchical(n_per_cluster = 2, dim = 3, n_macro = 1, n_meso = 1,
                     n_micro = 1, sd = c(0, 0, 0, 0))
  expect_equal(h0$X, matrix(0, 2, 3))
})

test_that("generators are reproducible with set.seed and use the RNG", {
  gens <- list(
    function() scurvehole(300, noise = 0.01),
    function() swissroll(300, noise = 0.01),
    function() spheres(n_spheres = 2, n_per_sphere = 10, dim = 5, n_outer = 10),
    function() hierarchical(n_per_cluster = 2, dim = 5)
  )
  for (g in gens) {
    set.seed(42)
    a <- g()
    set.seed(42)
    b <- g()
    c <- g()
    expect_identical(a, b)
    expect_false(identical(b$X, c$X))
  }
})

test_that("generators reject bad arguments", {
  expect_error(scurvehole(0), "'n' must be at least 1 \\(it is 0\\)")
  expect_error(scurvehole(-5), "'n'")
  expect_error(swissroll(10.5), "'n'")
  expect_error(swissroll("10"), "'n'")
  expect_error(swissroll(c(10, 20)), "'n'")
  expect_error(swissroll(10, noise = -1), "'noise'")
  expect_error(scurvehole(10, noise = NA), "'noise'")
  expect_error(spheres(n_spheres = 0), "'n_spheres'")
  expect_error(spheres(dim = 1), "'dim' must be at least 2")
  expect_error(spheres(radius = 0), "'radius'")
  expect_error(spheres(n_outer = -1), "'n_outer'")
  expect_error(spheres(outer_radius = Inf), "'outer_radius'")
  expect_error(spheres(shift_sd = -1), "'shift_sd'")
  expect_error(hierarchical(n_per_cluster = 0), "'n_per_cluster'")
  expect_error(hierarchical(n_meso = NA), "'n_meso'")
  expect_error(hierarchical(sd = c(1, 2, 3)), "'sd'")
  expect_error(hierarchical(sd = c(1, 2, 3, -1)), "'sd'")
})

test_that("generators refuse sizes beyond the machine's memory instead of being killed", {
  skip_if(is.na(lsnn:::machine_memory_bytes()), "no /proc/meminfo here")
  big <- .Machine$integer.max
  expect_error(scurvehole(big), "'n' asks for .* GB of data, more than this machine's memory")
  expect_error(swissroll(big), "'n' asks for")
  expect_error(spheres(n_outer = big), "'n_outer' asks for")
  expect_error(spheres(n_per_sphere = big), "'n_per_sphere' asks for")
  expect_error(hierarchical(n_per_cluster = big), "'n_per_cluster' asks for")
  expect_silent(lsnn:::check_fits_memory(1e6, "n"))
})

# IDX files ---------------------------------------------------------------------

# Writes an IDX file with the given type code, dimensions and elements
# (last dimension fastest), optionally gzipped.
write_idx <- function(path, values, dims, type = 0x08, gz = FALSE) {
  con <- if (gz) gzfile(path, "wb") else file(path, "wb")
  on.exit(close(con))
  writeBin(as.raw(c(0, 0, type, length(dims))), con)
  writeBin(as.integer(dims), con, size = 4, endian = "big")
  size <- switch(as.character(type), "8" = 1, "9" = 1, "11" = 2, "12" = 4,
                 "13" = 4, "14" = 8)
  if (type <= 0x0C) {
    writeBin(as.integer(values), con, size = size, endian = "big")
  } else {
    writeBin(as.double(values), con, size = size, endian = "big")
  }
  invisible(path)
}

test_that("read_idx reads images back, gzipped or not", {
  # Three 2 x 4 images; element (i, r, c) is known from its position.
  dims <- c(3L, 2L, 4L)
  values <- 0:23 * 10L + 5L
  for (gz in c(FALSE, TRUE)) {
    f <- tempfile(fileext = if (gz) ".idx.gz" else ".idx")
    write_idx(f, values, dims, gz = gz)
    x <- read_idx(f)
    expect_true(is.integer(x))
    expect_equal(dim(x), c(3L, 8L))
    expect_identical(attr(x, "item_dim"), c(2L, 4L))
    expect_identical(as.vector(t(x)), values)
    # Image 2 rebuilt as the documentation says.
    img2 <- matrix(x[2, ], 2, 4, byrow = TRUE)
    expect_identical(img2, matrix(values[9:16], 2, 4, byrow = TRUE))
    a <- read_idx(f, flatten = FALSE)
    expect_equal(dim(a), dims)
    expect_identical(a[2, , ], img2)
    expect_identical(a[3, 2, 1], values[2 * 8 + 1 * 4 + 1])
    # The first n items only.
    x2 <- read_idx(f, n = 2)
    expect_equal(dim(x2), c(2L, 8L))
    expect_identical(as.vector(t(x2)), values[1:16])
    expect_identical(attr(x2, "item_dim"), c(2L, 4L))
    expect_equal(dim(read_idx(f, n = 0)), c(0L, 8L))
    expect_error(read_idx(f, n = 4), "more than the 3 items")
    unlink(f)
  }
  # gzfile() really wrote a compressed file in the gzipped case.
  f <- tempfile(fileext = ".gz")
  write_idx(f, values, dims, gz = TRUE)
  expect_identical(readBin(f, "raw", 2), as.raw(c(0x1f, 0x8b)))
  unlink(f)
})

test_that("read_idx reads labels as a vector and 2-D files as a matrix", {
  f <- tempfile()
  write_idx(f, c(9, 0, 0, 3, 255), 5L)
  expect_identical(read_idx(f), c(9L, 0L, 0L, 3L, 255L))
  expect_identical(read_idx(f, n = 2), c(9L, 0L))
  write_idx(f, 1:6, c(2L, 3L))
  expect_identical(read_idx(f), matrix(1:6, 2, 3, byrow = TRUE))
  expect_null(attr(read_idx(f), "item_dim"))
  unlink(f)
})

test_that("read_idx reads every IDX element type", {
  f <- tempfile()
  ints <- c(-3L, 0L, 7L, 100L)
  write_idx(f, ints, 4L, type = 0x09)
  expect_identical(read_idx(f), ints)
  big <- c(-30000L, 0L, 1234L, 32767L)
  write_idx(f, big, 4L, type = 0x0B)
  expect_identical(read_idx(f), big)
  huge <- c(-2000000000L, 0L, 65537L, 2000000000L)
  write_idx(f, huge, c(2L, 2L), type = 0x0C, gz = TRUE)
  expect_identical(read_idx(f), matrix(huge, 2, 2, byrow = TRUE))
  dbl <- c(-1.5, 0, 0.25, 2^40)
  write_idx(f, dbl, 4L, type = 0x0D)
  expect_identical(read_idx(f), dbl)
  dbl <- c(pi, -exp(1), 1e-300, 0)
  write_idx(f, dbl, c(1L, 2L, 2L), type = 0x0E)
  x <- read_idx(f)
  expect_true(is.double(x))
  expect_identical(as.vector(x), dbl)
  unlink(f)
})

test_that("read_idx rejects missing, foreign and damaged files", {
  expect_error(read_idx(file.path(tempdir(), "no-such-file.idx")),
               "does not exist")
  expect_error(read_idx(tempdir()), "does not exist")
  expect_error(read_idx(c("a", "b")), "single file name")
  f <- tempfile()
  writeLines("this is not an IDX file", f)
  expect_error(read_idx(f), "not an IDX file \\(bad magic number")
  # Unknown type code.
  writeBin(as.raw(c(0, 0, 0x07, 1, 0, 0, 0, 1, 5)), f)
  expect_error(read_idx(f), "bad magic number 00 00 07 01")
  # Zero dimensions.
  writeBin(as.raw(c(0, 0, 0x08, 0)), f)
  expect_error(read_idx(f), "bad magic")
  # Shorter than a magic number.
  writeBin(as.raw(c(0, 0)), f)
  expect_error(read_idx(f), "bad magic")
  # Header cut short.
  writeBin(as.raw(c(0, 0, 0x08, 3, 0, 0, 0, 2)), f)
  expect_error(read_idx(f), "header is incomplete")
  # Data cut short, gzipped or not.
  for (gz in c(FALSE, TRUE)) {
    write_idx(f, 1:5, c(2L, 2L, 2L), gz = gz)
    expect_error(read_idx(f), "truncated: 5 of 8 elements")
    expect_identical(read_idx(f, n = 1), matrix(1:4, 1, 4),
                     ignore_attr = TRUE)
  }
  # Negative size.
  con <- file(f, "wb")
  writeBin(as.raw(c(0, 0, 0x08, 1)), con)
  writeBin(-1L, con, size = 4, endian = "big")
  close(con)
  expect_error(read_idx(f), "negative dimension")
  unlink(f)
  expect_error(read_idx(f, flatten = NA), "'flatten'")
})

# Fashion-MNIST -------------------------------------------------------------

# A miniature Fashion-MNIST: 5 training and 3 test images of 28 x 28 pixels,
# every pixel of image i equal to i, labels cycling through the classes.
fake_fashion <- function(gz = TRUE) {
  dir <- tempfile("fashion")
  dir.create(dir)
  ext <- if (gz) ".gz" else ""
  write_idx(file.path(dir, paste0("train-images-idx3-ubyte", ext)),
            rep(1:5, each = 784), c(5L, 28L, 28L), gz = gz)
  write_idx(file.path(dir, paste0("train-labels-idx1-ubyte", ext)),
            c(9, 0, 1, 2, 3), 5L, gz = gz)
  write_idx(file.path(dir, paste0("t10k-images-idx3-ubyte", ext)),
            rep(6:8, each = 784), c(3L, 28L, 28L), gz = gz)
  write_idx(file.path(dir, paste0("t10k-labels-idx1-ubyte", ext)),
            c(4, 5, 6), 3L, gz = gz)
  dir
}

test_that("fashion_mnist reads training then test images from a path", {
  for (gz in c(TRUE, FALSE)) {
    dir <- fake_fashion(gz)
    expect_true(has_fashion_mnist(dir))
    f <- fashion_mnist(dir)
    expect_named(f, c("X", "label"))
    expect_true(is.double(f$X))
    expect_equal(dim(f$X), c(8L, 784L))
    expect_null(attr(f$X, "item_dim"))
    expect_equal(f$X[, 1], 1:8)
    expect_equal(rowMeans(f$X), 1:8)
    expect_s3_class(f$label, "factor")
    expect_identical(levels(f$label),
                     c("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                       "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"))
    expect_identical(as.character(f$label),
                     c("Ankle boot", "T-shirt/top", "Trouser", "Pullover",
                       "Dress", "Coat", "Sandal", "Shirt"))
    # Subsets stop in the training set or reach into the test set.
    f3 <- fashion_mnist(dir, n = 3)
    expect_equal(f3$X, f$X[1:3, ])
    expect_identical(f3$label, f$label[1:3])
    f6 <- fashion_mnist(dir, n = 6)
    expect_equal(f6$X, f$X[1:6, ])
    expect_identical(f6$label, f$label[1:6])
    expect_error(fashion_mnist(dir, n = 9), "more than the 8 images")
    expect_error(fashion_mnist(dir, n = 0), "'n'")
    # a split alone
    train <- fashion_mnist(dir, split = "train")
    expect_equal(train$X, f$X[1:5, ])
    expect_identical(train$label, f$label[1:5])
    test <- fashion_mnist(dir, split = "test")
    expect_equal(test$X, f$X[6:8, ])
    expect_identical(test$label, f$label[6:8])
    expect_equal(fashion_mnist(dir, n = 2, split = "test")$X, f$X[6:7, ])
    expect_error(fashion_mnist(dir, n = 4, split = "test"), "more than the 3 images.*test split")
    expect_error(fashion_mnist(dir, split = "validation"), "^'split' must be one of")
    unlink(dir, recursive = TRUE)
  }
})

test_that("fashion_mnist uses the lsnn.fashion_mnist option", {
  dir <- fake_fashion()
  old <- options(lsnn.fashion_mnist = dir)
  on.exit(options(old))
  expect_true(has_fashion_mnist())
  expect_equal(nrow(fashion_mnist(n = 2)$X), 2L)
  unlink(dir, recursive = TRUE)
})

test_that("fashion_mnist says how to install missing files", {
  dir <- fake_fashion()
  file.remove(file.path(dir, "t10k-labels-idx1-ubyte.gz"))
  expect_false(has_fashion_mnist(dir))
  err <- tryCatch(fashion_mnist(dir), error = conditionMessage)
  expect_match(err, "missing: t10k-labels-idx1-ubyte", fixed = TRUE)
  expect_match(err, "apt-get install dataset-fashion-mnist", fixed = TRUE)
  expect_match(err, "pass it as 'path'", fixed = TRUE)
  expect_false(has_fashion_mnist(file.path(tempdir(), "nowhere")))
  expect_error(fashion_mnist(file.path(tempdir(), "nowhere")),
               "Fashion-MNIST not found")
  expect_error(has_fashion_mnist(1), "'path'")
  unlink(dir, recursive = TRUE)
})

test_that("fashion_mnist refuses files that are not Fashion-MNIST", {
  dir <- fake_fashion()
  write_idx(file.path(dir, "train-images-idx3-ubyte.gz"),
            rep(0, 5 * 16), c(5L, 4L, 4L), gz = TRUE)
  expect_error(fashion_mnist(dir, n = 2), "do not look like Fashion-MNIST")
  write_idx(file.path(dir, "train-images-idx3-ubyte.gz"),
            rep(0, 5 * 784), c(5L, 28L, 28L), gz = TRUE)
  write_idx(file.path(dir, "train-labels-idx1-ubyte.gz"),
            c(1, 2, 10, 3, 4), 5L, gz = TRUE)
  expect_error(fashion_mnist(dir), "labels must be 0 to 9")
  unlink(dir, recursive = TRUE)
})

test_that("the installed Fashion-MNIST reads as documented", {
  skip_if_not(has_fashion_mnist())
  f <- fashion_mnist(n = 100)
  expect_equal(dim(f$X), c(100L, 784L))
  expect_true(all(f$X >= 0 & f$X <= 255))
  # The first training image is an ankle boot.
  expect_identical(as.character(f$label[1]), "Ankle boot")
  files <- lsnn:::fashion_mnist_files(NULL)
  train <- read_idx(files[["train_labels"]])
  test <- read_idx(files[["test_labels"]])
  expect_length(train, 60000L)
  expect_length(test, 10000L)
  expect_equal(as.vector(table(train)), rep(6000, 10))
  expect_identical(lsnn:::idx_header(files[["train_images"]])$dims,
                   c(60000L, 28L, 28L))
})
