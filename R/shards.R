# Graphs of data held on disk in row shards, computed as independent tasks
# that run wherever the user's future::plan() sends them.
#
# Layout of a run's directory (`out_dir`):
#   run.rds             what the run computes (checked when it is resumed)
#   knn/graph-S.rds     the extended graph of shard S's rows (global row numbers)
#   knn/sigma-S.rds     their local scales (LSNN runs)
#   lsnn/lsnn-S.rds     the locally scaled graph of shard S's rows
#   work/...            pieces of tasks, removed once merged
#   tasks.rds           one row per task run: time, bytes read and written, peak memory
#   complete.rds        written last: the description of the finished result
# Every file is written under a temporary name and renamed, so a file that
# exists is complete; a task whose output exists is not run again.

# ---- shard sets ----

#' Data in row shards on disk
#'
#' `write_shards()` cuts a matrix into files of consecutive rows, one numeric
#' matrix per file (written with `saveRDS(compress = FALSE)`, which any R
#' process reads at disk speed); `shard_set()` describes shards already on
#' disk, written by `write_shards()` or by any program that saves one
#' numeric matrix per `.rds` file; `check_shards()` reads every shard and
#' checks that it is a finite numeric matrix with the rows and columns the
#' set records and the same contents. The shards are read by the tasks of
#' [extended_knn_sharded()] and [locally_scaled_knn_sharded()], on whatever
#' workers `future::plan()` chooses, so on a cluster `dir` must be on a
#' filesystem every node sees.
#'
#' Rows are numbered across the shards in order: the rows of the first shard,
#' then those of the second, and so on.
#'
#' **Fingerprints.** A set records a fingerprint of each shard: a 64-bit hash
#' of its numbers of rows and columns and of the bits of its values (as
#' doubles, in storage order). `write_shards()` computes it as it copies the
#' rows out of `X` to write them, and keeps it in the directory's index
#' `shards.rds`; `shard_set()` takes it from there, or computes it where it
#' reads the shards (a directory without index, or files). The sharded
#' searches call `check_shards()` before they start, a resumed run continues
#' only if the fingerprints are those it was begun with, and every task
#' checks the fingerprint of each shard it reads: a shard that changed is an
#' error, never mixed into a graph. The fingerprint guards against accident
#' (other data written to the same files), not against forgery. Shards
#' written by an earlier version of lsnn have no fingerprints in their index:
#' `check_shards()` (and so the searches) computes them from the shards as
#' they are when it runs; rewrite such shards with `write_shards()` to keep
#' the fingerprints of the data as written.
#'
#' @param X A numeric matrix or data frame (its numeric columns), one row per
#'   observation; a logical matrix is written as 0 and 1 (for `metric =
#'   "hamming"`).
#' @param dir Directory to write the shards into (created if needed); or, for
#'   `shard_set()`, a directory of shards.
#' @param rows_per_shard Number of rows per shard (the last may have fewer).
#' @param overwrite If `FALSE`, refuse to write into a directory that
#'   already holds shards.
#' @return An object of class `lsnn_shards`: a list with the shard `files`
#'   (absolute paths), the `rows` of each, the number of columns `n_col`, the
#'   total number of rows `n` and the `fingerprints` of the shards (16
#'   hexadecimal digits each; `NA` where not yet computed). `check_shards()`
#'   returns it invisibly, with every fingerprint.
#' @seealso [extended_knn_sharded()]
#' @examples
#' dir <- file.path(tempdir(), "iris-shards")
#' shards <- write_shards(as.matrix(iris[, 1:4]), dir, rows_per_shard = 50)
#' shards
#' check_shards(shards)
#' identical(shard_set(dir)$files, shards$files)
#' unlink(dir, recursive = TRUE)
#' @export
write_shards <- function(X, dir, rows_per_shard = 100000, overwrite = FALSE) {
  if (is.matrix(X) && is.logical(X)) storage.mode(X) <- "double"
  X <- prepare_data(X, "euclidean")
  if (X$kind != "dense") stop_arg("'X' must be dense (a numeric matrix or data frame)")
  X <- X$x
  dir <- check_dir_name(dir, "dir")
  rows_per_shard <- check_whole(rows_per_shard, "rows_per_shard", min = 1)
  overwrite <- check_flag(overwrite, "overwrite")
  make_dir(dir, "dir")
  old <- list.files(dir, pattern = "^shard-[0-9]+[.]rds$", full.names = TRUE)
  if (length(old) > 0) {
    if (!overwrite) {
      stop_arg("'dir' (", dir, ") already holds ", length(old),
               " shards; use overwrite = TRUE to replace them")
    }
    unlink(c(old, file.path(dir, "shards.rds")))
  }
  n <- nrow(X)
  starts <- seq(1, n, by = rows_per_shard)
  files <- file.path(dir, sprintf(paste0("shard-%0", max(5, nchar(length(starts))), "d.rds"),
                                  seq_along(starts)))
  fingerprints <- character(length(starts))
  for (s in seq_along(starts)) {
    # (the rows copied and fingerprinted in one pass)
    shard <- .shard_rows(X, starts[s], min(rows_per_shard, n - starts[s] + 1), TRUE)
    if (!is.null(dimnames(X))) {
      dimnames(shard$x) <- list(rownames(X)[starts[s] - 1 + seq_len(nrow(shard$x))], colnames(X))
    }
    fingerprints[s] <- shard$fingerprint
    save_atomic(shard$x, files[s])
  }
  index <- list(files = basename(files), rows = as.integer(diff(c(starts, n + 1))),
                n_col = ncol(X), fingerprints = fingerprints)
  save_atomic(index, file.path(dir, "shards.rds"))
  shard_set(dir)
}

#' @rdname write_shards
#' @param path A directory of shards (their index `shards.rds` when
#'   `write_shards()` wrote it, else every file named `*.rds` in
#'   alphabetical order), or a character vector of shard files in row order.
#' @export
shard_set <- function(path) {
  if (!is.character(path) || length(path) < 1 || anyNA(path)) {
    stop_arg("'path' must be a directory or a character vector of shard files")
  }
  if (length(path) == 1 && dir.exists(path)) {
    index_file <- file.path(path, "shards.rds")
    if (file.exists(index_file)) {
      index <- tryCatch(readRDS(index_file), error = function(e) NULL)
      problem <- if (!is.list(index)) "it is not a list" else
        shard_set_problem(index$files, index$rows, index$n_col, index$fingerprints)
      if (!is.null(problem)) {
        stop_arg("'", index_file, "' is not an index of write_shards() (", problem, "); ",
                 "write the shards again, or give the shard files themselves as 'path'")
      }
      files <- file.path(path, index$files)
      missing <- files[!file.exists(files)]
      if (length(missing) > 0) {
        stop_arg("shard file '", missing[1], "' listed in '", index_file, "' does not exist")
      }
      return(new_shard_set(files, index$rows, index$n_col, index$fingerprints))
    }
    path <- sort(list.files(path, pattern = "[.]rds$", full.names = TRUE))
    if (length(path) == 0) stop_arg("'path' holds no .rds files")
  }
  missing <- path[!file.exists(path)]
  if (length(missing) > 0) stop_arg("shard file '", missing[1], "' does not exist")
  # Without an index, each shard is read (one at a time) for its size and
  # fingerprint.
  found <- lapply(path, function(f) {
    x <- load_shard(f)
    list(dim = dim(x), fingerprint = shard_fingerprint(x))
  })
  dims <- vapply(found, `[[`, numeric(2), "dim")
  if (any(dims[2, ] != dims[2, 1])) {
    bad <- which(dims[2, ] != dims[2, 1])[1]
    stop_arg("shard file '", path[bad], "' has ", dims[2, bad], " columns, '", path[1],
             "' has ", dims[2, 1])
  }
  new_shard_set(path, dims[1, ], dims[2, 1], vapply(found, `[[`, "", "fingerprint"))
}

# (a set from an index written before fingerprints has none: NA)
new_shard_set <- function(files, rows, n_col, fingerprints = NULL) {
  if (is.null(fingerprints)) fingerprints <- rep(NA_character_, length(files))
  structure(list(files = normalizePath(files, mustWork = TRUE), rows = as.integer(rows),
                 n_col = as.integer(n_col), n = sum(as.double(rows)),
                 fingerprints = as.character(fingerprints)),
            class = "lsnn_shards")
}

#' @method print lsnn_shards
#' @export
print.lsnn_shards <- function(x, ...) {
  cat(sprintf("lsnn shards: %s rows x %d columns in %d files (%s rows per shard) in %s\n",
              format(x$n, big.mark = ","), x$n_col, length(x$files),
              paste(unique(range(x$rows)), collapse = " to "),
              paste(unique(dirname(x$files)), collapse = ", ")))
  invisible(x)
}

#' @rdname write_shards
#' @param shards An `lsnn_shards` object (from `write_shards()` or
#'   `shard_set()`), or anything `shard_set()` takes.
#' @details `check_shards()` reads the shards as tasks of the current
#'   `future::plan()`; an error names the first shard file at fault. A shard
#'   whose fingerprint differs from the one the set records has changed since
#'   the set was made: describe the shards anew with `shard_set()`.
#' @export
check_shards <- function(shards) check_shard_values(shards)

# check_shards(), and with binary = TRUE (the searches of metric =
# "hamming") also that every value is 0 or 1, in the same read.
check_shard_values <- function(shards, binary = FALSE) {
  shards <- as_shard_set(shards)
  found <- future.apply::future_lapply(seq_along(shards$files), function(s, shards) {
    tryCatch({
      x <- read_shard(shards, s, fingerprint = FALSE)
      if (!all_finite(x)) {
        bad <- !is.finite(x)
        stop("shard file '", shards$files[s], "' contains ", sum(bad),
             " NA, NaN or infinite values (first in row ", which(rowSums(bad) > 0)[1], ")",
             call. = FALSE)
      }
      bad <- if (binary) .first_non_binary(x) else 0L
      if (bad[1] > 0) {
        stop("shard file '", shards$files[s], "' holds ", show_value(x[bad[1], bad[2]]),
             " in row ", bad[1], ", column ", bad[2], ": metric = \"hamming\" takes data of ",
             "0 and 1 only", call. = FALSE)
      }
      list(problem = "", fingerprint = check_fingerprint(x, shards, s))
    }, error = function(e) list(problem = conditionMessage(e)))
  }, shards = shards, future.seed = NULL)
  problems <- vapply(found, `[[`, "", "problem")
  bad <- which(problems != "")
  if (length(bad) > 0) {
    stop_arg(problems[bad[1]],
             if (length(bad) > 1) paste0(" (", length(bad) - 1, " more shards have problems)"))
  }
  shards$fingerprints <- vapply(found, `[[`, "", "fingerprint")
  invisible(shards)
}

