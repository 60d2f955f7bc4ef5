#' Deprecated: the former name of neighbor_embedding()
#'
#' `embed()` was renamed [neighbor_embedding()] in lsnn 0.1.0, so that
#' attaching lsnn no longer hides `stats::embed()`. The old name stays for
#' one release and then goes. It also answers for `stats::embed()`: a call
#' in that function's style (a vector or time series `x`, or a number as
#' second argument or `dimension`) goes to `stats::embed()` unchanged, so
#' code that uses the time-series function keeps working with lsnn attached.
#' Any other call runs [neighbor_embedding()] with a deprecation warning; a
#' graph given as the first argument or as `nn` is passed on as `nn_method`.
#'
#' @param x,dimension,... A call to `stats::embed()` (`x` a vector, time
#'   series or matrix, `dimension` a number), or a call to the former
#'   `embed()`: the data or a graph, the method, and
#'   [neighbor_embedding()]'s arguments (`nn` for `nn_method`).
#' @return What `stats::embed()` or [neighbor_embedding()] returns.
#' @examples
#' # the time-series function, unchanged
#' embed(1:5, 2)
#' # the former name of neighbor_embedding(), with a warning
#' X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
#' Y <- suppressWarnings(embed(X, "tsne", perplexity = 15, max_iter = 100))
#' @keywords internal
#' @export
embed <- function(x, dimension = 1, ...) {
  if (embed_stats_style(x, dimension, missing(x), missing(dimension), ...length())) {
    return(stats::embed(x, dimension))
  }
  .Deprecated("neighbor_embedding", package = "lsnn",
              msg = paste0("lsnn's embed() is deprecated: use neighbor_embedding() ",
                           "(graphs go in its 'nn_method' argument). For the time-series ",
                           "function call stats::embed()."))
  args <- list(...)
  if (!is.null(args$nn)) {
    args$nn_method <- args$nn
    args$nn <- NULL
  }
  if (!missing(x)) args$X <- x
  if (!missing(dimension)) args$method <- dimension
  if (is_graph(args$X)) {
    if (!is.null(args$nn_method)) stop_arg("give a graph as 'x' or as 'nn', not both")
    args$nn_method <- args$X
    args$X <- NULL
  }
  do.call(neighbor_embedding, args)
}

# stats::embed(x, dimension) takes a vector, time series or matrix and a
# whole number; lsnn's former embed() took data or a graph and a method name.
embed_stats_style <- function(x, dimension, x_missing, dimension_missing, n_dots) {
  if (x_missing || n_dots > 0 || !is.numeric(dimension)) return(FALSE)
  if (!dimension_missing) return(TRUE)
  (is.atomic(x) && is.null(dim(x))) || stats::is.ts(x)
}

# library() reports each exported name that hides another on the search path,
# unless the attached package environment holds an object `.conflicts.OK`.
# R drops that name from a namespace's exports, so .onAttach puts it there
# (the environment is still open then; R itself adds `.Depends` at that
# point). lsnn's one masking object by design is the deprecated embed()
# above, which forwards stats-style calls to stats::embed(); every other
# clash (say, neighbor_overlap() with rnndescent's) is still reported, here,
# as library() would. Under options(conflicts.policy = "strict") library()
# checks regardless and stops on embed unless it is allowed with `mask.ok`.
# All of this goes with embed() in the next release.
.onAttach <- function(libname, pkgname) {
  env <- as.environment(paste0("package:", pkgname))
  assign(".conflicts.OK", TRUE, envir = env)
  # library()'s own settings, found in its frame: no report with
  # warn.conflicts = FALSE, and names it will exclude are left out.
  setting <- function(name, default) {
    tryCatch(dynGet(name, ifnotfound = default, minframe = 1L), error = function(e) default)
  }
  if (isFALSE(setting("warn.conflicts", TRUE))) return(invisible())
  skip <- c("embed", ".conflicts.OK", setting("exclude", NULL))
  only <- setting("include.only", NULL)
  report_conflicts(pkgname, skip, only)
}

report_conflicts <- function(pkgname, skip, only = NULL) {
  sp <- search()
  me <- match(paste0("package:", pkgname), sp)
  if (is.na(me)) return(invisible())
  own_env <- as.environment(me)
  ours <- setdiff(ls(own_env, all.names = TRUE), skip)
  if (is.character(only)) ours <- intersect(ours, only)
  first <- TRUE
  for (i in seq_along(sp)[-me]) {
    if (sp[i] %in% c("Autoloads", "CheckExEnv")) next
    env <- as.environment(i)
    same <- intersect(ours, ls(env, all.names = TRUE))
    same <- same[vapply(same, function(s) {
      exists(s, envir = env, mode = "function", inherits = FALSE) &&
        !identical(get(s, envir = env), get(s, envir = own_env))
    }, logical(1))]
    if (length(same) == 0) next
    if (first) {
      packageStartupMessage("\nAttaching package: ", sQuote(pkgname), "\n")
      first <- FALSE
    }
    packageStartupMessage(
      "The following ", if (length(same) == 1) "object is" else "objects are",
      " masked ", if (i < me) "_by_ " else "from ", sQuote(sp[i]), ":\n\n    ",
      paste(sort(same), collapse = ", "), "\n")
  }
  invisible()
}
