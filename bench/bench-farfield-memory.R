# The far field's memory on a large finished layout: t-SNE iterations from
# the layout that `bench-big.R 1e6 0.05 tsne` saves, under memory budgets
# (options(lsnn.grid = list(memory_mb = ))), each in its own process. The
# far field does not look at P, so P here is cheap: each point joined to k
# random partners.
#
#   LSNN_BENCH_DIR=<dir> Rscript bench/bench-farfield-memory.R [iterations] [budgets]
#
# iterations (default 40) from the layout <dir>/big-tsne-1e+06-0.05.rds;
# budgets in MB, comma-separated (default "1024,512"). Prints, per budget,
# the far field's buffers at most (`.large_buffer_mb()`), the process's
# peak resident size, the seconds per iteration and the grid of the plan.
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
iterations <- if (length(args) >= 1) as.integer(args[1]) else 40L
budgets <- if (length(args) >= 2) as.numeric(strsplit(args[2], ",")[[1]]) else c(1024, 512)
layout_file <- file.path(Sys.getenv("LSNN_BENCH_DIR", tempdir()), "big-tsne-1e+06-0.05.rds")
if (!file.exists(layout_file)) {
  stop("no saved layout: run LSNN_BENCH_DIR=<dir> Rscript bench/bench-big.R 1e6 0.05 tsne first")
}

one_budget <- function(budget) {
  code <- sprintf('
    suppressMessages({library(lsnn); library(Matrix)})
    Y <- readRDS("%s")
    n <- nrow(Y)
    set.seed(1)
    k <- 5
    i <- rep(seq_len(n), each = k)
    j <- ((i - 1 + sample.int(n - 1, n * k, replace = TRUE)) %%%% n) + 1
    P <- sparseMatrix(i = c(i, j), j = c(j, i), x = 1, dims = c(n, n))
    P <- as(P, "generalMatrix")
    P <- P / sum(P)
    options(lsnn.grid = list(memory_mb = %g))
    plan <- far_field_plan(Y)
    invisible(lsnn:::.large_buffer_mb(TRUE))
    t0 <- proc.time()[["elapsed"]]
    Y1 <- neighbor_embedding(P = P, init = Y, max_iter = %d, stop_lying_iter = 0,
                             exaggeration = 1, n_threads = 2)
    secs <- proc.time()[["elapsed"]] - t0
    hwm <- as.numeric(sub("[^0-9]*([0-9]+).*", "\\\\1",
                          grep("VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1048576
    cat(sprintf("budget %%g MB: far field at most %%.0f MB, peak resident %%.2f GB, %%.2f s an iteration\\n",
                %g, lsnn:::.large_buffer_mb(FALSE)[["peak"]], hwm, secs / %d))
    cat(grep("chosen by cost|no shape", plan$text, value = TRUE)[1], "\\n")
  ', layout_file, budget, iterations, budget, iterations)
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  system2(file.path(R.home("bin"), "Rscript"), script)
}
cat(sprintf("%d t-SNE iterations from %s (%s)\n", iterations, layout_file,
            format(Sys.time(), "%Y-%m-%d %H:%M")))
for (b in budgets) one_budget(b)