# What is wrong with the elements of a shard set (or of the index a
# directory of shards keeps), or NULL.
shard_set_problem <- function(files, rows, n_col, fingerprints, n = NULL) {
  if (!is.character(files) || length(files) < 1 || anyNA(files)) {
    return("'files' must name at least one file")
  }
  if (!is.numeric(rows) || length(rows) != length(files) || !all_finite(rows) ||
      any(rows < 1) || any(rows != round(rows))) {
    return(paste0("'rows' must hold a whole number of at least 1 for each of its ",
                  length(files), " files"))
  }
  if (!is_scalar_number(n_col, min = 1, max = big_int, whole = TRUE)) {
    return("'n_col' must be a whole number of at least 1")
  }
  if (!is.null(fingerprints) && (!is.character(fingerprints) ||
                                 length(fingerprints) != length(files))) {
    return(paste0("'fingerprints' must hold one fingerprint for each of its ", length(files),
                  " files"))
  }
  if (!is.null(n) && !identical(n, sum(as.double(rows)))) {
    return("'n' must be the sum of its 'rows'")
  }
  NULL
}

as_shard_set <- function(shards, name = "shards") {
  if (inherits(shards, "lsnn_shards")) {
    problem <- if (!is.list(shards)) "it is not a list" else
      shard_set_problem(shards$files, shards$rows, shards$n_col, shards$fingerprints, shards$n)
    if (!is.null(problem)) {
      stop_arg("'", name, "' is damaged (", problem, "); describe the shards anew with ",
               "shard_set()")
    }
    return(shards)
  }
  if (is.character(shards)) return(shard_set(shards))
  stop_arg("'", name, "' must be an lsnn_shards object (see write_shards() and shard_set()) ",
           "or a directory or files of shards")
}

check_dir_name <- function(dir, name) {
  if (!is.character(dir) || length(dir) != 1 || is.na(dir) || dir == "") {
    stop_arg("'", name, "' must be a directory name")
  }
  path.expand(dir)
}

# Creates the directory `dir` (given as argument `name`) where it does not
# exist; an error names both where it is a file or cannot be made or
# written to.
make_dir <- function(dir, name) {
  if (file.exists(dir) && !dir.exists(dir)) {
    stop_arg("'", name, "' (", dir, ") is a file, not a directory")
  }
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  if (!dir.exists(dir)) stop_arg("'", name, "' (", dir, ") cannot be created")
  if (file.access(dir, 2) != 0) stop_arg("'", name, "' (", dir, ") cannot be written to")
  invisible(dir)
}

# The fingerprint of a shard's values (fingerprint.h): 16 hexadecimal
# digits.
shard_fingerprint <- function(x) {
  if (!is.double(x)) storage.mode(x) <- "double"
  .matrix_fingerprint(x)
}

# The shards s of a set, as a task that reads them carries them.
shard_subset <- function(shards, s) {
  list(files = shards$files[s], rows = shards$rows[s], n_col = shards$n_col,
       fingerprints = shards$fingerprints[s])
}

