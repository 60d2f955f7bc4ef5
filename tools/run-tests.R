# Runs lsnn's testthat suite against the installed package and ends with one
# summary line, "tests: N passed, N failed, N skipped"; exits 1 on failure.
# (developers and CI run every test, including those CRAN skips).
# LSNN_TEST_FILTER, if set, runs only the test files whose names match it
# (a regular expression, as testthat's `filter`).
Sys.setenv(NOT_CRAN = "true")
filter <- Sys.getenv("LSNN_TEST_FILTER")
library(testthat)
library(lsnn)
results <- as.data.frame(test_dir("tests/testthat", package = "lsnn",
                                  load_package = "installed",
                                  filter = if (nzchar(filter)) filter,
                                  reporter = ProgressReporter$new(show_praise = FALSE),
                                  stop_on_failure = FALSE))
failed <- sum(results$failed) + sum(results$error)
cat(sprintf("tests: %d passed, %d failed, %d skipped\n",
            sum(results$passed), failed, sum(results$skipped)))
quit(status = if (failed > 0) 1 else 0)
