# The partitioned exact search (nn_kind = "partition"; the core's
# inst/include/lsnn/knn/partition_knn.h).

# The searches extended_knn() and the functions that call it run.
nn_kinds <- c("exact", "approx", "partition")

#' Settings of the partitioned exact search
#'
#' Tuning parameters of `nn_kind = "partition"` in [extended_knn()] and
#' [locally_scaled_knn()], passed as their `nn_args` argument. They change
#' the time the search takes, never its result, which is the exact graph.
#'
#' The rows are split into about `n / rows_per_partition` partitions by
#' k-means: on a random sample of rows (40 a partition, at least 8,192 and
#' at most 131,072, or all of them), centres drawn by k-means++ (each next one a sample row
#' drawn with probability proportional to its squared distance to the
#' nearest centre so far) and moved by `n_iters` of Lloyd's iterations; then
#' every row goes to its nearest centre. Rows more than twice their
#' partition's mean distance from its centre (rows between the clusters, say)
#' are taken out and partitioned apart the same way, so that they do not
#' widen the partitions they fell in. The bound can skip a partition only
#' when it holds no cluster that also has rows elsewhere, so the partitions
#' should outnumber the data's clusters; smaller partitions cost more tests
#' and smaller matrix products, and each should hold well over
#' `n_neighbors + n_extra` rows.
#'
#' @param rows_per_partition The rows a partition holds on average (default
#'   1024). With fewer than `1.5 * rows_per_partition` rows, or for data the
#'   search does not serve (see [extended_knn()]), the exact search runs.
#' @param n_iters Lloyd's iterations of the k-means (default 5; 0 keeps the
#'   k-means++ centres).
#' @return A list of class `lsnn_partition_control` with the two settings.
#' @seealso [extended_knn()], [approx_control()]
#' @examples
#' partition_control()
#' X <- as.matrix(iris[, 1:4])
#' g <- extended_knn(X, 10, 5, nn_kind = "partition",
#'                   nn_args = partition_control(rows_per_partition = 30))
#' identical(g, extended_knn(X, 10, 5, nn_kind = "exact"))
#' @export
partition_control <- function(rows_per_partition = 1024, n_iters = 5) {
  out <- list(
    rows_per_partition = check_whole(rows_per_partition, "rows_per_partition", min = 1,
                                     max = big_int),
    n_iters = check_whole(n_iters, "n_iters", min = 0, max = 1000)
  )
  structure(out, class = "lsnn_partition_control")
}

#' @method print lsnn_partition_control
#' @export
print.lsnn_partition_control <- function(x, ...) {
  cat("lsnn partitioned search settings:\n")
  cat(paste0("  ", format(names(x)), " ", vapply(x, format, character(1)), collapse = "\n"), "\n")
  invisible(x)
}

# nn_args as given to extended_knn() with nn_kind = "partition": the output
# of partition_control() or a list of its arguments. The default nn_args,
# approx_control()'s settings, are not this search's: its defaults apply.
check_partition_control <- function(nn_args) {
  if (inherits(nn_args, "lsnn_partition_control")) return(nn_args)
  if (is.null(nn_args) || inherits(nn_args, "lsnn_approx_control")) return(partition_control())
  if (!is.list(nn_args) || (length(nn_args) > 0 && is.null(names(nn_args))) ||
      any(names(nn_args) == "")) {
    stop_arg("'nn_args' must be the result of partition_control() or a named list of its ",
             "arguments (nn_kind = \"partition\")")
  }
  known <- names(formals(partition_control))
  unknown <- setdiff(names(nn_args), known)
  if (length(unknown) > 0) {
    stop_arg("'nn_args' has unknown settings for nn_kind = \"partition\": ",
             paste(unknown, collapse = ", "), " (known: ", paste(known, collapse = ", "), ")")
  }
  do.call(partition_control, nn_args)
}

# The partitioned search on prepared data (see prepare_data()), from a seed
# of draw_seed()'s form: the exact graph. Metrics other than euclidean and
# cosine, sparse data and the rest listed in ?extended_knn run the exact
# search (said under verbose). The search's counts, attribute
# "partition_stats" of .partition_knn()'s graph, are kept with `stats = TRUE`
# (the tests read them) and said under verbose.
partition_knn <- function(data, k, metric, n_threads, verbose, control, seed, stats = FALSE) {
  if (verbose && (data$kind != "dense" || !metric %in% c("euclidean", "cosine"))) {
    message("partition kNN: ", if (data$kind != "dense") "sparse data" else
      paste0("metric = \"", metric, "\""), ": the exact search runs")
  }
  graph <- .partition_knn(data, k, metric, control$rows_per_partition, control$n_iters, seed,
                          n_threads, verbose, simd_option())
  if (!stats) attr(graph, "partition_stats") <- NULL
  graph
}