# A shard file's numeric matrix, as doubles (errors name the file).
load_shard <- function(file) {
  x <- tryCatch(readRDS(file), error = function(e) {
    stop("shard file '", file, "' cannot be read: ", conditionMessage(e), call. = FALSE)
  })
  if (!is.matrix(x) || !is.numeric(x)) {
    stop("shard file '", file, "' is not a numeric matrix", call. = FALSE)
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# Shard i of `shards` (a set, or a shard_subset()) as the tasks read it:
# with the rows and columns the set records and, with `fingerprint`, the
# fingerprint it records (where it records one).
read_shard <- function(shards, i = 1L, fingerprint = TRUE) {
  file <- shards$files[i]
  x <- load_shard(file)
  if (ncol(x) != shards$n_col) {
    stop("shard file '", file, "' has ", ncol(x), " columns, the set has ", shards$n_col,
         call. = FALSE)
  }
  if (nrow(x) != shards$rows[i]) {
    stop("shard file '", file, "' has ", nrow(x), " rows, the set says ", shards$rows[i],
         call. = FALSE)
  }
  if (fingerprint) check_fingerprint(x, shards, i)
  x
}

# The fingerprint of x, shard i of `shards`; an error where the set records
# another.
check_fingerprint <- function(x, shards, i) {
  found <- shard_fingerprint(x)
  recorded <- shards$fingerprints[i]
  if (!is.na(recorded) && found != recorded) {
    stop("shard file '", shards$files[i], "' has changed since its fingerprint was recorded ",
         "(it was ", recorded, ", it is ", found, "); describe the shards anew with ",
         "shard_set() (or write them with write_shards()) and compute their graph in a new ",
         "'out_dir'", call. = FALSE)
  }
  found
}

# The first global row number of each shard, and one past the last.
shard_offsets <- function(shards) c(0, cumsum(as.double(shards$rows)))

# Write under a temporary name, then rename: a file that exists is whole.
save_atomic <- function(object, file) {
  # (tempfile() draws its name without R's generator)
  tmp <- tempfile(paste0(basename(file), ".tmp-"), tmpdir = dirname(file))
  on.exit(unlink(tmp))
  saveRDS(object, tmp, compress = FALSE)
  if (!file.rename(tmp, file)) stop("cannot write '", file, "'", call. = FALSE)
  invisible(file.size(file))
}

# ---- settings ----

#' Settings of the sharded searches
#'
#' Tuning parameters of [extended_knn_sharded()] and
#' [locally_scaled_knn_sharded()], passed as their `control` argument.
#'
#' The exact search runs one task per shard (its rows against each other),
#' then tasks that compare the rows of one shard with those of the shards
#' after it, a group of `rows_per_task` rows at a time (each row looking
#' only as far as its k-th neighbour within its own shard), then one task
#' per shard that merges its rows' lists. The approximate search partitions
#' the rows around centres found by k-means on a sample (a centre whose
#' partition would exceed `rows_per_partition` by half is split in two),
#' puts each row in the
#' partition of its nearest centre, and rows near a boundary also in that
#' of their second nearest, runs the approximate search of
#' [extended_knn()] on each partition as a task, and merges each row's
#' candidates from its partitions; it estimates the recall on `recall_rows`
#' rows whose exact neighbours it finds by the exact sharded search, and
#' while that estimate is below `target_recall` runs another round on a new
#' partition (new sample, new centres), merging its candidates into the
#' lists, at most `max_rounds` rounds in all.
#'
#' @param rows_per_partition Rows per partition of the approximate search:
#'   about `n / rows_per_partition` partitions, none larger than 1.5 times
#'   this (as estimated on the sample) plus the rows near its boundary. A
#'   partition's task holds its rows and their search, so this bounds a
#'   worker's memory (about 4 kB per row at 67 neighbours).
#' @param overlap The share of rows also searched in the partition of
#'   their second nearest centre: those nearest a boundary (whose second
#'   nearest centre is the least farther than their nearest, relative to its
#'   distance, in the sample). `NULL` (the default) chooses it in each round
#'   from the rows sampled for the recall estimate: the least share (at most
#'   0.5) under which at least `1 - (1 - target_recall) / 4` of their true
#'   neighbours share a partition with them, so that data whose partitions
#'   cut few neighbourhoods are searched nearly once. A number between 0 and
#'   1 fixes it; more overlap finds more neighbours across boundaries in
#'   one round and costs more search (the rows searched are `1 + overlap`
#'   times the rows).
#' @param sample_rows Rows sampled for the k-means of each round (default
#'   `min(n, max(20000, 200 * partitions))`).
#' @param rows_per_task Rows a task of the exact search compares one
#'   shard's rows with: each shard is compared with the shards after it in
#'   groups of at most this many rows (at least one shard), so a row's list
#'   covers several shards at once (fewer candidates to keep and merge). A
#'   task holds its shard and the group, and their lists.
#' @param recall_rows Rows whose exact neighbours estimate the recall.
#' @param target_recall Stop once the estimated recall reaches this value.
#' @param max_rounds Largest number of partition rounds.
#' @return A list of class `lsnn_shard_control`.
#' @seealso [extended_knn_sharded()]
#' @examples
#' shard_control(rows_per_partition = 50000)
#' @export
shard_control <- function(rows_per_partition = 200000, overlap = NULL, sample_rows = NULL,
                          recall_rows = 200, target_recall = 0.99, max_rounds = 4,
                          rows_per_task = 400000) {
  structure(list(
    rows_per_partition = check_whole(rows_per_partition, "rows_per_partition", min = 2),
    rows_per_task = check_whole(rows_per_task, "rows_per_task", min = 1),
    overlap = if (is.null(overlap)) NULL else check_number(overlap, "overlap", min = 0, max = 1),
    sample_rows = if (is.null(sample_rows)) NULL else check_whole(sample_rows, "sample_rows", min = 2),
    recall_rows = check_whole(recall_rows, "recall_rows", min = 1),
    target_recall = check_number(target_recall, "target_recall", min = 0, max = 1),
    max_rounds = check_whole(max_rounds, "max_rounds", min = 1)
  ), class = "lsnn_shard_control")
}

check_shard_control <- function(control) {
  if (inherits(control, "lsnn_shard_control")) return(control)
  if (is.null(control)) return(shard_control())
  if (!is.list(control) || (length(control) > 0 && is.null(names(control)))) {
    stop_arg("'control' must be the result of shard_control() or a named list of its arguments")
  }
  unknown <- setdiff(names(control), names(formals(shard_control)))
  if (length(unknown) > 0) {
    stop_arg("'control' has unknown settings: ", paste(unknown, collapse = ", "))
  }
  do.call(shard_control, control)
}

# ---- the graphs ----

#' Extended kNN graph of data in row shards
#'
#' The graph of [extended_knn()] for data held on disk in row shards (see
#' [write_shards()]), computed as independent tasks that run where the
#' user's `future::plan()` sends them: in this R session by default
#' (`plan(sequential)`), on local worker processes
#' (`plan(multisession)`), on other machines (`plan(cluster)`) or as jobs of
#' a cluster's scheduler (`future.batchtools`). Each task reads the shards
#' it needs, so no process ever holds all the data.
#'
#' With `nn_kind = "exact"` a task finds, for the rows of one shard, their
#' nearest rows in another shard (only those nearer than their k-th
#' neighbour in their own shard, which a task per shard finds first), and a
#' task per shard merges its rows' lists by distance, then row number: the
#' graph is identical to that of `extended_knn(X, nn_kind = "exact")` on the
#' whole data (distances are computed in double precision from each pair of rows alone, so they do not
#' depend on which rows share a task; all workers must use the same vector
#' kernels, see [simd_kernels()]). It takes time proportional to `n^2`.
#'
#' With `nn_kind = "approx"` the rows are partitioned with overlap, the
#' approximate search of [extended_knn()] runs on each partition as a task,
#' and rounds on new partitions run until the estimated recall reaches the
#' target (see [shard_control()]). It is random: [set.seed()] before the call
#' makes it reproducible, for any plan and number of workers.
#'
#' **Checks.** Before it starts, the search reads every shard with
#' [check_shards()]: each must be a finite numeric matrix with the rows and
#' columns the set records, and the fingerprint of its values (see
#' [write_shards()]) that the set records; a set without fingerprints (from
#' an earlier version of lsnn) gets them then. Every task checks the
#' fingerprint of each shard it reads, so a shard changed during the run
#' stops it with an error naming the file, rather than mixing other data
#' into the graph. With `metric = "hamming"` every value must be 0 or 1
#' (write a logical matrix with [write_shards()]); the first shard holding
#' another is named.
#'
#' **Resuming.** With `out_dir` given, the run records in it the shards'
#' fingerprints and the settings (`n_neighbors`, `n_extra`, `nn_kind`,
#' `metric`, `nn_args`, `control` and the LSNN's scale columns), every task
#' writes its output there (under a temporary name, then renamed), and a
#' call with the same `out_dir` continues that run, skipping the tasks whose
#' output exists: a run that was interrupted, or whose worker failed,
#' continues where it stopped. It continues only a run made for shards with
#' the same fingerprints and the same settings (where the shard files are
#' does not matter); otherwise the error names the first shard that changed,
#' or the settings that differ, and to start afresh you delete `out_dir` or
#' give another. A directory of a run begun by an earlier version of lsnn
#' (which recorded no fingerprints) is not resumed. A task that fails gives
#' an R error naming it; no graph is returned from a run that did not
#' finish.
#'
#' @param shards The data: an `lsnn_shards` object from [write_shards()] or
#'   [shard_set()], or a directory of shards.
#' @inheritParams extended_knn
#' @param nn_args Settings of the approximate search of each partition: the
#'   result of [approx_control()], or a list of some of its arguments. The
#'   default asks for more candidates and trees than [extended_knn()]'s,
#'   which costs little more per partition and saves a second round (which
#'   would cost as much as the first) on data whose clusters are dense.
#' @param n_threads Number of threads of each task.
#' @param out_dir `NULL` (the default) to compute in a temporary directory
#'   and return the graph; or a directory to keep the graph in, as one file
#'   per shard, and resume from (created if needed; an error names it if it
#'   is a file or cannot be written to).
#' @param verbose If `TRUE`, report each phase and its tasks' progress.
#' @param control Settings of the sharded search: [shard_control()], or a
#'   list of some of its arguments.
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
#' @return With `out_dir = NULL`, the graph `list(idx, dist)`, as
#'   [extended_knn()] returns it. Otherwise an object of class
#'   `lsnn_graph_shards` describing the graph files in `out_dir` (read the
#'   graph with [read_graph_shards()]); its element `tasks` is a data frame of
#'   the tasks run, with when each started (`started`, seconds since
#'   1970 as [Sys.time()] gives them), its time in seconds, the bytes it read
#'   and wrote and the peak memory of their process in bytes (where the system
#'   reports it), and for the approximate search `recall` holds the estimate
#'   after each round and `overlap` the share of rows searched in two
#'   partitions in each round.
#' @seealso [write_shards()], [locally_scaled_knn_sharded()],
#'   [read_graph_shards()], `vignette("large-data", package = "lsnn")`.
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' dir <- file.path(tempdir(), "iris-shards")
#' shards <- write_shards(X, dir, rows_per_shard = 50, overwrite = TRUE)
#' future::plan(future::sequential)
#' g <- extended_knn_sharded(shards, n_neighbors = 10, n_extra = 5, nn_kind = "exact")
#' identical(g, extended_knn(X, n_neighbors = 10, n_extra = 5, nn_kind = "exact"))
#' unlink(dir, recursive = TRUE)
#' @export
extended_knn_sharded <- function(shards, n_neighbors = 150, n_extra = 50, nn_kind = "approx",
                                 metric = "euclidean", out_dir = NULL, n_threads = 1,
                                 verbose = FALSE,
                                 nn_args = approx_control(max_candidates = 150, n_trees = 20),
                                 control = shard_control(), seed = NULL) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  run <- sharded_run(shards, n_neighbors, n_extra, nn_kind, metric, out_dir, n_threads, verbose,
                     nn_args, control, lsnn = NULL)
  knn_graph_phase(run)
  finish_run(run, "knn")
}

#' Locally scaled neighbours of data in row shards
#'
#' The graph of [locally_scaled_knn()] for data held on disk in row shards:
#' the extended graph of [extended_knn_sharded()], the local scales of all
#' rows from it, then a task per shard that picks its rows' locally scaled
#' neighbours with those scales. The scales a shard's lists need reach it
#' through files: each shard's task lists its candidates, a task per group of
#' shards answers those lists from its rows' scales, and no task reads the
#' scales of all rows. With `nn_kind = "exact"` the result is
#' identical to `locally_scaled_knn(X, nn_kind = "exact")` on the whole
#' data. The shards are checked, and a run in `out_dir` resumed, as by
#' [extended_knn_sharded()]: only for the same shards (by their
#' fingerprints) and settings.
#'
#' @inheritParams extended_knn_sharded
#' @inheritParams locally_scaled_knn
#' @param seed `NULL` (the default) to draw random numbers from R's generator, so
#'   that [set.seed()] makes the result reproducible; or a whole number: the
#'   result then depends on it alone, and R's generator is left as it was.
#' @return With `out_dir = NULL`, the graph `list(idx, dist)` with
#'   `n_neighbors` columns; otherwise an `lsnn_graph_shards` object (see
#'   [extended_knn_sharded()]) for the locally scaled graph, whose element
#'   `knn` describes the extended graph it came from.
#' @seealso [extended_knn_sharded()], [read_graph_shards()]
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' dir <- file.path(tempdir(), "iris-shards")
#' shards <- write_shards(X, dir, rows_per_shard = 50, overwrite = TRUE)
#' future::plan(future::sequential)
#' g <- locally_scaled_knn_sharded(shards, n_neighbors = 10, nn_kind = "exact")
#' identical(g, locally_scaled_knn(X, n_neighbors = 10, nn_kind = "exact"))
#' unlink(dir, recursive = TRUE)
#' @export
locally_scaled_knn_sharded <- function(shards, n_neighbors = 15, n_extra = 50, scale_from = 5,
                                       scale_to = 7, nn_kind = "approx", metric = "euclidean",
                                       out_dir = NULL, n_threads = 1, verbose = FALSE,
                                       nn_args = approx_control(max_candidates = 150, n_trees = 20),
                                       control = shard_control(), seed = NULL) {
  if (!is.null(seed)) return(with_seed_of_call(seed, match.call(), sys.function(), parent.frame()))
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1, clamp = TRUE)
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE, max = big_int - 1L)
  shards <- as_shard_set(shards)
  if (shards$n >= 2) n_neighbors <- as.integer(min(n_neighbors, shards$n - 1))
  lsnn <- list(n_neighbors = n_neighbors, scale_from = scale_from, scale_to = scale_to)
  run <- sharded_run(shards, n_neighbors, n_extra, nn_kind, metric, out_dir, n_threads, verbose,
                     nn_args, control, lsnn = lsnn)
  knn_graph_phase(run)
  lsnn_phase(run)
  finish_run(run, "lsnn")
}

#' Read a graph kept in shards
#'
#' The whole graph `list(idx, dist)` from the files a sharded search kept in
#' its `out_dir`, or the rows of some shards only.
#'
#' @param x An `lsnn_graph_shards` object returned by
#'   [extended_knn_sharded()] or [locally_scaled_knn_sharded()] with
#'   `out_dir` given, or that directory.
#' @param which The numbers of the shards to read (whole numbers from 1 to
#'   the number of shards; by default all).
#' @return A graph `list(idx, dist)` of the rows of the shards read, in
#'   order; `idx` holds global row numbers.
#' @examples
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' dir <- file.path(tempdir(), "iris-shards")
#' out <- file.path(tempdir(), "iris-graph")
#' shards <- write_shards(X, dir, rows_per_shard = 50, overwrite = TRUE)
#' res <- extended_knn_sharded(shards, 10, 5, nn_kind = "exact", out_dir = out)
#' res
#' g <- read_graph_shards(res)
#' dim(g$idx)
#' unlink(c(dir, out), recursive = TRUE)
#' @export
read_graph_shards <- function(x, which = NULL) {
  if (is.character(x) && length(x) == 1 && !is.na(x)) {
    if (!dir.exists(x)) {
      stop_arg("'x' (", x, ") is not a directory: give the out_dir of a finished run or ",
               "the lsnn_graph_shards object it returned")
    }
    done <- file.path(x, "complete.rds")
    if (!file.exists(done)) stop_arg("'x' (", x, ") holds no finished sharded graph")
    x <- tryCatch(readRDS(done), error = function(e) {
      stop_arg("'", done, "', the record of the finished run in 'x', cannot be read (",
               conditionMessage(e), "); run the search again with the same arguments and ",
               "'out_dir'")
    })
  }
  if (!inherits(x, "lsnn_graph_shards")) {
    stop_arg("'x' must be an lsnn_graph_shards object or the out_dir of a finished run")
  }
  problem <- if (!is.list(x)) "it is not a list" else
    shard_set_problem(x$files, x$rows, 1L, NULL, x$n)
  if (is.null(problem) && !is_scalar_number(x$k, min = 1, max = big_int, whole = TRUE)) {
    problem <- "'k' must be a whole number of at least 1"
  }
  if (!is.null(problem)) stop_arg("'x' is damaged (", problem, ")")
  if (is.null(which)) which <- seq_along(x$files)
  if (!is.numeric(which) || length(which) == 0 || anyNA(which) || any(which != round(which)) ||
      any(which < 1 | which > length(x$files))) {
    stop_arg("'which' must be whole shard numbers between 1 and ", length(x$files))
  }
  files <- x$files[which]
  missing <- files[!file.exists(files)]
  if (length(missing) > 0) {
    stop_arg("graph file '", missing[1], "' of 'x' does not exist; run the search again with ",
             "the same arguments and 'out_dir' to compute it again")
  }
  first <- shard_offsets(list(rows = x$rows))[which]
  parts <- lapply(seq_along(which), function(i) {
    read_graph_part(files[i], first[i], x$rows[which[i]], x$k, x$n)
  })
  list(idx = do.call(rbind, lapply(parts, `[[`, "idx")),
       dist = do.call(rbind, lapply(parts, `[[`, "dist")))
}

