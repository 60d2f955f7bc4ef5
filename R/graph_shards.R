# The graph files of a finished sharded search (R/sharded_knn.R): the
# lsnn_graph_shards record, read back in its directory, checked against
# the shards it was computed from (their fingerprints), read into memory
# (read_graph_shards()) and printed.

# The lsnn_graph_shards object `x`, or the one of the finished run whose
# out_dir `x` names; `name` is the argument's name in errors. A directory's
# record (complete.rds) names its files relative to it, so they are read in
# the directory given, wherever it is; a record of an earlier version of
# lsnn, which named absolute paths, is read the same way (the files of
# that name in the directory given), its shards' fingerprints taken from
# the run's record (run.rds).
as_graph_shards <- function(x, name) {
  if (is.character(x) && length(x) == 1 && !is.na(x)) {
    if (!dir.exists(x)) {
      stop_arg("'", name, "' (", x, ") is not a directory: give the out_dir of a finished ",
               "run or the lsnn_graph_shards object it returned")
    }
    dir <- normalizePath(x, mustWork = TRUE)
    done <- file.path(dir, "complete.rds")
    if (!file.exists(done)) stop_arg("'", name, "' (", x, ") holds no finished sharded graph")
    x <- tryCatch(readRDS(done), error = function(e) {
      stop_arg("'", done, "', the record of the finished run in '", name, "', cannot be read (",
               conditionMessage(e), "); run the search again with the same arguments and ",
               "'out_dir'")
    })
    if (!inherits(x, "lsnn_graph_shards") || !is.list(x)) {
      stop_arg("'", done, "', the record of the finished run in '", name, "', is not a ",
               "record of lsnn's sharded searches")
    }
    x <- graph_shards_in(x, dir)
    if (!is.null(x$knn)) x$knn <- graph_shards_in(x$knn, dir)
  }
  if (!inherits(x, "lsnn_graph_shards")) {
    stop_arg("'", name, "' must be an lsnn_graph_shards object or the out_dir of a finished run")
  }
  if (isTRUE(x$relative)) {
    stop_arg("'", name, "' is a record of complete.rds, whose files are named relative to its ",
             "directory: give that directory as '", name, "'")
  }
  x
}

# A graph record of complete.rds with its files in directory `dir`.
graph_shards_in <- function(x, dir) {
  relative <- isTRUE(x$relative)
  x$relative <- NULL
  x$dir <- dir
  # (damaged files are named by read_graph_shards())
  if (!is.character(x$files)) return(x)
  if (relative) {
    x$files <- file.path(dir, x$files)
  } else {
    # (an earlier version's absolute paths: their last two parts, such as
    # knn/graph-00001.rds)
    x$files <- file.path(dir, basename(dirname(x$files)), basename(x$files))
    if (is.null(x$fingerprints)) {
      record <- tryCatch(readRDS(file.path(dir, "run.rds")), error = function(e) NULL)
      x$fingerprints <- record$settings$fingerprints
    }
  }
  x
}

#' Read a graph kept in shards
#'
#' The whole graph `list(idx, dist)` from the files a sharded search kept in
#' its `out_dir`, or the rows of some shards only.
#'
#' A run's directory is self-contained: its record `complete.rds` names the
#' graph files relative to the directory, so that a directory moved, copied
#' or read after [setwd()] gives its own graph, read from the directory
#' given (never from files its record names elsewhere). Each graph file
#' carries the id of the run that wrote it, its shard's number and a
#' fingerprint of its contents, and is read only if all three are those
#' expected: a file of another run (of other data or settings), of another
#' shard, or changed since it was written is an error naming it. Directories
#' of runs made by earlier versions of lsnn, whose records name absolute
#' paths and whose files carry no id, are read from the directory given,
#' with the files' shapes and contents checked.
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
  x <- as_graph_shards(x, "x")
  problem <- if (!is.list(x)) "it is not a list" else
    shard_set_problem(x$files, x$rows, 1L, NULL, x$n)
  if (is.null(problem) && !is_scalar_number(x$k, min = 1, max = big_int, whole = TRUE)) {
    problem <- "'k' must be a whole number of at least 1"
  }
  if (is.null(problem) && !is.null(x$run) &&
      !(is.character(x$run) && length(x$run) == 1 && !is.na(x$run))) {
    problem <- "'run' must be the id of a run"
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
             "the same arguments and 'out_dir' to compute it again (or, if the run's ",
             "directory was moved, give its new place as 'x')")
  }
  first <- shard_offsets(list(rows = x$rows))[which]
  parts <- lapply(seq_along(which), function(i) {
    read_graph_part(files[i], which[i], first[i], x$rows[which[i]], x$k, x$n, x$run)
  })
  list(idx = do.call(rbind, lapply(parts, `[[`, "idx")),
       dist = do.call(rbind, lapply(parts, `[[`, "dist")))
}

# The graph of shard s's rows (global rows first + 1 to first + rows) from
# its file, checked by graph_part_problem().
read_graph_part <- function(file, s, first, rows, k, n, id) {
  redo <- "; run the search again with the same arguments in a new 'out_dir'"
  part <- tryCatch(readRDS(file), error = function(e) {
    stop_arg("graph file '", file, "' of 'x' cannot be read (", conditionMessage(e), ")", redo)
  })
  problem <- graph_part_problem(part, s, first, rows, k, n, id)
  if (!is.null(problem)) stop_arg("graph file '", file, "' of 'x' ", problem, redo)
  part[c("idx", "dist")]
}

