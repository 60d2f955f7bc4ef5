suppressMessages(library(lsnn))
suppressMessages(library(Matrix))
X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4]); n <- nrow(X)
set.seed(42); R60 <- matrix(rnorm(300), 60, 5)
set.seed(43); B <- matrix(runif(60 * 20) > 0.5, 60, 20)
B01 <- B * 1
set.seed(44)
tmpd <- function() tempfile("hs")

# brute-force distances, for checks
bf <- function(A, Q = A, metric = "euclidean") {
  A <- as.matrix(A) * 1; Q <- as.matrix(Q) * 1
  if (metric == "euclidean") {
    D <- sqrt(pmax(outer(rowSums(Q^2), rowSums(A^2), "+") - 2 * Q %*% t(A), 0))
  } else if (metric == "manhattan") {
    D <- t(apply(Q, 1, function(q) colSums(abs(t(A) - q))))
  } else if (metric == "hamming") {
    D <- t(apply(Q, 1, function(q) colMeans(t(A) != q)))
  } else stop("bf metric")
  D
}
gsane <- function(g, n = NULL, self = TRUE, nref = NULL, k = NULL) {
  if (!is.list(g) || is.null(g$idx) || is.null(g$dist)) return("not a graph list(idx, dist)")
  i <- g$idx; d <- g$dist
  if (is.null(n)) n <- nrow(i)
  if (is.null(nref)) nref <- n
  if (!is.matrix(i) || !is.matrix(d) || any(dim(i) != dim(d))) return("idx/dist dims differ")
  if (!is.integer(i)) return("idx not integer")
  if (nrow(i) != n) return(sprintf("nrow %d != %d", nrow(i), n))
  if (!is.null(k) && ncol(i) != k) return(sprintf("ncol %d != %d", ncol(i), k))
  if (anyNA(i) || any(i < 1 | i > nref)) return("idx out of range/NA")
  if (any(!is.finite(d))) return("non-finite dist")
  if (any(d < 0)) return("negative dist")
  if (ncol(d) > 1 && any(d[, -1, drop = FALSE] < d[, -ncol(d), drop = FALSE])) return("dist not increasing")
  if (self && any(i[, 1] != seq_len(n))) return("self not first")
  if (self && any(d[, 1] != 0)) return("self dist != 0")
  if (any(apply(i, 1, anyDuplicated) > 0)) return("duplicate idx in a row")
  TRUE
}
# graph distances against brute force (k columns incl. self)
gref <- function(g, A, metric = "euclidean", tol = 1e-6) {
  s <- gsane(g); if (!isTRUE(s)) return(s)
  D <- bf(A, metric = metric)
  k <- ncol(g$dist)
  ref <- t(apply(D, 1, function(r) sort(r)[seq_len(k)]))
  if (k == 1) ref <- matrix(ref, ncol = 1)
  if (max(abs(ref - g$dist)) > tol * max(1, max(abs(ref)))) return(sprintf("dist differs from brute force by %g", max(abs(ref - g$dist))))
  got <- D[cbind(rep(seq_len(nrow(D)), k), as.vector(g$idx))]
  if (max(abs(got - as.vector(g$dist))) > tol * max(1, max(abs(ref)))) return("idx inconsistent with dist")
  TRUE
}
esane <- function(Y, n, d = 2, lim = 1e6) {
  if (is.list(Y) && !is.null(Y$embedding)) Y <- Y$embedding
  if (!is.matrix(Y) || !is.numeric(Y)) return("not a numeric matrix")
  if (nrow(Y) != n || ncol(Y) != d) return(sprintf("dim %s, want %dx%d", paste(dim(Y), collapse = "x"), n, d))
  if (any(!is.finite(Y))) return("non-finite coordinates")
  if (max(abs(Y)) > lim) return(sprintf("coordinates huge: %g", max(abs(Y))))
  TRUE
}
teq <- function(f) {
  a <- f(1); b <- f(2)
  if (!isTRUE(all.equal(a, b, tolerance = 0))) return("differs between n_threads 1 and 2")
  TRUE
}
allok <- function(...) { for (s in list(...)) if (!isTRUE(s)) return(s); TRUE }

run_case <- function(id, code, expect, check) {
  out <- file.path(Sys.getenv("HOSTILE_OUT", "/tmp/lsnn-hostile"), "results", paste0(id, ".rds"))
  res <- list(id = id, code = code, expect = expect, status = "ok", msg = "", call = "",
              warn = character(), check = NA, cls = "")
  warns <- character()
  env <- new.env(parent = globalenv())
  r <- withCallingHandlers(
    tryCatch(eval(parse(text = code), envir = env),
             error = function(e) {
               res$status <<- "error"; res$msg <<- conditionMessage(e)
               cl <- conditionCall(e)
               res$call <<- if (is.null(cl)) "" else paste(deparse(cl, nlines = 2), collapse = " ")
               NULL
             }),
    warning = function(w) { warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") })
  res$warn <- warns
  setTimeLimit()
  if (res$status == "ok" && nzchar(check)) {
    env$r <- r
    ck <- tryCatch(eval(parse(text = check), envir = env), error = function(e) paste("check error:", conditionMessage(e)))
    res$check <- if (isTRUE(ck)) "TRUE" else paste(as.character(ck), collapse = " ")
  }
  res$rclass <- paste(class(r), collapse = "/")
  saveRDS(res, out)
  invisible(NULL)
}