# The graph of one shard's rows (global rows first + 1 to first + rows)
# from its file, checked: `k` columns, row numbers from 1 to n, each row
# first in its own list, finite non-negative distances, no neighbour twice.
read_graph_part <- function(file, first, rows, k, n) {
  redo <- "; run the search again with the same arguments in a new 'out_dir'"
  part <- tryCatch(readRDS(file), error = function(e) {
    stop_arg("graph file '", file, "' of 'x' cannot be read (", conditionMessage(e), ")", redo)
  })
  idx <- part$idx
  dist <- part$dist
  if (!is.list(part) || !is.matrix(idx) || !is.integer(idx) || !is.matrix(dist) ||
      !is.double(dist) || !identical(dim(idx), c(as.integer(rows), as.integer(k))) ||
      !identical(dim(dist), dim(idx))) {
    stop_arg("graph file '", file, "' of 'x' is not the graph of its shard's ", rows,
             " rows (list(idx, dist) of ", k, " columns)", redo)
  }
  problem <- .graph_problem(idx, dist, FALSE, FALSE, n)
  if (problem[1] == 0 && any(idx[, 1] != first + seq_len(rows))) problem[1] <- 6
  if (problem[1] != 0) {
    stop_arg("graph file '", file, "' of 'x' is damaged (",
             c("NA row numbers", "row numbers beyond the rows", "NA distances",
               "negative distances", "infinite distances", "rows that do not list themselves first",
               "", "", "a neighbour listed twice")[problem[1]], ")", redo)
  }
  part[c("idx", "dist")]
}

#' @method print lsnn_graph_shards
#' @export
print.lsnn_graph_shards <- function(x, ...) {
  what <- c(knn = "extended kNN", lsnn = "locally scaled (LSNN)")[[x$what]]
  cat(sprintf("lsnn %s graph in shards: %s rows x %d columns in %d files in %s\n",
              what, format(x$n, big.mark = ","), x$k, length(x$files),
              dirname(x$files[1])))
  if (!is.null(x$recall)) {
    cat("estimated recall by round:", paste(format(x$recall, digits = 4), collapse = ", "), "\n")
  }
  if (length(x$overlap) > 0) {
    cat("rows also in a second partition, by round:",
        paste0(format(100 * x$overlap), "%", collapse = ", "), "\n")
  }
  invisible(x)
}

# ---- a run: settings, directory, resume ----

sharded_run <- function(shards, n_neighbors, n_extra, nn_kind, metric, out_dir, n_threads,
                        verbose, nn_args, control, lsnn) {
  shards <- as_shard_set(shards)
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1, clamp = TRUE)
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE)
  nn_kind <- check_choice(nn_kind, "nn_kind", c("exact", "approx"))
  metric <- check_choice(metric, "metric", knn_metrics)
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  nn_args <- check_approx_control(nn_args)
  control <- check_shard_control(control)
  if (shards$n < 2) stop_arg("'shards' must hold at least 2 rows")
  k <- as.integer(min(as.double(n_neighbors) + n_extra, shards$n - 1) + 1)
  if (!is.null(lsnn)) {
    lsnn$scale <- check_scale_columns(lsnn$scale_from, lsnn$scale_to, k)
    lsnn$scale_from <- lsnn$scale_to <- NULL
  }
  keep <- !is.null(out_dir)
  if (keep) out_dir <- make_dir(check_dir_name(out_dir, "out_dir"), "out_dir")
  # every shard read once: its rows, columns, values and fingerprint
  shards <- check_shard_values(shards, binary = metric == "hamming")
  if (!keep) out_dir <- tempfile("lsnn-shards-")
  for (dir in c(out_dir, file.path(out_dir, c("knn", "work", if (!is.null(lsnn)) "lsnn")))) {
    make_dir(dir, "out_dir")
  }
  # (`format` tells a directory of this version's work files from an
  # earlier version's, which it cannot resume)
  settings <- list(format = 3L, fingerprints = shards$fingerprints, k = k, nn_kind = nn_kind,
                   metric = metric, nn_args = unclass(nn_args), control = unclass(control),
                   lsnn = lsnn)
  seed <- run_seed(out_dir, settings, shards)
  # Tasks run with this process's choice of kernels (an option would not
  # reach a worker otherwise).
  list(shards = shards, k = k, nn_kind = nn_kind, metric = metric, nn_args = nn_args,
       control = control, lsnn = lsnn, dir = out_dir, keep = keep, seed = seed,
       n_threads = n_threads, verbose = verbose, simd = simd_option(),
       stats_file = file.path(out_dir, "tasks.rds"))
}

# The seed of the run in out_dir. A new run draws it (approximate search
# only) and records it with the settings and the shards' fingerprints, so
# that a resumed run continues the same computation on the same data; a run
# already there is resumed only if both match, else an error says which
# shard or setting differs.
run_seed <- function(out_dir, settings, shards) {
  run_file <- file.path(out_dir, "run.rds")
  if (!file.exists(run_file)) {
    seed <- if (settings$nn_kind == "approx") sample.int(.Machine$integer.max, 1) else 0L
    save_atomic(list(settings = settings, seed = seed), run_file)
    return(seed)
  }
  old <- tryCatch(readRDS(run_file), error = function(e) NULL)
  was <- old$settings
  holds <- paste0("'out_dir' (", out_dir, ") holds a run ")
  afresh <- "; to start afresh, delete it or give another 'out_dir'"
  if (!identical(was$format, settings$format)) {
    stop_arg(holds, "begun by another version of lsnn, which this one cannot resume", afresh)
  }
  now <- settings$fingerprints
  if (length(was$fingerprints) != length(now)) {
    stop_arg(holds, "made for ", length(was$fingerprints), " shards, and 'shards' has ",
             length(now), afresh)
  }
  changed <- which(was$fingerprints != now)
  if (length(changed) > 0) {
    stop_arg(holds, "made for other data: shard ", changed[1], " ('", shards$files[changed[1]],
             "') has changed since the run began",
             if (length(changed) > 1) paste0(" (and ", length(changed) - 1, " more shards)"),
             afresh)
  }
  if (is.null(was$lsnn) != is.null(settings$lsnn)) {
    stop_arg(holds, "of ", if (is.null(was$lsnn)) "extended_knn_sharded()" else
      "locally_scaled_knn_sharded()", afresh)
  }
  differ <- names(settings)[!mapply(identical, was[names(settings)], settings)]
  if (length(differ) > 0) {
    args <- unique(unlist(setting_args[differ], use.names = FALSE))
    stop_arg(holds, "with other values of ",
             if (length(args) == 1) args else
               paste0(paste(args[-length(args)], collapse = ", "), " or ", args[length(args)]),
             afresh)
  }
  old$seed
}

# The arguments behind each recorded setting of a run, as its error names
# them.
setting_args <- list(k = c("n_neighbors", "n_extra"), nn_kind = "nn_kind", metric = "metric",
                     nn_args = "nn_args", control = "control",
                     lsnn = c("n_neighbors", "scale_from", "scale_to"))

shard_names <- function(run, prefix, ext = ".rds") {
  sprintf(paste0("%s-%0", max(5, nchar(length(run$shards$files))), "d%s"), prefix,
          seq_along(run$shards$files), ext)
}

graph_files <- function(run, what) {
  file.path(run$dir, what, shard_names(run, if (what == "knn") "graph" else "lsnn"))
}

finish_run <- function(run, what) {
  files <- graph_files(run, what)
  tasks <- if (file.exists(run$stats_file)) readRDS(run$stats_file) else NULL
  recall_file <- file.path(run$dir, "recall.rds")
  recall <- if (file.exists(recall_file)) readRDS(recall_file)
  if (!run$keep) {
    on.exit(unlink(run$dir, recursive = TRUE))
    res <- read_graph_shards(structure(
      list(files = files, rows = run$shards$rows, n = run$shards$n,
           k = if (what == "knn") run$k else run$lsnn$n_neighbors),
      class = "lsnn_graph_shards"))
    return(res)
  }
  unlink(file.path(run$dir, "work"), recursive = TRUE)
  out <- structure(list(what = what, files = files, rows = run$shards$rows, n = run$shards$n,
                        k = if (what == "knn") run$k else run$lsnn$n_neighbors,
                        tasks = tasks,
                        recall = recall$by_round, overlap = recall$overlap),
                   class = "lsnn_graph_shards")
  if (what == "lsnn") {
    out$knn <- out
    out$knn$what <- "knn"
    out$knn$files <- graph_files(run, "knn")
    out$knn$k <- run$k
  }
  save_atomic(out, file.path(run$dir, "complete.rds"))
  out
}

# ---- running tasks ----

