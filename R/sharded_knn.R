# The sharded searches as users call them: their settings
# (shard_control()), extended_knn_sharded() and locally_scaled_knn_sharded();
# the graph files they keep are read in R/graph_shards.R
# (read_graph_shards()). A run (R/shard_run.R, its tasks R/shard_tasks.R)
# computes the extended graph by the exact (R/shard_exact.R) or approximate
# (R/shard_approx.R) search, then for the LSNN its locally scaled neighbours
# (R/shard_lsnn.R).

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
#' of their second nearest, searches each partition as a task (by the
#' search `partition_search` names), and merges each row's
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
#'   worker's memory (about 4 kB per row at 67 neighbours). `NULL` (the
#'   default) chooses it from the number of rows `n` alone:
#'   `min(200000, max(25000, ceiling(n / 8)))`. Data of more than 200,000
#'   rows are thus cut into at least 8 partitions (of at most 200,000 rows),
#'   so that each partition's search is a part of the job that a run
#'   interrupted or resumed (see `out_dir`) does not redo, and 2 to 8 workers
#'   share the work evenly; data of up to 25,000 rows are one partition,
#'   whose search takes seconds. The rule does not depend on the plan or its
#'   number of workers, so the graph is the same for every plan; a number
#'   given is used as it is.
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
#' @param partition_search How the approximate search searches each
#'   partition's rows: `"auto"` (the default) as [neighbor_embedding()]
#'   chooses its search: the exact search for partitions of up to 20,000
#'   rows, above that the partitioned exact search (`nn_kind = "partition"`
#'   of [extended_knn()]) where a forecast of its work says it wins
#'   (clustered data of up to 100 columns, euclidean or cosine), and
#'   otherwise the approximate search with `nn_args`; `"partition"` or
#'   `"approx"` always that one. The exact searches give each partition's
#'   exact lists, so a round then misses only the neighbours outside a row's
#'   partitions.
#' @return A list of class `lsnn_shard_control`.
#' @seealso [extended_knn_sharded()]
#' @examples
#' shard_control(rows_per_partition = 50000)
#' @export
shard_control <- function(rows_per_partition = NULL, overlap = NULL, sample_rows = NULL,
                          recall_rows = 200, target_recall = 0.99, max_rounds = 4,
                          rows_per_task = 400000, partition_search = "auto") {
  structure(list(
    rows_per_partition = if (!is.null(rows_per_partition)) {
      check_whole(rows_per_partition, "rows_per_partition", min = 2)
    },
    rows_per_task = check_whole(rows_per_task, "rows_per_task", min = 1),
    overlap = if (is.null(overlap)) NULL else check_number(overlap, "overlap", min = 0, max = 1),
    sample_rows = if (is.null(sample_rows)) NULL else check_whole(sample_rows, "sample_rows", min = 2),
    recall_rows = check_whole(recall_rows, "recall_rows", min = 1),
    target_recall = check_number(target_recall, "target_recall", min = 0, max = 1),
    max_rounds = check_whole(max_rounds, "max_rounds", min = 1),
    partition_search = check_choice(partition_search, "partition_search",
                                    c("auto", "partition", "approx"))
  ), class = "lsnn_shard_control")
}

