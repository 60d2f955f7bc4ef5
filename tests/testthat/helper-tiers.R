# Two tiers of tests. The quick tier, the default (`bash tools/setup.sh
# test`, R CMD check), covers every function and every error path on small
# data in a few minutes. The full tier (`bash tools/setup.sh test-all`, CI:
# LSNN_TEST_TIER=full, which tools/run-tests.R sets for --all) adds the slow
# blocks: child R processes, worker pools, package loads, the whole fuzz set
# and the loops over every method and setting.
full_tier <- function() {
  identical(tolower(Sys.getenv("LSNN_TEST_TIER")), "full")
}

# Skips the rest of a test_that() block in the quick tier.
skip_if_quick <- function() {
  if (!full_tier()) testthat::skip("full tier only (LSNN_TEST_TIER=full)")
  invisible(TRUE)
}

# `quick` in the quick tier, `full` in the full tier: the size of a loop or
# of the data a block runs on.
tier_size <- function(quick, full) if (full_tier()) full else quick