# Runs tasks as futures of the current plan, skipping those whose outputs
# exist (each file of task$out, or the file of task$done_if at the same
# place: the later result that consumed it). Each task is list(name, out,
# ...); fun(task) does the work and writes task$out itself. Progress is
# reported per finished task; a task that fails, or whose worker dies,
# stops with an error naming it. Per-task statistics are appended to the
# run's stats file.
run_tasks <- function(run, phase, tasks, fun) {
  done <- vapply(tasks, function(t) {
    ok <- file.exists(t$out)
    if (!is.null(t$done_if)) ok <- ok | file.exists(t$done_if)
    all(ok)
  }, logical(1))
  todo <- tasks[!done]
  if (run$verbose && length(tasks) > 0) {
    cli::cli_inform(c(i = "{phase}: {length(todo)} task{?s} to run{if (any(done)) paste0(', ', sum(done), ' done before') else ''}"))
  }
  if (length(todo) == 0) return(invisible())
  start <- Sys.time()
  bar <- if (run$verbose) {
    cli::cli_progress_bar(phase, total = length(todo), clear = FALSE, .envir = environment())
  }
  wrapped <- task_wrapper
  stats <- vector("list", length(todo))
  pending <- list()
  collect <- function(wait) {
    repeat {
      # (a worker that died makes resolved() itself fail)
      state <- lapply(pending, function(f) tryCatch(future::resolved(f), error = function(e) e))
      ready <- names(pending)[vapply(state, function(x) !isFALSE(x), logical(1))]
      for (id in ready) {
        t <- todo[[as.integer(id)]]
        res <- if (inherits(state[[id]], "error")) state[[id]] else {
          tryCatch(future::value(pending[[id]]), error = function(e) e)
        }
        pending[[id]] <<- NULL
        if (inherits(res, "error")) {
          stop("task '", t$name, "' failed: ", conditionMessage(res), call. = FALSE)
        }
        stats[[as.integer(id)]] <<- data.frame(phase = phase, task = t$name, res,
                                               stringsAsFactors = FALSE)
        if (!is.null(bar)) cli::cli_progress_update(id = bar)
      }
      if (!wait || length(pending) == 0) return(invisible())
      Sys.sleep(0.02)
    }
  }
  for (i in seq_along(todo)) {
    # (a quoted call: the worker's globals are exactly these)
    pending[[as.character(i)]] <- future::future(
      quote(wrapped(fun, task, simd)), substitute = FALSE,
      globals = list(wrapped = wrapped, fun = fun, task = todo[[i]], simd = run$simd),
      packages = "lsnn", seed = FALSE, lazy = FALSE
    )
    collect(wait = FALSE)
  }
  collect(wait = TRUE)
  if (!is.null(bar)) cli::cli_progress_done(id = bar)
  stats <- do.call(rbind, stats)
  old <- if (file.exists(run$stats_file)) readRDS(run$stats_file)
  save_atomic(rbind(old, stats), run$stats_file)
  if (run$verbose) {
    cli::cli_inform(c(v = sprintf("%s: %d tasks in %.1f s", phase, length(todo),
                                  as.numeric(difftime(Sys.time(), start, units = "secs")))))
  }
  invisible()
}

# What a worker runs: the task with this session's kernel choice and its own
# random seed (the caller's generator state is left as it was, so that
# futures see no change in it), timed, with the bytes it read and wrote
# and its process's peak memory.
task_wrapper <- function(fun, task, simd) {
  old_opt <- options(lsnn.simd = simd)
  on.exit(options(old_opt), add = TRUE)
  with_seed(task$seed, {
    started <- as.numeric(Sys.time())
    start <- proc.time()[["elapsed"]]
    io <- fun(task)
    data.frame(started = started, seconds = proc.time()[["elapsed"]] - start,
               bytes_read = io[["read"]], bytes_written = io[["written"]],
               peak_memory = peak_memory(),
               pid = Sys.getpid())
  })
}

# The process's peak resident memory in bytes (VmHWM), NA where /proc is
# missing.
peak_memory <- function() {
  status <- tryCatch(readLines("/proc/self/status"), error = function(e) character())
  line <- grep("^VmHWM:", status, value = TRUE)
  if (length(line) == 0) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", line)) * 1024
}

# Task seeds: distinct whole numbers from the run's seed and the task's
# numbers.
task_seed <- function(run, ...) {
  key <- c(run$seed, ...)
  as.integer((sum(key * c(1, 7919, 104729, 1299709)[seq_along(key)]) %% (.Machine$integer.max - 1)) + 1)
}

# ---- the block kernel ----

# The k nearest rows of `reference` to each row of `query` by (exact
# distance, reference row number), leaving out row exclude[i] of the
# reference for query row i (NA: none), by the core's exact query
# (knn_query.h): the same distances and ties as the in-memory exact search.
# Returns list(idx, dist) of nrow(query) x min(k, available) with reference
# row numbers.
shard_block_knn <- function(query, reference, k, metric, exclude = NULL, n_threads = 1L) {
  nr <- nrow(reference)
  nq <- nrow(query)
  has_exclude <- !is.null(exclude) && any(!is.na(exclude))
  kk <- min(k, nr - has_exclude)
  if (kk < 1) return(list(idx = matrix(0L, nq, 0), dist = matrix(0, nq, 0)))
  # (the glue counts the stacked rows from 0, reference rows first)
  skip <- if (has_exclude) ifelse(is.na(exclude), -1L, as.integer(exclude) - 1L)
  .knn_query_dense(reference, query, kk, metric, TRUE, list(), c(0L, 0L), n_threads, FALSE,
                   simd_option(), skip)
}

# ---- merging candidate lists ----

# The best k_others candidates of each of n rows, by (distance, row number),
# each row number once and row self[i] left out, from blocks list(rows, idx,
# dist) (`rows`: the local rows of the block's lines; idx / dist: their
# candidates, 0 for none), by the core (graph_sort.h). Returns list(idx,
# dist, short): n x k_others matrices (0 / Inf where a row has fewer
# candidates) and the first row that has fewer (0 if none).
merge_candidates <- function(blocks, n, k_others, self = NULL, n_threads = 1L) {
  res <- .best_candidates(blocks, n, k_others, if (is.null(self)) integer() else self,
                          n_threads)
  res$short <- if (res$short > 0) which(res$idx[, k_others] == 0L)[1] else 0L
  res
}

# The best k_others of the lists `current` (NULL at first) and `new` (n x .
# matrices of global ids and distances) of each row.
merge_lists <- function(current, new, k_others, self, n_threads = 1L) {
  whole <- seq_len(nrow(new$idx))
  blocks <- list(list(rows = whole, idx = new$idx, dist = new$dist))
  if (!is.null(current)) {
    blocks[[2]] <- list(rows = whole, idx = current$idx, dist = current$dist)
  }
  merge_candidates(blocks, length(whole), k_others, self, n_threads)
}

# A graph shard from merged lists: the row itself first at distance 0. The
# local scales of its rows are written first, so that a graph file that
# exists has them.
write_graph_shard <- function(run, s, lists, file) {
  first <- shard_offsets(run$shards)[s]
  n <- nrow(lists$idx)
  g <- list(idx = cbind(as.integer(first + seq_len(n)), lists$idx),
            dist = cbind(0, lists$dist))
  dimnames(g$idx) <- dimnames(g$dist) <- NULL
  written <- 0
  if (!is.null(run$lsnn)) {
    sigma <- pmax(rowMeans(g$dist[, run$lsnn$scale[1]:run$lsnn$scale[2], drop = FALSE]),
                  min_local_scale)
    written <- save_atomic(sigma, sigma_file_of(file))
  }
  written + save_atomic(g, file)
}

min_local_scale <- 1e-10

# The local scales' file beside a graph shard's file.
sigma_file_of <- function(graph_file) {
  file.path(dirname(graph_file), sub("^graph-", "sigma-", basename(graph_file)))
}

# ---- the kNN graph phase ----

knn_graph_phase <- function(run) {
  if (all(file.exists(graph_files(run, "knn")))) return(invisible())
  if (run$nn_kind == "exact") exact_phase(run) else approx_phase(run)
}

# First one task per shard, its own all-pairs search; then tasks that
# search a shard q against a group of the shards after it (at most
# rows_per_task rows), both halves with each pair of rows scored once (as
# the search in memory does): q's rows get one list over the whole group,
# each group shard's rows one list from q; a row takes only rows within its
# k-th distance in its own shard (no true neighbour is farther, and most
# candidates fall away before they cost anything). Then one merge per shard.
# Part files: exact-q-q (own), exact-q-g (q's list over the group that
# starts with shard g), exact-r-q (shard r's list from shard q < r).
exact_phase <- function(run) {
  S <- length(run$shards$files)
  graphs <- graph_files(run, "knn")
  work <- file.path(run$dir, "work")
  part <- function(q, r) file.path(work, sprintf("exact-%d-%d.rds", q, r))
  bound <- function(q) file.path(work, sprintf("bound-%d.rds", q))
  offsets <- shard_offsets(run$shards)
  shared <- list(k = run$k - 1L, metric = run$metric,
                 n_threads = run$n_threads)
  own <- lapply(seq_len(S), function(q) {
    c(list(name = sprintf("exact shard %d", q), out = c(part(q, q), bound(q)),
           done_if = graphs[c(q, q)], shards = shard_subset(run$shards, q),
           first = offsets[q]),
      shared)
  })
  run_tasks(run, "exact neighbours within shards", own, exact_own_task)
  groups <- later_shard_groups(run$shards$rows, run$control$rows_per_task)
  tasks <- lapply(groups, function(g) {
    q <- g$q
    r <- g$r
    name <- if (length(r) == 1) sprintf("exact shard %d x shard %d", q, r) else
      sprintf("exact shard %d x shards %d-%d", q, r[1], r[length(r)])
    c(list(name = name, out = c(part(q, r[1]), part(r, q)), done_if = graphs[c(q, r)],
           shards = shard_subset(run$shards, c(q, r)), bounds = bound(c(q, r)),
           first = offsets[c(q, r[1])]),
      shared)
  })
  run_tasks(run, "exact neighbours between shards", tasks, exact_group_task)
  merges <- lapply(seq_len(S), function(s) {
    starts <- vapply(Filter(function(g) g$q == s, groups), function(g) g$r[1], 0)
    list(name = sprintf("merge shard %d", s), out = graphs[s], s = s,
         parts = part(s, c(s, starts, seq_len(s - 1))), run = run_for_worker(run),
         n_threads = run$n_threads)
  })
  run_tasks(run, "merge", merges, merge_parts_task)
}

# The shards after each shard q in consecutive groups of at most `limit`
# rows (at least one shard each): list(q, r) per group.
later_shard_groups <- function(rows, limit) {
  S <- length(rows)
  groups <- list()
  for (q in seq_len(S - 1)) {
    start <- q + 1
    while (start <= S) {
      end <- start
      while (end < S && sum(as.double(rows[start:(end + 1)])) <= limit) end <- end + 1
      groups[[length(groups) + 1]] <- list(q = q, r = start:end)
      start <- end + 1
    }
  }
  groups
}

# The parts of the run a worker needs (no large objects).
run_for_worker <- function(run) {
  run[c("shards", "k", "lsnn", "dir")]
}

# A shard's own search (the all-pairs search of extended_knn()), its rows'
# lists without themselves, and each row's k-th distance within the shard
# (Inf where the shard has fewer rows), the bound of its search in the
# other shards.
exact_own_task <- function(task) {
  x <- read_shard(task$shards)
  k <- min(task$k, nrow(x) - 1L)
  others <- if (k > 0) {
    g <- exact_knn(list(kind = "dense", x = x, n = nrow(x), d = ncol(x)), k + 1L, task$metric,
                   task$n_threads, FALSE)
    list(idx = g$idx[, -1L, drop = FALSE] + as.integer(task$first),
         dist = g$dist[, -1L, drop = FALSE])
  } else {
    list(idx = matrix(0L, nrow(x), 0), dist = matrix(0, nrow(x), 0))
  }
  kth <- if (k == task$k) others$dist[, k] else rep(Inf, nrow(x))
  written <- save_atomic(others, task$out[1]) + save_atomic(kth, task$out[2])
  c(read = file.size(task$shards$files), written = written)
}

