# Runs lsnn's testthat suite against the installed package, prints the ten
# slowest test blocks, and ends with one summary line, "tests: N passed,
# N failed, N skipped" (which CI reads); exits 1 on failure.
#   Rscript tools/run-tests.R         the quick tier (as R CMD check runs it)
#   Rscript tools/run-tests.R --all   every test (LSNN_TEST_TIER=full), as CI
# Both run the tests CRAN skips (NOT_CRAN=true). LSNN_TEST_FILTER, if set,
# runs only the test files whose names match it (a regular expression, as
# testthat's `filter`); LSNN_TEST_TIER=full in the environment also selects
# the full tier.
args <- commandArgs(trailingOnly = TRUE)
if ("--all" %in% args) Sys.setenv(LSNN_TEST_TIER = "full")
full <- identical(tolower(Sys.getenv("LSNN_TEST_TIER")), "full")
Sys.setenv(NOT_CRAN = "true")
filter <- Sys.getenv("LSNN_TEST_FILTER")
library(testthat)
library(lsnn)
cat(sprintf("lsnn tests: the %s tier\n", if (full) "full" else "quick"))
started <- proc.time()[["elapsed"]]
results <- as.data.frame(test_dir("tests/testthat", package = "lsnn",
                                  load_package = "installed",
                                  filter = if (nzchar(filter)) filter,
                                  reporter = ProgressReporter$new(show_praise = FALSE),
                                  stop_on_failure = FALSE))
elapsed <- proc.time()[["elapsed"]] - started
slow <- results[order(-results$real), , drop = FALSE]
slow <- head(slow[!is.na(slow$real), , drop = FALSE], 10)
cat(sprintf("\nThe %d slowest test blocks (seconds; %.0f s in all):\n", nrow(slow), elapsed))
for (i in seq_len(nrow(slow))) {
  cat(sprintf("%7.1f  %s: %s\n", slow$real[i], slow$file[i], slow$test[i]))
}
failed <- sum(results$failed) + sum(results$error)
cat(sprintf("tests: %d passed, %d failed, %d skipped\n",
            sum(results$passed), failed, sum(results$skipped)))
quit(status = if (failed > 0) 1 else 0)
