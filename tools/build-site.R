# Builds the pkgdown site from the INSTALLED lsnn (not pkgload::load_all(),
# which would compile src/ in place with debug flags) into a directory outside
# the repository, times each step, and exits 1 if any step raised a warning.
#
#   R_LIBS=<lib with lsnn> Rscript tools/build-site.R [dest] [steps...]
#
# dest defaults to a fresh temporary directory; steps default to all of
# init home reference news articles search. The articles take about ten
# minutes on two busy cores (the exact-gradient UMAP panels of the LSNN
# vignette), so `reference home` alone is the quick check.
args <- commandArgs(trailingOnly = TRUE)
dest <- if (length(args) >= 1) args[1] else tempfile("lsnn-site-")
steps <- if (length(args) >= 2) args[-1] else
  c("init", "home", "reference", "news", "articles", "search")

library(pkgdown)
# pkgdown asks CRAN and Bioconductor whether lsnn is published (for the home
# page's "View on" link); Bioconductor is out of reach here, and the failed
# lookup is an error, not a warning.
options(pkgdown.internet = FALSE)
pkg <- as_pkgdown(".", override = list(destination = dest))
cat("lsnn from", find.package("lsnn"), "; site in", dest, "\n")

warned <- character()
for (step in steps) {
  t <- system.time(withCallingHandlers(
    switch(step,
      init = init_site(pkg),
      home = build_home(pkg, preview = FALSE),
      reference = build_reference(pkg, lazy = FALSE, devel = FALSE, preview = FALSE),
      news = build_news(pkg, preview = FALSE),
      articles = build_articles(pkg, lazy = FALSE, preview = FALSE),
      search = build_search(pkg),
      stop("unknown step '", step, "'")),
    warning = function(w) warned <<- c(warned, sprintf("[%s] %s", step, conditionMessage(w)))
  ))
  cat(sprintf("site: %s took %.0f s\n", step, t[["elapsed"]]))
}
cat(sprintf("site: %d warning(s)\n", length(warned)))
writeLines(warned)
quit(status = if (length(warned) > 0) 1 else 0)
