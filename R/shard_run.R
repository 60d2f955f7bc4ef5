# How a sharded search runs: its directory, its record (what it computes
# and its seed), the rule by which a resumed run skips what is done, and
# its end. Its tasks, futures of the user's future::plan(), are in
# R/shard_tasks.R; the searches' phases in R/shard_exact.R,
# R/shard_approx.R and R/shard_lsnn.R.

# ---- the directory of a run ----

# Every file of a run, under its directory (`out_dir`, or a temporary one):
# numbers fill the %d (shards, rounds, partitions, groups of shards), a
# shard's zero-padded number the %s (shard_paths()). work/ holds what tasks
# pass on to later tasks; it is removed when the run finishes.
run_layout <- c(
  run = "run.rds",                  # what the run computes, and its seed
  tasks = "tasks.rds",              # a row per task run (run_tasks())
  complete = "complete.rds",        # written last: the finished result
  graph = "knn/graph-%s.rds",       # the extended graph of a shard's rows
  sigma = "knn/sigma-%s.rds",       # their local scales (LSNN runs)
  lsnn = "lsnn/lsnn-%s.rds",        # the locally scaled graph of a shard's rows
  # the exact search: shard q's list over shard r (or the group from r), and
  # each row's k-th distance within its own shard
  exact_part = "work/exact-%d-%d.rds",
  bound = "work/bound-%d.rds",
  # the approximate search: the sampled rows' true neighbours with the
  # recall and overlap by round, and each round's files
  recall = "recall.rds",
  recall_part = "work/recall-%d.rds",
  round = "work/round-%d",
  centres = "work/round-%d/centres.rds",
  assigned = "work/round-%d/assigned-%d.rds",
  overlap = "work/round-%d/overlap.rds",
  bucket = "work/round-%d/bucket-%d-%d.rds",
  edge = "work/round-%d/edge-%d-%d.rds",
  cand = "work/round-%d/cand-%d-%d.rds",
  searched = "work/round-%d/searched-%d.rds",
  round_graph = "work/round-%d/graph-%s.rds",
  round_sigma = "work/round-%d/sigma-%s.rds",
  found = "work/round-%d/found-%s.rds",
  # the LSNN: the scales' exchange between shards and groups of shards
  groups = "work/scales/groups.rds",
  request = "work/scales/request-%d-%d.rds",
  answer = "work/scales/answer-%d-%d.rds"
)

# The file of a run of kind `kind` (run_layout), the numbers in `...`
# (vectors give one file each).
run_path <- function(run, kind, ...) file.path(run$dir, sprintf(run_layout[[kind]], ...))

# The files of kind `kind` of shards s (all by default): `...` holds the
# numbers before the shard's (a round).
shard_paths <- function(run, kind, ..., s = seq_along(run$shards$files)) {
  width <- max(5, nchar(length(run$shards$files)))
  run_path(run, kind, ..., sprintf("%0*d", width, as.integer(s)))
}

# A shard's graph and, in LSNN runs, its rows' local scales (written
# together by write_graph_shard()); of a round's graph with `round`.
graph_out <- function(run, s, round = NULL) {
  if (is.null(round)) {
    c(graph = shard_paths(run, "graph", s = s),
      sigma = if (!is.null(run$lsnn)) shard_paths(run, "sigma", s = s))
  } else {
    c(graph = shard_paths(run, "round_graph", round, s = s),
      sigma = if (!is.null(run$lsnn)) shard_paths(run, "round_sigma", round, s = s))
  }
}

# ---- a run: its settings, its record and its end ----

# The threads of each task when `n_threads` is NULL: this machine's share
# per worker of the plan, so that the workers of a multicore or
# multisession plan do not ask for more threads than there are cores (a
# scheduler's plan, of unbounded workers, gives each task the default).
shard_task_threads <- function() {
  workers <- future::nbrOfWorkers()
  if (!is.finite(workers) || workers < 1) return(default_n_threads())
  max(1L, as.integer(default_n_threads() %/% workers))
}