# Shard q (the first of task$shards) against the group of shards after it: q's part
# over the whole group, and one part per group shard.
exact_group_task <- function(task) {
  q <- read_shard(task$shards, 1L)
  group <- lapply(seq_along(task$shards$files)[-1], read_shard, shards = task$shards)
  rows <- vapply(group, nrow, 0L)
  r <- do.call(rbind, group)
  rm(group)
  # (a bound that is missing only costs time)
  bounds <- lapply(seq_along(task$bounds), function(b) {
    if (file.exists(task$bounds[b])) readRDS(task$bounds[b]) else
      rep(Inf, if (b == 1) nrow(q) else rows[b - 1])
  })
  read <- sum(file.size(c(task$shards$files, task$bounds)), na.rm = TRUE)
  both <- .knn_between_dense(q, r, min(task$k, nrow(r)), min(task$k, nrow(q)), task$metric,
                             task$n_threads, simd_option(), bounds[[1]],
                             unlist(bounds[-1], use.names = FALSE))
  # (row numbers of the stack of q's rows over the group's, whose shards
  # follow each other; 0 marks no candidate)
  shift <- function(idx, by) {
    idx[idx > 0L] <- as.integer(idx[idx > 0L] + by)
    idx
  }
  written <- save_atomic(list(idx = shift(both$a$idx, task$first[2] - nrow(q)),
                              dist = both$a$dist), task$out[1])
  both$b$idx <- shift(both$b$idx, task$first[1])
  end <- cumsum(rows)
  for (j in seq_along(rows)) {
    at <- (end[j] - rows[j]) + seq_len(rows[j])
    written <- written + save_atomic(list(idx = both$b$idx[at, , drop = FALSE],
                                          dist = both$b$dist[at, , drop = FALSE]),
                                     task$out[1 + j])
  }
  c(read = read, written = written)
}

# A shard's lists from its parts, read and merged a few at a time (the
# parts of a row are disjoint sets of rows).
merge_parts_task <- function(task) {
  run <- task$run
  first <- shard_offsets(run$shards)[task$s]
  n <- run$shards$rows[task$s]
  self <- as.integer(first + seq_len(n))
  whole <- seq_len(n)
  lists <- NULL
  for (group in split(task$parts, ceiling(seq_along(task$parts) / 8))) {
    blocks <- lapply(group, function(f) c(list(rows = whole), readRDS(f)))
    if (!is.null(lists)) blocks <- c(blocks, list(list(rows = whole, idx = lists$idx, dist = lists$dist)))
    lists <- merge_candidates(blocks, n, run$k - 1L, self, task$n_threads)
  }
  if (lists$short > 0) {
    stop("row ", self[lists$short], " has fewer than ", run$k - 1L, " candidates",
         call. = FALSE)
  }
  written <- write_graph_shard(run, task$s, lists, task$out)
  read <- sum(file.size(task$parts))
  unlink(task$parts)
  c(read = read, written = written)
}

# ---- the approximate graph ----

approx_phase <- function(run) {
  ctl <- run$control
  n <- run$shards$n
  n_parts <- max(1L, as.integer(ceiling(n / ctl$rows_per_partition)))
  recall_file <- file.path(run$dir, "recall.rds")
  recall <- if (file.exists(recall_file)) readRDS(recall_file)
  if (is.null(recall)) {
    recall <- list(truth = exact_rows_phase(run), by_round = numeric(), overlap = numeric())
    save_atomic(recall, recall_file)
  }
  round <- length(recall$by_round)
  while (round < ctl$max_rounds &&
         (round == 0 || recall$by_round[round] < ctl$target_recall)) {
    round <- round + 1L
    recall$overlap[round] <- approx_round(run, round, n_parts, recall$truth)
    recall$by_round[round] <- estimate_recall(run, round, recall$truth)
    save_atomic(recall, recall_file)
    if (run$verbose) {
      cli::cli_inform(c(i = sprintf("round %d: estimated recall %.4f", round,
                                    recall$by_round[round])))
    }
  }
  # The graph of the last round is the result.
  last <- round_graph_files(run, round)
  file.rename(last, graph_files(run, "knn"))
  sig <- sigma_file_of(last)
  if (!is.null(run$lsnn)) file.rename(sig, sigma_file_of(graph_files(run, "knn")))
  invisible()
}

round_graph_files <- function(run, round) {
  file.path(run$dir, "work", sprintf("round-%d", round), shard_names(run, "graph"))
}

# The rows whose exact neighbours estimate the recall, and those neighbours,
# found by the exact sharded search: list(rows, dist) with the true
# (k - 1)-th distance of each row.
exact_rows_phase <- function(run) {
  n <- run$shards$n
  rows <- with_seed(task_seed(run, 0), sort(sample.int(n, min(n, run$control$recall_rows))))
  query <- gather_rows(run, rows)
  offsets <- shard_offsets(run$shards)
  S <- length(run$shards$files)
  part <- function(r) file.path(run$dir, "work", sprintf("recall-%d.rds", r))
  tasks <- lapply(seq_len(S), function(r) {
    local <- rows - offsets[r]
    list(name = sprintf("recall rows x shard %d", r), out = part(r), query = query,
         exclude = ifelse(local >= 1 & local <= run$shards$rows[r], local, NA_integer_),
         reference = shard_subset(run$shards, r), first_ref = offsets[r], k = run$k - 1L,
         metric = run$metric, n_threads = run$n_threads)
  })
  run_tasks(run, "exact neighbours of sampled rows", tasks, exact_rows_task)
  lists <- NULL
  for (r in seq_len(S)) lists <- merge_lists(lists, readRDS(part(r)), run$k - 1L, rows)
  unlink(vapply(seq_len(S), part, ""))
  list(rows = rows, idx = lists$idx, dist = lists$dist)
}

exact_rows_task <- function(task) {
  reference <- read_shard(task$reference)
  exclude <- as.integer(task$exclude)
  g <- shard_block_knn(task$query, reference, task$k, task$metric,
                       if (any(!is.na(exclude))) exclude, task$n_threads)
  g$idx[] <- as.integer(g$idx + task$first_ref)
  c(read = file.size(task$reference$files), written = save_atomic(g, task$out))
}

# Rows by global number, in that order, read shard by shard as tasks.
gather_rows <- function(run, rows) {
  offsets <- shard_offsets(run$shards)
  shard_of <- findInterval(rows, offsets + 0.5)
  used <- sort(unique(shard_of))
  parts <- future.apply::future_lapply(used, function(s, shards, local) {
    read_shard(shards, s)[local[[as.character(s)]], , drop = FALSE]
  }, shards = run$shards,
  local = split(rows - offsets[shard_of], shard_of), future.seed = NULL,
  future.packages = "lsnn")
  x <- do.call(rbind, parts)
  x[order(order(shard_of, rows)), , drop = FALSE]
}

# The share of the sampled rows' listed neighbours no farther than their
# true (k - 1)-th neighbour (the estimate of approx_control()), from the
# counts that the round's merges wrote (counted here from the graph shard
# where a run begun by an earlier version has none).
estimate_recall <- function(run, round, truth) {
  files <- found_files(run, round)
  graphs <- round_graph_files(run, round)
  found <- vapply(seq_along(files), function(s) {
    if (file.exists(files[s])) return(readRDS(files[s]))
    t <- truth_of_shard(run, truth, s)
    if (length(t$rows) == 0) return(0)
    sum(readRDS(graphs[s])$dist[t$rows, -1, drop = FALSE] <= t$bound)
  }, 0)
  sum(found) / (length(truth$rows) * (run$k - 1))
}

found_files <- function(run, round) {
  file.path(run$dir, "work", sprintf("round-%d", round), shard_names(run, "found"))
}

# The sampled rows of shard s (local numbers) and their true (k - 1)-th
# distances, for its merge to count what its lists hold.
truth_of_shard <- function(run, truth, s) {
  offsets <- shard_offsets(run$shards)
  mine <- which(truth$rows > offsets[s] & truth$rows <= offsets[s + 1])
  list(rows = as.integer(truth$rows[mine] - offsets[s]), bound = truth$dist[mine, run$k - 1L])
}

