# Builds the pkgdown site from the INSTALLED lsnn (not pkgload::load_all(),
# which would compile src/ in place with debug flags), offline, times each
# step, and exits 1 if any step raised a warning or an error.
#
#   R_LIBS=<lib with lsnn> Rscript tools/build-site.R [dest] [steps...]
#
# Run from the repository's root; `bash tools/site.sh` installs what is
# missing, installs lsnn and calls this. dest defaults to docs/ (git-ignored);
# steps default to all of: init home reference news articles search. Every
# page reads from file:// without a network (pkgdown/templates/head.html):
# the "mathjax" step (part of "init") copies Debian's MathJax into the site,
# the "search" step also writes search-index.js for pkgdown/extra.js.
args <- commandArgs(trailingOnly = TRUE)
dest <- if (length(args) >= 1) args[1] else "docs"
steps <- if (length(args) >= 2) args[-1] else
  c("init", "home", "reference", "news", "articles", "search")

if (!file.exists("_pkgdown.yml") || !file.exists("DESCRIPTION"))
  stop("run tools/build-site.R from the repository's root")
for (p in c("pkgdown", "lsnn")) {
  if (!requireNamespace(p, quietly = TRUE))
    stop("package '", p, "' is not installed (bash tools/site.sh installs it)")
}
library(pkgdown)
# pkgdown asks CRAN and Bioconductor whether lsnn is published (for the home
# page's "View on" link); offline the lookup is an error, not a warning.
options(pkgdown.internet = FALSE, repos = c(CRAN = "https://cloud.r-project.org"))
# downlit links a package named in code (library(future.batchtools)) to its
# URL, from its DESCRIPTION when it is installed and else from CRAN's package
# database, which it downloads. Offline, a package that is not installed is
# left unlinked instead.
utils::assignInNamespace("CRAN_urls", function() data.frame(Package = character(),
                                                            URL = character()), "downlit")
dir.create(dest, showWarnings = FALSE, recursive = TRUE)
dest <- normalizePath(dest)
pkg <- as_pkgdown(".", override = list(destination = dest))
# A whole build starts afresh, so that no page of an earlier build (an
# article since removed) stays; only a directory that holds a pkgdown site
# is emptied, never one that merely shares the name.
if ("init" %in% steps && length(dir(dest)) > 0) {
  if (!file.exists(file.path(dest, "pkgdown.yml")))
    stop("'", dest, "' is not empty and holds no pkgdown site: give another directory")
  clean_site(pkg)
}
cat("site: lsnn", format(packageVersion("lsnn")), "from", find.package("lsnn"),
    "; site in", dest, "\n")

# Debian's libjs-mathjax, or the directory LSNN_MATHJAX names: the loader,
# the TeX input and the SVG output with its TeX font (about 3 MB of 54). SVG
# needs no web fonts, which browsers refuse to load from file:// pages.
copy_mathjax <- function(dest) {
  from <- Sys.getenv("LSNN_MATHJAX", "/usr/share/javascript/mathjax")
  if (!file.exists(file.path(from, "MathJax.js"))) {
    warning("MathJax not found in '", from, "' (Debian: apt-get install libjs-mathjax; ",
            "elsewhere set LSNN_MATHJAX): formulas show as TeX")
    return(invisible())
  }
  parts <- c("MathJax.js", "config/TeX-AMS_SVG.js", "extensions", "jax/input/TeX",
             "jax/element", "jax/output/SVG/config.js", "jax/output/SVG/jax.js",
             "jax/output/SVG/autoload", "jax/output/SVG/fonts/TeX")
  to <- file.path(dest, "mathjax")
  unlink(to, recursive = TRUE)
  for (part in parts) {
    target <- file.path(to, dirname(part))
    dir.create(target, showWarnings = FALSE, recursive = TRUE)
    if (!file.copy(file.path(from, part), target, recursive = TRUE))
      stop("could not copy MathJax's '", part, "' from '", from, "'")
  }
}

# search.json as a script, which a page read from file:// can load.
write_search_script <- function(dest) {
  json <- readLines(file.path(dest, "search.json"), warn = FALSE, encoding = "UTF-8")
  writeLines(c("window.lsnnSearchIndex = ", json, ";"), file.path(dest, "search-index.js"),
             useBytes = TRUE)
}

# build_articles(), one article at a time, to say how long each takes.
build_each_article <- function(pkg) {
  build_articles_index(pkg)
  for (name in pkg$vignettes$name) {
    t <- system.time(build_article(name, pkg, lazy = FALSE, quiet = TRUE))
    cat(sprintf("site: article %s took %.0f s\n", name, t[["elapsed"]]))
  }
}

warned <- character()
total <- 0
for (step in steps) {
  t <- system.time(withCallingHandlers(
    switch(step,
      init = { init_site(pkg); copy_mathjax(dest) },
      mathjax = copy_mathjax(dest),
      home = build_home(pkg, preview = FALSE),
      reference = build_reference(pkg, lazy = FALSE, devel = FALSE, preview = FALSE),
      news = build_news(pkg, preview = FALSE),
      articles = build_each_article(pkg),
      search = { build_search(pkg); write_search_script(dest) },
      stop("unknown step '", step, "'")),
    warning = function(w) warned <<- c(warned, sprintf("[%s] %s", step, conditionMessage(w)))
  ))
  total <- total + t[["elapsed"]]
  cat(sprintf("site: %s took %.0f s\n", step, t[["elapsed"]]))
}
cat(sprintf("site: built in %.0f s, %d warning(s)\n", total, length(warned)))
writeLines(warned)
quit(status = if (length(warned) > 0) 1 else 0)