sharded_run <- function(shards, n_neighbors, n_extra, nn_kind, metric, out_dir, n_threads,
                        verbose, nn_args, control, lsnn) {
  shards <- as_shard_set(shards)
  n_neighbors <- check_whole(n_neighbors, "n_neighbors", min = 1, clamp = TRUE)
  n_extra <- check_whole(n_extra, "n_extra", min = 0, clamp = TRUE)
  nn_kind <- check_choice(nn_kind, "nn_kind", c("exact", "approx"))
  metric <- check_choice(metric, "metric", knn_metrics)
  n_threads <- if (is.null(n_threads)) shard_task_threads() else check_n_threads(n_threads)
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
  # (absolute: the run's record and its result name it after a setwd())
  if (keep) {
    out_dir <- normalizePath(make_dir(check_dir_name(out_dir, "out_dir"), "out_dir"),
                             mustWork = TRUE)
  }
  # every shard read once: its rows, columns, values and fingerprint
  shards <- check_shard_values(shards, binary = metric == "hamming")
  if (!keep) out_dir <- tempfile("lsnn-shards-")
  for (dir in c(out_dir, file.path(out_dir, c("knn", "work", if (!is.null(lsnn)) "lsnn")))) {
    make_dir(dir, "out_dir")
  }
  # (`format` tells a directory of this version's files and seeds from an
  # earlier version's, which it cannot resume; format 5 stamps its graph
  # files with the run's id)
  settings <- list(format = 5L, fingerprints = shards$fingerprints, k = k, nn_kind = nn_kind,
                   metric = metric, nn_args = unclass(nn_args), control = unclass(control),
                   lsnn = lsnn)
  # (the arguments as given, which the record keeps beside the settings so
  # that a resume refused names the one that changed)
  given <- list(n_neighbors = n_neighbors, n_extra = n_extra)
  record <- open_run_record(out_dir, settings, shards, given)
  # Tasks run with this process's choice of kernels (an option would not
  # reach a worker otherwise).
  run <- list(shards = shards, k = k, nn_kind = nn_kind, metric = metric, nn_args = nn_args,
              control = control, lsnn = lsnn, dir = out_dir, keep = keep, seed = record$seed,
              id = record$id, n_threads = n_threads, verbose = verbose, simd = simd_option())
  if (record$resumed) check_run_outputs(run)
  run
}

# The record of the run in `dir`: list(seed, id, resumed). A new run draws
# its seed with draw_seed() (the approximate search only: the exact one
# draws nothing) and its id (new_run_id()), and records both with the
# settings and the shards' fingerprints, so that a resumed run continues
# the same computation on the same data; a run already there is resumed
# only if both match, else an error says which shard or setting differs.
open_run_record <- function(dir, settings, shards, given = NULL) {
  record <- file.path(dir, run_layout[["run"]])
  if (!file.exists(record)) {
    seed <- if (settings$nn_kind == "approx") draw_seed() else c(0L, 0L)
    id <- new_run_id(settings$fingerprints)
    save_atomic(list(settings = settings, seed = seed, id = id, given = given), record)
    return(list(seed = seed, id = id, resumed = FALSE))
  }
  old <- tryCatch(readRDS(record), error = function(e) NULL)
  problem <- record_mismatch(old$settings, settings, shards, old$given, given)
  if (is.null(problem) && !(is.character(old$id) && length(old$id) == 1 && !is.na(old$id))) {
    problem <- "whose record is damaged (it has no id)"
  }
  if (!is.null(problem)) {
    stop_arg("'out_dir' (", dir, ") holds a run ", problem,
             "; to start afresh, delete it or give another 'out_dir'")
  }
  list(seed = old$seed, id = old$id, resumed = TRUE)
}

# A run's id: 16 hexadecimal digits that stamp its graph files, so that a
# file of another run (a directory copied, moved or reused) is never read
# as one of this run's. Made from the clock, the process and the shards'
# fingerprints, without R's generator (tempfile() draws its name without
# it).
new_run_id <- function(fingerprints) {
  stamp <- paste(format(Sys.time(), "%Y-%m-%d %H:%M:%OS6"), Sys.getpid(),
                 basename(tempfile("")), paste(fingerprints, collapse = " "))
  .matrix_fingerprint(matrix(as.double(utf8ToInt(stamp)), 1))
}