# What is wrong with `part`, read from the graph file of shard s of run
# `id`, as the end of the sentence "graph file '...' ...", or NULL: it
# must have `k` columns, row numbers from 1 to n, each row first in its own
# list, finite non-negative distances and no neighbour twice; and unless
# `id` is NULL (a record of an earlier version), the stamp of
# stamp_graph(): the run's id, the shard's number and its contents'
# fingerprint.
graph_part_problem <- function(part, s, first, rows, k, n, id) {
  idx <- if (is.list(part)) part$idx
  dist <- if (is.list(part)) part$dist
  if (!is.list(part) || !is.matrix(idx) || !is.integer(idx) || !is.matrix(dist) ||
      !is.double(dist) || !identical(dim(idx), c(as.integer(rows), as.integer(k))) ||
      !identical(dim(dist), dim(idx))) {
    return(paste0("is not the graph of its shard's ", rows, " rows (list(idx, dist) of ", k,
                  " columns)"))
  }
  problem <- .graph_problem(idx, dist, FALSE, FALSE, n)
  if (problem[1] == 0 && any(idx[, 1] != first + seq_len(rows))) problem[1] <- 6
  if (problem[1] != 0) {
    return(paste0("is damaged (",
                  c("NA row numbers", "row numbers beyond the rows", "NA distances",
                    "negative distances", "infinite distances",
                    "rows that do not list themselves first", "", "",
                    "a neighbour listed twice")[problem[1]], ")"))
  }
  if (is.null(id)) return(NULL)
  if (!identical(part$run, id)) {
    return("was written by another run than the one recorded (of other data or settings)")
  }
  if (!identical(part$shard, as.integer(s))) {
    return(paste0("holds the graph of shard ", show_value(part$shard), ", not of shard ", s))
  }
  if (!identical(part$check, graph_check(idx, dist))) {
    return("is damaged (its contents changed since it was written)")
  }
  NULL
}

# A graph shard as its file holds it: list(idx, dist) with the id of the
# run that wrote it, its shard's number and the fingerprint of its contents.
stamp_graph <- function(g, id, s) {
  list(idx = g$idx, dist = g$dist, run = id, shard = as.integer(s),
       check = graph_check(g$idx, g$dist))
}

graph_check <- function(idx, dist) paste(shard_fingerprint(idx), shard_fingerprint(dist))

# Stops unless the sharded graph `graph` (argument `graph_name`) was made
# from the shard set `shards` (argument `shards_name`): the same split of
# rows and the fingerprints its run recorded. A shard whose fingerprint the
# set does not record is checked where it is read (check_graph_shard()).
check_graph_of_shards <- function(graph, shards, graph_name, shards_name) {
  if (!identical(as.double(graph$rows), as.double(shards$rows))) {
    stop_arg("'", graph_name, "' is the graph of other shards: its shards have ",
             show_count(graph$n), " rows, those of '", shards_name, "' ",
             show_count(sum(shards$rows)), " (or the rows are split otherwise)")
  }
  recorded <- graph$fingerprints
  if (!is.character(recorded) || length(recorded) != length(shards$files) || anyNA(recorded)) {
    stop_arg("'", graph_name, "' records no fingerprints of the ", length(shards$files),
             " shards it was made from (a graph of an earlier version of lsnn, or a damaged ",
             "record): compute it again from '", shards_name,
             "' with locally_scaled_knn_sharded()")
  }
  known <- which(!is.na(shards$fingerprints))
  differ <- known[shards$fingerprints[known] != recorded[known]]
  if (length(differ) > 0) graph_of_other_shards(graph_name, shards_name, shards, differ)
  invisible(graph)
}

# check_graph_of_shards() for shard s of `shards`, whose values have the
# fingerprint `fingerprint`.
check_graph_shard <- function(graph, shards, s, fingerprint, graph_name, shards_name) {
  if (!identical(graph$fingerprints[s], fingerprint)) {
    graph_of_other_shards(graph_name, shards_name, shards, s)
  }
  invisible()
}

graph_of_other_shards <- function(graph_name, shards_name, shards, differ) {
  stop_arg("'", graph_name, "' is the graph of other shards than '", shards_name, "': shard ",
           differ[1], " ('", shards$files[differ[1]], "') holds other data than the shard it ",
           "was made from",
           if (length(differ) > 1) paste0(" (and ", length(differ) - 1, " more shards)"),
           "; compute the graph of '", shards_name, "' with locally_scaled_knn_sharded()")
}

#' @method print lsnn_graph_shards
#' @export
print.lsnn_graph_shards <- function(x, ...) {
  what <- c(knn = "extended kNN", lsnn = "locally scaled (LSNN)")[[x$what]]
  cat(sprintf("lsnn %s graph in shards: %s rows x %d columns in %d files in %s\n",
              what, show_count(x$n), x$k, length(x$files),
              if (is.null(x$dir)) dirname(x$files[1]) else x$dir))
  if (!is.null(x$recall)) {
    cat("estimated recall by round:", paste(format(x$recall, digits = 4), collapse = ", "), "\n")
  }
  if (length(x$overlap) > 0) {
    cat("rows also in a second partition, by round:",
        paste0(format(100 * x$overlap), "%", collapse = ", "), "\n")
  }
  invisible(x)
}
