# Pieces of the C++ core run on their own through internal entry points
# (src/core_checks.cpp).

test_that("the round-robin tile schedule pairs every two blocks once, each block once a round", {
  expect_length(lsnn:::.check_tile_rounds(0), 0)
  for (nb in c(1, 2, 3, 4, 7, 10)) {
    rounds <- lsnn:::.check_tile_rounds(nb)
    expect_equal(rounds[[1]], cbind(0:(nb - 1), 0:(nb - 1)), ignore_attr = TRUE)
    pairs <- do.call(rbind, rounds[-1])
    if (nb > 1) {
      expect_true(all(pairs[, 1] < pairs[, 2]))
      key <- sort(pairs[, 1] * nb + pairs[, 2])
      all_pairs <- t(combn(nb, 2)) - 1L
      expect_equal(key, sort(all_pairs[, 1] * nb + all_pairs[, 2]))
    } else {
      expect_null(pairs)
    }
    for (r in rounds[-1]) expect_identical(anyDuplicated(c(r)), 0L)
  }
})

# The first `capacity` (value, index) pairs of each row, as R orders them.
kept_by_r <- function(e, capacity) {
  e <- e[order(e$row, e$value, e$index), ]
  e <- do.call(rbind, lapply(split(e, e$row), head, capacity))
  rownames(e) <- NULL
  e
}

test_that("bounded heaps keep each row's first entries by (value, index) with their flags", {
  set.seed(1)
  for (simd in c("auto", "generic")) {
    for (capacity in c(1, 5, 17)) {
      m <- 400
      e <- data.frame(row = sample(0:5, m, TRUE), value = sample(0:30, m, TRUE) / 4,
                      index = sample(0:60, m, TRUE))
      e$flag <- e$index %% 5L + 1L
      e <- e[!duplicated(e[c("row", "index")]), ]
      got <- lsnn:::.check_heaps(e$row, e$value, e$index, e$flag, 6, capacity, "push", simd)
      want <- kept_by_r(e, capacity)
      expect_identical(got$row, want$row)
      expect_identical(got$value, want$value)
      expect_identical(got$index, want$index)
      expect_identical(got$flag, as.integer(want$flag))
      # A full row's threshold is its largest kept value.
      full <- tapply(got$value, got$row, length) == capacity
      expect_identical(tapply(got$threshold, got$row, max)[full], tapply(got$value, got$row, max)[full])
      # Offered twice, an index is taken once.
      twice <- rbind(e, e)
      again <- lsnn:::.check_heaps(twice$row, twice$value, twice$index, twice$flag, 6, capacity,
                                   "push", simd)
      expect_identical(again$index, want$index)
      expect_identical(attr(again, "added"), attr(got, "added"))
      # Filled and merged in groups, the same entries are kept.
      merged <- lsnn:::.check_heaps(e$row, e$value, e$index, e$flag, 6, capacity, "merge", simd)
      expect_identical(merged$index, want$index)
      expect_identical(merged$value, want$value)
      expect_identical(merged$flag, as.integer(want$flag))
    }
  }
})

test_that("the steps of the approximate search do what each promises", {
  set.seed(6)
  n <- 600
  X <- matrix(rnorm(n * 5), n, 5)
  k <- 11
  K <- k - 1
  # Leaves of 8 rows (fewer than k): the random fill has work to do.
  s <- lsnn:::.check_nnd_steps(X, k, 2, 8, 6, "auto")
  expect_identical(sort(s$perm), 0:(n - 1))
  # Forest and random fill: full lists of distinct other rows.
  f <- s$forest
  expect_true(all(f >= 0))
  expect_true(all(apply(f, 1, anyDuplicated) == 0))
  expect_true(all(f != 0:(n - 1)))
  expect_gt(s$filled, 0)
  expect_true(all(s$forest_flags >= 1))
  # Reverse lists: the transposition of the forward lists, sources in
  # increasing order, with the entries' flags.
  src <- rep(0:(n - 1), times = K)
  tgt <- as.vector(f)
  o <- order(tgt, src)
  expect_identical(s$rev_source, src[o])
  expect_identical(s$rev_flag, as.vector(s$forest_flags)[o])
  expect_equal(diff(s$rev_ptr), tabulate(tgt + 1, n))
  # Candidates: at most 6 new and 6 old, drawn from the row's forward and
  # reverse entries; every entry is new after the forest, so none is old,
  # and the forward entries sampled as new are flagged old in the lists.
  ok <- vapply(seq_len(n), function(p) {
    rev <- s$rev_source[seq(s$rev_ptr[p] + 1, length.out = s$rev_ptr[p + 1] - s$rev_ptr[p])]
    pool <- union(f[p, ], rev)
    fresh <- s$fresh[[p]]
    length(fresh) == min(6L, length(pool)) && all(fresh %in% pool) && !anyDuplicated(fresh) &&
      length(s$stale[[p]]) == 0 && identical(s$sampled_flags[p, ] == 0, f[p, ] %in% fresh)
  }, TRUE)
  expect_true(all(ok))
  # Joins and updates: lists stay full of distinct other rows and no row's
  # largest kept score grows.
  j <- s$joined
  expect_true(all(apply(j, 1, anyDuplicated) == 0))
  expect_true(all(j != 0:(n - 1)))
  expect_true(all(s$threshold_after <= s$threshold_before))
  expect_gt(s$changed, 0)
  expect_lte(s$changed, s$n_updates)
  expect_identical(sum(s$threshold_after < s$threshold_before) > 0, TRUE)
})