# The outputs a resumed run would reuse (each shard's extended graph and
# local scales, and its LSNN), read and checked as tasks of the current
# plan: each must be readable, of the right shape, stamped with this run's
# id and shard and hold the contents it was written with. A damaged one is
# deleted with a message, so that the run computes it again: a shard's
# files alone for the exact search and the LSNN, every extended graph file
# for the approximate search (whose last round made them all; the same
# seed makes them again, identical).
check_run_outputs <- function(run) {
  S <- length(run$shards$files)
  files <- list(graph = shard_paths(run, "graph"),
                sigma = if (!is.null(run$lsnn)) shard_paths(run, "sigma"),
                lsnn = if (!is.null(run$lsnn)) shard_paths(run, "lsnn"))
  offsets <- shard_offsets(run$shards)
  found <- future.apply::future_lapply(seq_len(S), function(s, files, rows, first, n, k, k_lsnn,
                                                            id) {
    graph <- output_problem(files$graph[s], s, first[s], rows[s], k, n, id)
    if (is.null(graph) && !is.null(files$sigma)) graph <- sigma_problem(files$sigma[s], rows[s])
    lsnn <- if (!is.null(files$lsnn)) output_problem(files$lsnn[s], s, first[s], rows[s], k_lsnn, n, id)
    c(graph = if (is.null(graph)) "" else graph, lsnn = if (is.null(lsnn)) "" else lsnn)
  }, files = files, rows = run$shards$rows, first = offsets, n = run$shards$n, k = run$k,
  k_lsnn = run$lsnn$n_neighbors, id = run$id, future.seed = NULL, future.packages = "lsnn")
  problems <- do.call(rbind, found)
  for (kind in c("graph", "lsnn")) {
    bad <- which(problems[, kind] != "")
    if (length(bad) == 0) next
    message("graph file '", files[[kind]][bad[1]], "' of 'out_dir' ", problems[bad[1], kind],
            if (length(bad) > 1) paste0(" (and ", length(bad) - 1, " more files)"),
            ": computing ", if (length(bad) > 1) "them" else "it", " again")
    if (kind == "graph" && run$nn_kind == "approx") {
      # (every round's files go with the graph: the search starts afresh)
      unlink(c(files$graph, files$sigma, run_path(run, "recall")))
      unlink(file.path(run$dir, "work"), recursive = TRUE)
      make_dir(file.path(run$dir, "work"), "out_dir")
    } else {
      unlink(c(files[[kind]][bad], if (kind == "graph") files$sigma[bad]))
    }
  }
  invisible()
}

# What is wrong with the output file of shard s of a run (a graph of k
# columns, read_graph_part()), as the end of the sentence "graph file
# '...' ...", or NULL; NULL too where it does not exist (the run computes
# it).
output_problem <- function(file, s, first, rows, k, n, id) {
  if (!file.exists(file)) return(NULL)
  part <- tryCatch(readRDS(file), error = function(e) e)
  if (inherits(part, "error")) return(paste0("cannot be read (", conditionMessage(part), ")"))
  graph_part_problem(part, s, first, rows, k, n, id)
}

# What is wrong with the local scales of a shard's rows (written with its
# extended graph in LSNN runs), as output_problem() says it, or NULL.
sigma_problem <- function(file, rows) {
  if (!file.exists(file)) return("has lost the local scales written with it")
  sigma <- tryCatch(readRDS(file), error = function(e) NULL)
  if (!is.double(sigma) || length(sigma) != rows || !all_finite(sigma) ||
      any(sigma < min_local_scale)) {
    return(paste0("has damaged local scales ('", file, "')"))
  }
  NULL
}

# How the recorded settings `was` differ from `now`, as the end of the
# sentence "'out_dir' holds a run ...", or NULL: a changed setting is named
# with its recorded and given values. `given_was` and `given_now` are the
# arguments n_neighbors and n_extra as given (NULL in the record of a run
# begun before they were recorded).
record_mismatch <- function(was, now, shards, given_was = NULL, given_now = NULL) {
  if (!identical(was$format, now$format)) {
    return("begun by another version of lsnn, which this one cannot resume")
  }
  if (length(was$fingerprints) != length(now$fingerprints)) {
    return(paste0("made for ", length(was$fingerprints), " shards, and 'shards' has ",
                  length(now$fingerprints)))
  }
  changed <- which(was$fingerprints != now$fingerprints)
  if (length(changed) > 0) {
    return(paste0("made for other data: shard ", changed[1], " ('", shards$files[changed[1]],
                  "') has changed since the run began",
                  if (length(changed) > 1) paste0(" (and ", length(changed) - 1, " more shards)")))
  }
  if (is.null(was$lsnn) != is.null(now$lsnn)) {
    return(paste0("of ", if (is.null(was$lsnn)) "extended_knn_sharded()" else
      "locally_scaled_knn_sharded()"))
  }
  differ <- names(now)[!mapply(identical, was[names(now)], now)]
  if (length(differ) == 0) return(NULL)
  changes <- unique(unlist(lapply(differ, function(setting) {
    setting_changes(setting, was[[setting]], now[[setting]], given_was, given_now)
  })))
  paste0("with other settings: ", paste(changes, collapse = "; "))
}

