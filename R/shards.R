# Data held on disk in row shards: the shard sets (write_shards(),
# shard_set(), check_shards()), the reading of a shard as every task reads
# it (its rows, columns and fingerprint checked) and the whole-or-absent
# writing of every file of a sharded run (save_atomic()). The searches over
# the shards are in R/sharded_knn.R; how they run, in R/shard_run.R and
# R/shard_tasks.R.

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

# A count as users read it: 300,000 (never 3e+05), whether it is held as
# an integer or a double.
show_count <- function(x) format(x, big.mark = ",", scientific = FALSE, trim = TRUE)

#' @method print lsnn_shards
#' @export
print.lsnn_shards <- function(x, ...) {
  cat(sprintf("lsnn shards: %s rows x %d columns in %d files (%s rows per shard) in %s\n",
              show_count(x$n), x$n_col, length(x$files),
              paste(show_count(unique(range(x$rows))), collapse = " to "),
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
    stop("shard file '", file, "' has ", show_count(nrow(x)), " rows, the set says ",
         show_count(shards$rows[i]),
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

# Rows of a shard set by global number, in that order, read shard by shard
# as tasks of the current plan.
gather_rows <- function(shards, rows) {
  offsets <- shard_offsets(shards)
  shard_of <- findInterval(rows, offsets + 0.5)
  used <- sort(unique(shard_of))
  parts <- future.apply::future_lapply(used, function(s, shards, local) {
    read_shard(shards, s)[local[[as.character(s)]], , drop = FALSE]
  }, shards = shards,
  local = split(rows - offsets[shard_of], shard_of), future.seed = NULL,
  future.packages = "lsnn")
  x <- do.call(rbind, parts)
  x[order(order(shard_of, rows)), , drop = FALSE]
}