# One round: centres from a sample, each shard's rows put into the
# partition of their nearest centre (and those near a boundary into that of
# their second nearest), the approximate search on each partition, and the
# candidates merged per shard with the last round's lists. The assignment
# keeps the rows that may go to a second partition apart, with their
# excess (two_nearest()), so that the share searched twice can be chosen
# after it, from where the sampled rows and their true neighbours fell
# (choose_overlap()). Returns that share.
approx_round <- function(run, round, n_parts, truth) {
  dir <- file.path(run$dir, "work", sprintf("round-%d", round))
  dir.create(dir, showWarnings = FALSE)
  graphs <- round_graph_files(run, round)
  found <- found_files(run, round)
  overlap_file <- file.path(dir, "overlap.rds")
  if (all(file.exists(graphs))) return(readRDS(overlap_file)$share)
  S <- length(run$shards$files)
  centres_file <- file.path(dir, "centres.rds")
  if (!file.exists(centres_file)) {
    save_atomic(partition_centres(run, round, n_parts), centres_file)
  }
  partitions <- readRDS(centres_file)
  centres <- partitions$centres
  P <- nrow(centres)
  bucket <- function(p, s) file.path(dir, sprintf("bucket-%d-%d.rds", p, s))
  edge <- function(p, s) file.path(dir, sprintf("edge-%d-%d.rds", p, s))
  candidates <- function(p, s) file.path(dir, sprintf("cand-%d-%d.rds", p, s))
  counts_file <- function(s) file.path(dir, sprintf("assigned-%d.rds", s))
  # the sampled rows and their true neighbours, whose partitions the
  # assignment reports
  offsets <- shard_offsets(run$shards)
  watched <- sort(unique(c(truth$rows, truth$idx)))
  watched_shard <- findInterval(watched, offsets + 0.5)
  assign <- lapply(seq_len(S), function(s) {
    list(name = sprintf("round %d: assign shard %d", round, s), out = counts_file(s),
         done_if = graphs[s], shard = shard_subset(run$shards, s), s = s, first = offsets[s],
         centres = centres, metric = run$metric, limit = max(partitions$limits),
         n_threads = run$n_threads, watch = as.integer(watched[watched_shard == s] - offsets[s]),
         bucket = vapply(seq_len(P), bucket, "", s = s),
         edge = vapply(seq_len(P), edge, "", s = s))
  })
  run_tasks(run, sprintf("round %d: partitions", round), assign, assign_task)
  # Which shards have rows in which partition (shards merged already are
  # not needed again).
  assigned <- lapply(seq_len(S), function(s) {
    if (file.exists(counts_file(s))) readRDS(counts_file(s))
  })
  counts <- function(what) {
    do.call(cbind, lapply(assigned, function(a) if (is.null(a)) integer(P) else a[[what]]))
  }
  first_counts <- counts("first")
  edge_counts <- counts("edge")
  if (!file.exists(overlap_file)) {
    watched_near <- do.call(rbind, lapply(assigned, `[[`, "watched"))
    save_atomic(choose_overlap(partitions, watched_near, truth, run$control), overlap_file)
  }
  overlap <- readRDS(overlap_file)
  if (run$verbose) {
    cli::cli_inform(c(i = sprintf(
      "round %d: %d partitions, %.1f%% of rows also in a second one (%.4f of the sampled rows' neighbours share a partition with them)",
      round, P, 100 * overlap$share, overlap$coverage)))
  }
  searches <- lapply(seq_len(P), function(p) {
    firsts <- which(first_counts[p, ] > 0)
    edges <- which(edge_counts[p, ] > 0)
    shards <- sort(union(firsts, edges))
    list(name = sprintf("round %d: search partition %d", round, p),
         out = file.path(dir, sprintf("searched-%d.rds", p)), p = p,
         shards = shards, candidates = candidates(p, shards), buckets = bucket(p, firsts),
         bucket_shards = firsts, edges = edge(p, edges), edge_shards = edges,
         limit = overlap$limit, k = run$k, metric = run$metric, nn_args = run$nn_args,
         n_threads = run$n_threads, seed = task_seed(run, round, p))
  })
  # the largest first, so that the last tasks to finish are short ones
  searches <- Filter(function(t) length(t$shards) > 0, searches[order(-rowSums(first_counts))])
  run_tasks(run, sprintf("round %d: search", round), searches, partition_task)
  previous <- if (round > 1) round_graph_files(run, round - 1L)
  merges <- lapply(seq_len(S), function(s) {
    from <- which(first_counts[, s] > 0 | edge_counts[, s] > 0)
    list(name = sprintf("round %d: merge shard %d", round, s), out = c(graphs[s], found[s]),
         done_if = graphs[c(s, s)], s = s, parts = candidates(from, s),
         previous = previous[s], run = run_for_worker(run),
         truth = truth_of_shard(run, truth, s), n_threads = run$n_threads)
  })
  run_tasks(run, sprintf("round %d: merge", round), merges, merge_candidates_task)
  if (round > 1) unlink(c(previous, sigma_file_of(previous)))
  overlap$share
}

# Partitions: k-means centres on a sample of rows (in the metric's geometry:
# unit rows for cosine, centred unit rows for correlation), starting from
# n_parts sampled rows. A centre whose partition would hold more than 1.5
# times rows_per_partition (estimated from the sample, with the share
# `overlap` of its rows searched twice, or none where the share is chosen
# later) is split in two by 2-means on its rows, so that every task fits
# its share of memory and none runs far longer than the others; a centre
# that would get fewer than 4k rows is dropped, so that every partition has
# room for its rows' neighbours. Returns list(centres, shares, limits): the
# limits of keep_second() that put each share of the sample's rows (0 to
# 0.5 by 0.01, or the share `overlap` alone) in a second partition.
partition_centres <- function(run, round, n_parts) {
  n <- run$shards$n
  ctl <- run$control
  shares <- if (is.null(ctl$overlap)) seq(0, max_overlap, by = 0.01) else ctl$overlap
  if (n_parts == 1) {
    return(list(centres = matrix(0, 1, run$shards$n_col), shares = 0, limits = -Inf))
  }
  m <- ctl$sample_rows
  if (is.null(m)) m <- min(n, max(20000, 200 * n_parts))
  rows <- with_seed(task_seed(run, round, 0), sort(sample.int(n, min(n, m))))
  x <- unique(partition_space(gather_rows(run, rows), run$metric))
  n_parts <- min(n_parts, nrow(x))
  per_row <- n / nrow(x)
  planned <- if (is.null(ctl$overlap)) 0 else ctl$overlap
  sizes <- function(centres) {
    near <- two_nearest(x, centres, run$n_threads)
    near <- keep_second(near, overlap_limit(near$excess, planned))
    list(near = near, size = partition_sizes(near, nrow(centres)) * per_row)
  }
  centres <- with_seed(task_seed(run, round, 1), {
    start <- x[sample.int(nrow(x), n_parts), , drop = FALSE]
    centres <- tryCatch(
      suppressWarnings(stats::kmeans(x, start, iter.max = 20, algorithm = "MacQueen")$centers),
      error = function(e) start)
    repeat {
      now <- sizes(centres)
      big <- which.max(now$size)
      mine <- x[now$near$first == big, , drop = FALSE]
      if (now$size[big] <= 1.5 * ctl$rows_per_partition || nrow(unique(mine)) < 2) break
      halves <- tryCatch(
        suppressWarnings(stats::kmeans(mine, 2, iter.max = 20)$centers),
        error = function(e) NULL)
      if (is.null(halves)) break
      centres <- rbind(centres[-big, , drop = FALSE], halves)
    }
    centres
  })
  repeat {
    size <- sizes(centres)$size
    small <- which(size < 4 * run$k)
    if (length(small) == 0 || nrow(centres) <= 2) break
    centres <- centres[-small[which.min(size[small])], , drop = FALSE]
  }
  centres <- unname(centres)
  excess <- two_nearest(x, centres, run$n_threads)$excess
  list(centres = centres, shares = shares,
       limits = vapply(shares, overlap_limit, 0, excess = excess))
}

# The largest share of rows that an automatic choice of the overlap puts in
# a second partition.
max_overlap <- 0.5

# The overlap of a round: with shard_control(overlap = NULL), the least of
# partitions$shares under which the sampled rows' neighbours that share a
# partition with them (a row is in partition p if p is its nearest centre,
# or its second nearest and its excess is within the limit) make up at least
# 1 - (1 - target_recall) / 4 of all (the boundaries then lose at most a
# quarter of the misses the target allows); the largest share where none
# does. `near` holds the partitions of the sampled rows and their true
# neighbours (data.frame(row, first, second, excess)), `truth` those rows
# and neighbours. Returns list(share, limit, coverage).
choose_overlap <- function(partitions, near, truth, control) {
  i <- match(rep(truth$rows, ncol(truth$idx)), near$row)
  j <- match(as.vector(truth$idx), near$row)
  keep <- !is.na(i) & !is.na(j)
  i <- i[keep]
  j <- j[keep]
  coverage <- function(limit) {
    if (length(i) == 0) return(1)
    two_i <- near$excess[i] <= limit
    two_j <- near$excess[j] <= limit
    fi <- near$first[i]
    fj <- near$first[j]
    si <- near$second[i]
    sj <- near$second[j]
    # (a second centre is NA only where there is one centre)
    mean((fi == fj | (two_i & si == fj) | (two_j & sj == fi) | (two_i & two_j & si == sj)) %in% TRUE)
  }
  covered <- vapply(partitions$limits, coverage, 0)
  good <- which(covered >= 1 - (1 - control$target_recall) / 4)
  at <- if (length(good) > 0) good[1] else length(covered)
  list(share = partitions$shares[at], limit = partitions$limits[at], coverage = covered[at])
}

partition_space <- function(x, metric) {
  if (metric == "correlation") x <- x - rowMeans(x)
  if (metric %in% c("cosine", "correlation")) {
    norm <- sqrt(rowSums(x^2))
    x <- x / ifelse(norm > 0, norm, 1)
  }
  x
}

# The partitions of each row from two_nearest(): list(first, second) of
# centre numbers, the nearest centre, and the second nearest where its
# excess is at most `limit` (NA elsewhere): rows near a boundary are
# searched on both sides of it.
keep_second <- function(near, limit) {
  near$second[near$excess > limit] <- NA_integer_
  near[c("first", "second")]
}

# The two nearest centres of each row and how much farther the second is
# (its distance over the first's, minus 1; Inf with one centre), by the
# core's exact query (ties to the lower centre number).
two_nearest <- function(x, centres, n_threads = 1L) {
  if (nrow(centres) == 1) {
    return(list(first = rep(1L, nrow(x)), second = rep(NA_integer_, nrow(x)),
                excess = rep(Inf, nrow(x))))
  }
  near <- shard_block_knn(x, centres, 2L, "euclidean", n_threads = n_threads)
  d_first <- near$dist[, 1]
  list(first = near$idx[, 1], second = near$idx[, 2],
       excess = ifelse(d_first > 0, near$dist[, 2] / d_first - 1, Inf))
}

# The limit of keep_second() that puts the share `overlap` of rows with
# these excesses (two_nearest()) in a second partition: those nearest a
# boundary.
overlap_limit <- function(excess, overlap) {
  if (overlap <= 0) return(-Inf)
  if (overlap >= 1) return(Inf)
  unname(stats::quantile(excess, overlap, type = 1))
}

# Rows per partition.
partition_sizes <- function(near, n_parts) {
  tabulate(near$first, n_parts) + tabulate(near$second[!is.na(near$second)], n_parts)
}

# A shard's rows by partition: each in the bucket of its nearest centre,
# and those whose excess is within task$limit (the largest the round may
# use) also in the edge bucket of their second nearest, with their excess.
# Writes the rows per partition of both kinds and the partitions of the
# watched rows (global row numbers).
assign_task <- function(task) {
  x <- read_shard(task$shard)
  near <- two_nearest(partition_space(x, task$metric), task$centres, task$n_threads)
  n_parts <- nrow(task$centres)
  levels <- seq_len(n_parts)
  written <- 0
  save_groups <- function(rows, group, files, extra = NULL) {
    members <- split(rows, factor(group, levels = levels))
    counts <- lengths(members, use.names = FALSE)
    for (p in which(counts > 0)) {
      r <- members[[p]]
      content <- list(ids = as.integer(task$first + r), x = x[r, , drop = FALSE])
      if (!is.null(extra)) content$excess <- extra[r]
      written <<- written + save_atomic(content, files[p])
    }
    counts
  }
  first <- save_groups(seq_len(nrow(x)), near$first, task$bucket)
  two <- which(near$excess <= task$limit)
  edge <- save_groups(two, near$second[two], task$edge, near$excess)
  w <- task$watch
  watched <- data.frame(row = task$first + w, first = near$first[w], second = near$second[w],
                        excess = near$excess[w])
  written <- written + save_atomic(list(first = first, edge = edge, watched = watched), task$out)
  c(read = file.size(task$shard$files), written = written)
}