# The changes of one recorded setting of a run (settings of sharded_run()),
# each as "argument (recorded x, given y)".
setting_changes <- function(setting, was, now, given_was, given_now) {
  change <- function(arg, a, b) {
    if (identical(a, b)) return(NULL)
    paste0(arg, " (recorded ", show_setting(a), ", given ", show_setting(b), ")")
  }
  each <- function(prefix, a, b) {
    keys <- union(names(a), names(b))
    out <- unlist(lapply(keys, function(key) change(paste0(prefix, key), a[[key]], b[[key]])))
    if (length(out) == 0) change(sub("\\$$", "", prefix), a, b) else out
  }
  switch(setting,
    # (the graph's columns: n_neighbors + n_extra + 1, within the rows)
    k = {
      out <- if (is.list(given_was) && is.list(given_now)) {
        unlist(lapply(c("n_neighbors", "n_extra"), function(arg) {
          change(arg, given_was[[arg]], given_now[[arg]])
        }))
      }
      if (length(out) > 0) out else
        paste0("n_neighbors + n_extra (a graph of ", show_setting(was), " columns recorded, ",
               "of ", show_setting(now), " given)")
    },
    lsnn = c(change("n_neighbors", was$n_neighbors, now$n_neighbors),
             change("scale_from", was$scale[[1]], now$scale[[1]]),
             change("scale_to", was$scale[[2]], now$scale[[2]])),
    nn_args = each("nn_args$", was, now),
    control = each("control$", was, now),
    change(setting, was, now))
}

# A recorded or given setting as the resume error shows it.
show_setting <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.numeric(x) && length(x) == 1 && !is.na(x)) {
    return(if (x == round(x) && abs(x) < 1e15) show_count(x) else format(x, digits = 15))
  }
  if (is.character(x) && length(x) == 1) return(paste0('"', x, '"'))
  paste(deparse(x, width.cutoff = 60L), collapse = " ")
}

# The seed of one random step of a run: derive_seed() of the run's seed, the
# kind of step (seed_steps) and its numbers (round, partition), so that the
# step draws the same numbers whichever worker runs it and in whatever
# order, and again when the run is resumed.
task_seed <- function(run, step, ...) derive_seed(run$seed, seed_steps[[step]], ...)

seed_steps <- c(recall_rows = 1, round_sample = 2, kmeans_start = 3, kmeans_split = 4,
                partition_search = 5)

# The result of a finished run: the graph (a temporary run, whose directory
# is removed), or the description of its graph files, saved last as
# complete.rds with the files' names relative to the run's directory
# (graph_shards_record()).
finish_run <- function(run, what) {
  files <- shard_paths(run, if (what == "knn") "graph" else "lsnn")
  k <- if (what == "knn") run$k else run$lsnn$n_neighbors
  described <- function(what, files, k) {
    structure(list(what = what, dir = run$dir, files = files, rows = run$shards$rows,
                   n = run$shards$n, k = k, run = run$id, fingerprints = run$shards$fingerprints),
              class = "lsnn_graph_shards")
  }
  if (!run$keep) {
    on.exit(unlink(run$dir, recursive = TRUE))
    return(read_graph_shards(described(what, files, k)))
  }
  tasks_file <- run_path(run, "tasks")
  recall_file <- run_path(run, "recall")
  recall <- if (file.exists(recall_file)) readRDS(recall_file)
  unlink(file.path(run$dir, "work"), recursive = TRUE)
  out <- described(what, files, k)
  out[c("tasks", "recall", "overlap")] <-
    list(if (file.exists(tasks_file)) readRDS(tasks_file), recall$by_round, recall$overlap)
  if (what == "lsnn") {
    out$knn <- out
    out$knn$what <- "knn"
    out$knn$files <- shard_paths(run, "graph")
    out$knn$k <- run$k
  }
  save_atomic(graph_shards_record(out), run_path(run, "complete"))
  out
}

# An lsnn_graph_shards object as complete.rds keeps it: its files named
# relative to its directory, which is not recorded (the directory read is
# the one they are in: as_graph_shards()).
graph_shards_record <- function(x) {
  relative <- function(g) {
    g$files <- substring(g$files, nchar(g$dir) + 2L)
    g$dir <- NULL
    g$relative <- TRUE
    g
  }
  x <- relative(x)
  if (!is.null(x$knn)) x$knn <- relative(x$knn)
  x
}