# The rows per partition of the approximate search of n rows: the
# control's, or by default a share of n (at least 8 partitions above
# 200,000 rows, none below 25,000 rows; see ?shard_control). It depends on
# n alone, never on the plan, so the graph is the same for every plan.
partition_rows <- function(control, n) {
  if (!is.null(control$rows_per_partition)) return(control$rows_per_partition)
  min(200000, max(25000, ceiling(n / 8)))
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
#' With `nn_kind = "approx"` the rows are partitioned with overlap, each
#' partition is searched as a task (by the partitioned exact search where it
#' wins, else the approximate one: `shard_control(partition_search = )`),
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
#' (whose graph files carry no run id) is not resumed. A task that fails
#' gives an R error naming it; no graph is returned from a run that did not
#' finish.
#'
#' A resumed run first reads the graph files it would reuse (each shard's
#' extended graph, with its local scales, and its LSNN), as tasks of the
#' current plan: each must be readable, of its shard's shape, stamped with
#' the run's id and its shard's number, and hold the contents it was written
#' with (see [read_graph_shards()]). A damaged file is deleted, a message
#' names it, and the run computes it again: that shard's files alone for the
#' exact search and the LSNN; for the approximate search every extended
#' graph file (the last round made them all), by the same seed, so that
#' the graph is the one the run would have returned.
#'
#' **The directory.** `out_dir` is kept as an absolute path, so that a
#' relative one still names the run after [setwd()]. The run's directory is
#' self-contained: its record `complete.rds` names the graph files relative
#' to it, and each file carries the run's id, so that the directory can be
#' moved or copied and read with [read_graph_shards()] or given as
#' [neighbor_embedding()]'s `nn_method` from its new place, and files of
#' another run are never read as its own.
#'
#' @param shards The data: an `lsnn_shards` object from [write_shards()] or
#'   [shard_set()], or a directory of shards.
#' @inheritParams extended_knn
#' @param nn_kind `"exact"` or `"approx"` (see [extended_knn()]).
#' @param nn_args Settings of the approximate search of each partition: the
#'   result of [approx_control()], or a list of some of its arguments. The
#'   default asks for more candidates and trees than [extended_knn()]'s,
#'   which costs little more per partition and saves a second round (which
#'   would cost as much as the first) on data whose clusters are dense.
#' @param n_threads Number of threads of each task; `NULL` (the default):
#'   [default_n_threads()] divided among the workers of [future::plan()].
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
#'   graph with [read_graph_shards()]): its directory `dir`, its graph
#'   `files` (absolute paths), the `rows` of each shard, the number of rows
#'   `n` and of columns `k`, the run's id `run` and the `fingerprints` of the
#'   shards it was made from (see [write_shards()]), which
#'   [neighbor_embedding()] checks against its `X`; its element `tasks` is a data frame of
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
                                 metric = "euclidean", out_dir = NULL, n_threads = NULL,
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
#' fingerprints) and settings, the graph files it reuses checked first and
#' damaged ones computed again. The result records the shards'
#' fingerprints: [neighbor_embedding()] lays out the graph only with the
#' shards it was made from.
#'
#' **Counting neighbours.** As in [locally_scaled_knn()] (and uwot),
#' `n_neighbors` counts the row itself: the graph has `n_neighbors`
#' columns, the row and `n_neighbors - 1` others, chosen among the
#' `n_neighbors + n_extra` nearest other rows of the extended graph (which
#' therefore has `n_neighbors + n_extra + 1` columns, as
#' `extended_knn_sharded(shards, n_neighbors, n_extra)` gives it). PaCMAP
#' and LocalMAP lay out `n_neighbors - 1` near pairs per point from it: for
#' the number of their rule at n rows (see [neighbor_embedding()], "PaCMAP
#' and LocalMAP"), give that number plus one.
#'
#' @inheritParams extended_knn_sharded
#' @inheritParams locally_scaled_knn
#' @param n_neighbors Number of neighbours to return per row, the row itself
#'   included (as [locally_scaled_knn()] and uwot count them); capped at
#'   `n - 1`.
#' @param n_extra Extra neighbours searched beyond `n_neighbors` to choose
#'   from (50, as in PaCMAP).
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
                                       out_dir = NULL, n_threads = NULL, verbose = FALSE,
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

# The extended graph of a run, one file per shard, unless it is there.
knn_graph_phase <- function(run) {
  if (all(file.exists(shard_paths(run, "graph")))) return(invisible())
  if (run$nn_kind == "exact") exact_phase(run) else approx_phase(run)
}