# The search of one partition: its rows from each shard's bucket, and those
# of each shard's edge bucket whose excess is within task$limit; writes the
# candidates of each shard's rows (none where it has no rows left).
partition_task <- function(task) {
  part_of <- function(s) {
    b <- match(s, task$bucket_shards)
    e <- match(s, task$edge_shards)
    mine <- if (!is.na(b)) readRDS(task$buckets[b]) else list(ids = integer(), x = NULL)
    if (!is.na(e)) {
      edge <- readRDS(task$edges[e])
      keep <- edge$excess <= task$limit
      mine <- list(ids = c(mine$ids, edge$ids[keep]),
                   x = rbind(mine$x, edge$x[keep, , drop = FALSE]))
    }
    mine
  }
  parts <- lapply(task$shards, part_of)
  counts <- vapply(parts, function(b) length(b$ids), 0L)
  ids <- unlist(lapply(parts, `[[`, "ids"))
  x <- do.call(rbind, lapply(parts, `[[`, "x"))
  rm(parts)
  written <- 0
  if (length(ids) > 1) {
    g <- extended_knn(x, n_neighbors = task$k - 1L, n_extra = 0, n_threads = task$n_threads,
                      nn_kind = "approx", metric = task$metric, nn_args = task$nn_args)
    g$idx[] <- ids[g$idx]
  } else {
    g <- list(idx = matrix(ids, length(ids), 1), dist = matrix(0, length(ids), 1))
  }
  rm(x)
  # the candidates of each shard's rows (the row itself dropped), one file
  # per shard
  end <- cumsum(counts)
  for (b in seq_along(task$shards)) {
    rows <- (end[b] - counts[b]) + seq_len(counts[b])
    written <- written + save_atomic(list(ids = ids[rows],
                                          idx = g$idx[rows, -1, drop = FALSE],
                                          dist = g$dist[rows, -1, drop = FALSE]),
                                     task$candidates[b])
  }
  read <- sum(file.size(c(task$buckets, task$edges)))
  written <- written + save_atomic(TRUE, task$out)
  unlink(c(task$buckets, task$edges))
  c(read = read, written = written)
}

merge_candidates_task <- function(task) {
  run <- task$run
  s <- task$s
  first <- shard_offsets(run$shards)[s]
  n <- run$shards$rows[s]
  self <- as.integer(first + seq_len(n))
  k_others <- run$k - 1L
  # every candidate of the shard's rows, from the previous round and from
  # each partition, ranked once
  blocks <- list()
  read <- 0
  if (!is.null(task$previous) && !is.na(task$previous)) {
    g <- readRDS(task$previous)
    blocks[[1]] <- list(rows = seq_len(n), idx = g$idx[, -1, drop = FALSE],
                        dist = g$dist[, -1, drop = FALSE])
    read <- read + file.size(task$previous)
  }
  for (f in task$parts) {
    cand <- readRDS(f)
    read <- read + file.size(f)
    blocks[[length(blocks) + 1L]] <- list(rows = as.integer(cand$ids - first), idx = cand$idx,
                                          dist = cand$dist)
  }
  lists <- merge_candidates(blocks, n, k_others, self, task$n_threads)
  rm(blocks)
  if (lists$short > 0) {
    stop("row ", self[lists$short], " has fewer than ", k_others,
         " candidates: its partitions are too small", call. = FALSE)
  }
  # the sampled rows' listed neighbours within their true (k - 1)-th
  # distance (the count written first: a graph file that exists has it)
  t <- task$truth
  found <- sum(lists$dist[t$rows, , drop = FALSE] <= t$bound)
  written <- save_atomic(found, task$out[2]) + write_graph_shard(run, s, lists, task$out[1])
  unlink(task$parts)
  c(read = read, written = written)
}

# ---- the LSNN phase ----

# The locally scaled neighbours need, for each shard's lists, the scales of
# their candidates, which the shards' merges wrote one file per shard. A
# task reading every scale file would make the bytes read grow as the
# shards times the rows; instead the scales are exchanged in three steps,
# so that the bytes grow as the lists' entries: each shard's task writes its
# candidates (in list order, grouped by the group of shards holding them:
# its requests), a task per group reads its shards' scales and answers
# every shard's requests, and each shard's task reads its answers and
# picks its neighbours. A group holds at most scale_group_rows rows (its
# scales are one task's memory), and there are at least as many groups as
# workers where the shards allow it.
scale_group_rows <- 1e7

lsnn_phase <- function(run) {
  out <- graph_files(run, "lsnn")
  if (all(file.exists(out))) return(invisible())
  knn <- graph_files(run, "knn")
  S <- length(knn)
  dir <- file.path(run$dir, "work", "scales")
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  groups_file <- file.path(dir, "groups.rds")
  if (!file.exists(groups_file)) save_atomic(scale_groups(run), groups_file)
  group <- readRDS(groups_file)
  G <- max(group)
  offsets <- shard_offsets(run$shards)
  group_first <- offsets[match(seq_len(G), group)]
  request <- function(s, g) file.path(dir, sprintf("request-%d-%d.rds", s, g))
  answer <- function(s, g) file.path(dir, sprintf("answer-%d-%d.rds", s, g))
  # (a shard whose LSNN file exists needs neither)
  requests <- lapply(seq_len(S), function(s) {
    list(name = sprintf("scale requests of shard %d", s), out = request(s, seq_len(G)),
         done_if = out[c(s, rep(s, G - 1L))], graph = knn[s], group_first = group_first)
  })
  run_tasks(run, "locally scaled neighbours: scale requests", requests, scale_request_task)
  answers <- lapply(seq_len(G), function(g) {
    mine <- which(group == g)
    todo <- which(!file.exists(out))
    list(name = sprintf("scale answers of shard group %d", g), out = answer(todo, g),
         sigma = sigma_file_of(knn[mine]), first = offsets[mine[1]],
         requests = request(todo, g))
  })
  run_tasks(run, "locally scaled neighbours: scale answers", answers, scale_answer_task)
  tasks <- lapply(seq_len(S), function(s) {
    list(name = sprintf("lsnn shard %d", s), out = out[s], graph = knn[s],
         answers = answer(s, seq_len(G)), requests = request(s, seq_len(G)),
         group_first = group_first, n_neighbors = run$lsnn$n_neighbors,
         scale = run$lsnn$scale, n_threads = run$n_threads)
  })
  run_tasks(run, "locally scaled neighbours", tasks, lsnn_task)
}

# The group of each shard: consecutive shards, as many groups as there are
# scale_group_rows in the rows (rounded up), or workers if more (but no more
# than shards), each about the same number of rows.
scale_groups <- function(run) {
  rows <- as.double(run$shards$rows)
  workers <- future::nbrOfWorkers()
  # (a scheduler's plan may report no limit)
  if (!is.finite(workers)) workers <- 1
  n_groups <- min(length(rows), max(ceiling(sum(rows) / scale_group_rows), workers))
  middle <- cumsum(rows) - rows / 2
  group <- pmin(n_groups, floor(middle / (sum(rows) / n_groups)) + 1)
  match(group, unique(group))
}

# A graph shard's candidates, other than the rows themselves, and the
# entries of each shard group among them (in list order): the order both
# its requests and its LSNN task use.
candidates_by_group <- function(g, group_first) {
  cand <- g$idx[, -1, drop = FALSE]
  # (group numbers are 1 to G: made a factor directly, not through
  # factor()'s strings)
  group <- structure(findInterval(cand, group_first + 0.5),
                     levels = as.character(seq_along(group_first)), class = "factor")
  list(cand = cand, at = split(seq_along(cand), group))
}

scale_request_task <- function(task) {
  g <- readRDS(task$graph)
  by <- candidates_by_group(g, task$group_first)
  written <- 0
  for (f in seq_along(task$out)) {
    written <- written + save_atomic(as.integer(by$cand[by$at[[f]]]), task$out[f])
  }
  c(read = file.size(task$graph), written = written)
}

scale_answer_task <- function(task) {
  sigma <- unlist(lapply(task$sigma, readRDS), use.names = FALSE)
  written <- 0
  for (r in seq_along(task$requests)) {
    written <- written + save_atomic(sigma[readRDS(task$requests[r]) - task$first], task$out[r])
  }
  c(read = sum(file.size(c(task$sigma, task$requests))), written = written)
}

# A shard's locally scaled neighbours, with its candidates' scales from the
# answers to its requests (in the order of candidates_by_group()).
lsnn_task <- function(task) {
  g <- readRDS(task$graph)
  by <- candidates_by_group(g, task$group_first)
  sigma <- numeric(length(by$cand))
  for (f in seq_along(task$answers)) sigma[by$at[[f]]] <- readRDS(task$answers[f])
  local <- list(idx = cbind(g$idx[, 1], matrix(seq_along(by$cand), nrow(by$cand))),
                dist = g$dist)
  res <- select_lsnn(local, sigma, task$n_neighbors, task$scale, task$n_threads)
  res$idx[, -1] <- by$cand[res$idx[, -1]]
  read <- sum(file.size(c(task$graph, task$answers)))
  written <- save_atomic(res, task$out)
  unlink(c(task$answers, task$requests))
  c(read = read, written = written)
}

# The locally scaled neighbours of a graph shard's rows by the core's
# selection (local_scaling.h, locally_scaled_query()), their candidates'
# scales looked up in the global vector sigma: the row itself, then the
# n_neighbors - 1 best of its other columns. The core recomputes each row's
# own scale from the same columns, as write_graph_shard() did.
select_lsnn <- function(g, sigma, n_neighbors, scale, n_threads) {
  self <- list(idx = g$idx[, 1, drop = FALSE], dist = g$dist[, 1, drop = FALSE])
  if (n_neighbors == 1L) return(self)
  chosen <- .locally_scaled_query(g$idx[, -1, drop = FALSE], g$dist[, -1, drop = FALSE], sigma,
                                  n_neighbors - 1L, scale[1], scale[2], n_threads)
  list(idx = cbind(self$idx, chosen$idx), dist = cbind(self$dist, chosen$dist))
}
