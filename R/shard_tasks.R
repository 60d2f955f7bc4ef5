# The tasks of a sharded search (R/shard_run.R): futures of the user's
# future::plan(), the rule by which a resumed run skips those done, and
# the records of the tasks run.

# ---- tasks ----

# A task is one future's work, made by shard_task():
#   name     names it in progress reports, errors and the records
#   out      the files it writes (a named vector where it writes several
#            kinds)
#   input    what it reads: shard subsets, file names, row numbers, seeds;
#            it travels to the worker, so it holds no large objects
#   done_if  NULL, or for each file of `out` a later result made from it
#            (which may have deleted it)
# Its function is fun(input, out, run): it reads `input`, writes every file
# of `out` and returns c(read = bytes, written = bytes); `run` holds the
# settings of the run (worker_run()). A task draws nothing from R's
# generator: its random steps take seeds from its input (task_seed()).
shard_task <- function(name, out, input, done_if = NULL) {
  list(name = name, out = out, input = input, done_if = done_if)
}

# The resume rule. Every file of a run is written under a temporary name and
# renamed (save_atomic()), so a file that exists is whole: a task is done
# when each file of its `out` exists, or the file of `done_if` in its place
# (a later result that consumed it). A phase whose results exist is skipped
# by the same rule, and a resumed run runs only the tasks not done.
task_done <- function(task) {
  done <- file.exists(task$out)
  if (!is.null(task$done_if)) done <- done | file.exists(task$done_if)
  all(done)
}

# The run's settings that its tasks use (no large objects).
worker_run <- function(run) run[c("k", "metric", "nn_args", "lsnn", "n_threads", "simd", "id")]

# Runs the tasks not yet done (task_done()) as futures of the current plan,
# reporting progress per finished task; a task that fails, or whose worker
# dies, stops the run with an error naming it. Each task run adds a row to
# the run's records (tasks.rds).
run_tasks <- function(run, phase, tasks, fun) {
  todo <- Filter(Negate(task_done), tasks)
  if (run$verbose && length(tasks) > 0) {
    before <- length(tasks) - length(todo)
    cli::cli_inform(c(i = "{phase}: {length(todo)} task{?s} to run{if (before > 0) paste0(', ', before, ' done before') else ''}"))
  }
  if (length(todo) == 0) return(invisible())
  start <- Sys.time()
  bar <- if (run$verbose) {
    cli::cli_progress_bar(phase, total = length(todo), clear = FALSE, .envir = environment())
  }
  worker <- worker_run(run)
  records <- vector("list", length(todo))
  pending <- list()
  # (an interrupt, or a task's error, leaves futures running that nobody
  # will collect: their workers are stopped, so that they do not compute on)
  finished <- FALSE
  on.exit(if (!finished) stop_futures(pending), add = TRUE)
  hook <- getOption("lsnn.task_done_hook")
  collect <- function(wait) {
    repeat {
      # (a worker that died makes resolved() itself fail)
      state <- lapply(pending, function(f) tryCatch(future::resolved(f), error = function(e) e))
      for (id in names(pending)[vapply(state, function(x) !isFALSE(x), logical(1))]) {
        res <- if (inherits(state[[id]], "error")) state[[id]] else {
          tryCatch(future::value(pending[[id]]), error = function(e) e)
        }
        pending[[id]] <<- NULL
        name <- todo[[as.integer(id)]]$name
        if (inherits(res, "error")) {
          stop("task '", name, "' failed: ", conditionMessage(res), call. = FALSE)
        }
        records[[as.integer(id)]] <<- data.frame(phase = phase, task = name, res,
                                                 stringsAsFactors = FALSE)
        if (!is.null(bar)) cli::cli_progress_update(id = bar)
        if (is.function(hook)) hook(name)
      }
      if (!wait || length(pending) == 0) return(invisible())
      Sys.sleep(0.02)
    }
  }
  for (i in seq_along(todo)) {
    # (a quoted call: the worker's globals are exactly these)
    pending[[as.character(i)]] <- future::future(
      quote(run_task(fun, task, run)), substitute = FALSE,
      globals = list(run_task = run_task, fun = fun, task = todo[[i]], run = worker),
      packages = "lsnn", seed = FALSE, lazy = FALSE
    )
    collect(wait = FALSE)
  }
  collect(wait = TRUE)
  finished <- TRUE
  if (!is.null(bar)) cli::cli_progress_done(id = bar)
  add_records(run, do.call(rbind, records))
  if (run$verbose) {
    cli::cli_inform(c(v = sprintf("%s: %d tasks in %.1f s", phase, length(todo),
                                  as.numeric(difftime(Sys.time(), start, units = "secs")))))
  }
  invisible()
}

# Stops the futures of `futures` that are still running when a run stops
# before its end (the user's interrupt, or a task's error): the worker
# processes of those on this machine (multisession, multicore and local
# cluster workers) are ended, and the plan is set again, so that it starts
# fresh workers in their place and stays usable. Without this a worker
# computes its task to the end (minutes, at large data) and the next future
# waits for it. Futures of other backends (remote workers, a scheduler's
# jobs) are left to finish; their results are not read. Every file a task
# writes is written under a temporary name and renamed, so a task stopped
# midway leaves no file that a resumed run would take as done.
stop_futures <- function(futures) {
  stopped <- 0L
  for (f in futures) {
    running <- tryCatch(!future::resolved(f), error = function(e) FALSE)
    if (!isTRUE(running)) next
    stopped <- stopped + tryCatch({
      if (inherits(f, "ClusterFuture") && inherits(f$workers, "cluster")) {
        # (a worker of this machine: the process it reported when it started)
        info <- f$workers[[f$node]]$session_info
        pid <- info$process$pid
        here <- identical(info$system$nodename, Sys.info()[["nodename"]])
        if (here && is.numeric(pid) && length(pid) == 1 && pid != Sys.getpid()) {
          as.integer(isTRUE(tools::pskill(pid, tools::SIGTERM)))
        } else 0L
      } else if (inherits(f, "MulticoreFuture") && is.numeric(f$job$pid)) {
        as.integer(isTRUE(tools::pskill(f$job$pid, tools::SIGTERM)))
      } else 0L
    }, error = function(e) 0L)
  }
  if (stopped > 0L) {
    stack <- future::plan("list")
    tryCatch(suppressWarnings(future::plan(stack, substitute = FALSE, .skip = FALSE)),
             error = function(e) NULL)
  }
  invisible(stopped)
}

# What a worker runs: the task with the run's choice of kernels, timed, with
# the bytes it read and wrote and its process's peak memory. R's generator
# is left as it was (with_seed(NULL)): the glue's entry points create its
# state on a fresh worker, which futures would report as random numbers
# drawn.
run_task <- function(fun, task, run) {
  old <- options(lsnn.simd = run$simd)
  on.exit(options(old), add = TRUE)
  with_seed(NULL, {
    started <- as.numeric(Sys.time())
    start <- proc.time()[["elapsed"]]
    io <- fun(task$input, task$out, run)
    data.frame(started = started, seconds = proc.time()[["elapsed"]] - start,
               bytes_read = io[["read"]], bytes_written = io[["written"]],
               peak_memory = peak_memory(), pid = Sys.getpid())
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

# The records of the tasks run: one row per task (phase, name, when it
# started, seconds, bytes read and written, peak memory, process), appended
# to tasks.rds.
add_records <- function(run, rows) {
  file <- run_path(run, "tasks")
  old <- if (file.exists(file)) readRDS(file)
  save_atomic(rbind(old, rows), file)
}
