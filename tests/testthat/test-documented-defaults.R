# Every default a help page states is the default the function has: the
# arguments documented as "`VALUE` (the default)" or "(default VALUE)" are
# compared with formals(), and the defaults that depend on the method or
# the data (neighbor_embedding()'s iterations, gradient and threads) with
# what a run reports.

rd_argument_texts <- function(rd) {
  # (code as `code`, as the roxygen source writes it)
  as_text <- function(x) paste(unlist(lapply(x, function(e) {
    inner <- if (is.list(e)) as_text(e) else as.character(e)
    if (identical(attr(e, "Rd_tag"), "\\code")) paste0("`", inner, "`") else inner
  })), collapse = "")
  tags <- vapply(rd, function(e) attr(e, "Rd_tag"), "")
  args <- rd[[which(tags == "\\arguments")[1]]]
  if (is.null(args)) return(list())
  out <- list()
  for (item in args) {
    if (!identical(attr(item, "Rd_tag"), "\\item")) next
    names <- trimws(strsplit(as_text(item[[1]]), ",")[[1]])
    text <- gsub("\\s+", " ", as_text(item[[2]]))
    for (nm in names) out[[nm]] <- text
  }
  out
}

documented_default <- function(text) {
  m <- regmatches(text, regexpr("`[^`]+` \\(the default\\)", text))
  if (length(m)) return(sub("^`([^`]+)`.*", "\\1", m))
  m <- regmatches(text, regexpr("\\(default `?[-0-9.e]+`?\\)", text))
  if (length(m)) return(gsub("[()`]|default ", "", m))
  NULL
}

formal_value <- function(f, arg) {
  v <- formals(f)[[arg]]
  # a vector of choices: the first is the default
  if (is.call(v) && identical(v[[1]], as.name("c"))) v <- v[[2]]
  v
}

test_that("every default a help page states is the function's own", {
  db <- tools::Rd_db("lsnn")
  exports <- getNamespaceExports("lsnn")
  checked <- 0
  for (name in names(db)) {
    rd <- db[[name]]
    tags <- vapply(rd, function(e) attr(e, "Rd_tag"), "")
    aliases <- unlist(lapply(rd[tags == "\\alias"], as.character))
    funs <- intersect(aliases, exports)
    funs <- funs[vapply(funs, function(f) is.function(getExportedValue("lsnn", f)), TRUE)]
    if (length(funs) == 0) next
    for (arg_name in names(texts <- rd_argument_texts(rd))) {
      doc <- documented_default(texts[[arg_name]])
      if (is.null(doc)) next
      for (f in funs) {
        fun <- getExportedValue("lsnn", f)
        if (!arg_name %in% names(formals(fun))) next
        value <- formal_value(fun, arg_name)
        expected <- tryCatch(eval(parse(text = doc)[[1]]), error = function(e) doc)
        expect_identical(if (is.numeric(value)) as.numeric(value) else value,
                         if (is.numeric(expected)) as.numeric(expected) else expected,
                         label = paste0(f, "(", arg_name, ")"))
        checked <- checked + 1
      }
    }
  }
  expect_gt(checked, 20)
})

test_that("neighbor_embedding()'s computed defaults are the documented ones", {
  set.seed(3)
  X <- matrix(rnorm(60 * 3), 60)
  runs <- function(...) neighbor_embedding(X, ..., ret_extra = TRUE, tol = 0)
  # t-SNE: 750 iterations; the full gradient of the others: 1,000
  expect_identical(runs("tsne", perplexity = 10)$iterations, 750L)
  # (the planned iterations, as a callback of uwot's form sees them: a run
  # of the full gradient may converge earlier)
  planned <- function(...) {
    n <- NULL
    neighbor_embedding(X, ..., epoch = 1, callback = function(i, n_iter, Y) {
      n <<- n_iter
      FALSE
    })
    n
  }
  expect_identical(planned("umap", gradient = "exact"), 1000L)
  expect_identical(planned("largevis", perplexity = 10, gradient = "exact"), 1000L)
  expect_identical(planned("tsne", perplexity = 10), 750L)
  expect_identical(runs("umap", gradient = "exact")$eta, 0.03)
  # negative sampling, the default of LargeVis, UMAP and t-UMAP: 500 epochs
  for (m in c("umap", "tumap", "largevis")) {
    r <- runs(m, perplexity = 10)
    expect_identical(r$gradient, "sampled", info = m)
    expect_identical(r$iterations, 500L, info = m)
  }
  # PaCMAP: the sum of the phases
  r <- neighbor_embedding(X, "pacmap", ret_extra = TRUE)
  expect_identical(r$iterations, 450L)
  # threads: default_n_threads(), which follows the option
  old <- options(lsnn.n_threads = 1)
  on.exit(options(old))
  expect_identical(default_n_threads(), 1L)
  options(lsnn.n_threads = 0)
  expect_error(default_n_threads(), "option 'lsnn.n_threads'")
  options(lsnn.n_threads = NULL)
  expect_gte(default_n_threads(), 1L)
  withr_limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_", NA)
  Sys.setenv("_R_CHECK_LIMIT_CORES_" = "TRUE")
  expect_lte(default_n_threads(), 2L)
  if (is.na(withr_limit)) Sys.unsetenv("_R_CHECK_LIMIT_CORES_") else
    Sys.setenv("_R_CHECK_LIMIT_CORES_" = withr_limit)
})
