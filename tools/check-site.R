# Checks a built site (tools/build-site.R): screenshots of a few pages in
# headless Chromium, each a PNG of the window's size that is not blank; the
# formulas of a reference page typeset by the site's own MathJax and its table
# of contents built; every link and asset of every HTML page: a relative one
# must name a file of the site (and an anchor on it, an id of that page), and
# nothing is loaded from the network. Exits 1 on any failure, after a summary
# (the full list in <screenshot dir>/report.txt).
#
#   Rscript tools/check-site.R [site] [screenshot dir]
#
# site defaults to docs/, the screenshots to <site>-check/. CHROMIUM names
# the browser when it is not chromium on the PATH.
args <- commandArgs(trailingOnly = TRUE)
site <- if (length(args) >= 1) args[1] else "docs"
shots <- if (length(args) >= 2) args[2] else paste0(sub("/+$", "", site), "-check")
for (p in c("xml2", "png")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("package '", p, "' is not installed")
}
if (!file.exists(file.path(site, "index.html"))) stop("no site in '", site, "' (no index.html)")
site <- normalizePath(site)
dir.create(shots, showWarnings = FALSE, recursive = TRUE)
shots <- normalizePath(shots)

failures <- character()
fail <- function(...) failures <<- c(failures, paste0(...))

# ---- Screenshots -----------------------------------------------------------
pages <- c(home = "index.html",
           reference = "reference/locally_scaled_knn.html",
           article = "articles/locally-scaled-neighbours.html",
           benchmarks = "articles/benchmarks.html")
width <- 1280L
height <- 1600L

find_chromium <- function() {
  for (c in c(Sys.getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome")) {
    if (nzchar(c) && nzchar(Sys.which(c))) return(unname(Sys.which(c)))
  }
  ""
}

screenshot <- function(browser, page, png_file) {
  profile <- tempfile("chromium-profile-")
  on.exit(unlink(profile, recursive = TRUE))
  unlink(png_file)
  # The virtual time budget lets the page's scripts (MathJax, the table of
  # contents) finish before the picture is taken.
  out <- suppressWarnings(system2(
    "timeout", c("120", shQuote(browser), "--headless", "--disable-gpu", "--no-sandbox",
                 "--hide-scrollbars", "--no-first-run", "--disable-extensions",
                 paste0("--user-data-dir=", profile),
                 paste0("--window-size=", width, ",", height),
                 "--virtual-time-budget=10000",
                 paste0("--screenshot=", png_file),
                 shQuote(paste0("file://", page))),
    stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, output = out)
}

check_png <- function(png_file) {
  if (!file.exists(png_file) || file.size(png_file) == 0) return("no PNG written")
  img <- tryCatch(png::readPNG(png_file), error = function(e) NULL)
  if (is.null(img)) return("not a readable PNG")
  if (dim(img)[1] != height || dim(img)[2] != width)
    return(sprintf("%d x %d pixels, expected %d x %d", dim(img)[2], dim(img)[1], width, height))
  grey <- if (length(dim(img)) == 3)
    0.299 * img[, , 1] + 0.587 * img[, , 2] + 0.114 * img[, , 3] else img
  # Blank: one colour nearly everywhere. A page of text has a few per cent of
  # its pixels away from the background colour and a visible spread.
  background <- as.numeric(names(which.max(table(round(grey, 2)))))
  inked <- mean(abs(grey - background) > 0.1)
  if (sd(as.vector(grey)) < 0.02 || inked < 0.005)
    return(sprintf("blank (sd %.4f, %.2f%% of pixels off the background)",
                   sd(as.vector(grey)), 100 * inked))
  sprintf("ok (sd %.3f, %.1f%% of pixels off the background)", sd(as.vector(grey)), 100 * inked)
}

browser <- find_chromium()
shot_report <- character()
if (!nzchar(browser)) {
  fail("no Chromium found (install chromium, or set CHROMIUM)")
} else {
  for (what in names(pages)) {
    page <- file.path(site, pages[[what]])
    png_file <- file.path(shots, paste0(what, ".png"))
    if (!file.exists(page)) {
      fail("screenshot ", what, ": the site has no ", pages[[what]])
      next
    }
    run <- screenshot(browser, page, png_file)
    verdict <- check_png(png_file)
    line <- sprintf("%-10s %s -> %s: %s", what, pages[[what]], png_file, verdict)
    shot_report <- c(shot_report, line)
    if (!startsWith(verdict, "ok")) {
      fail("screenshot ", line, if (run$status != 0)
        paste0(" (chromium exited ", run$status, ": ", paste(tail(run$output, 3), collapse = " | "), ")"))
    }
  }
}

# What the page's own scripts make, in the reference page's DOM after they
# ran: formulas typeset by the site's MathJax, the table of contents built
# by extra.js.
script_report <- character()
if (nzchar(browser) && file.exists(file.path(site, pages[["reference"]]))) {
  profile <- tempfile("chromium-profile-")
  dom <- suppressWarnings(system2(
    "timeout", c("120", shQuote(browser), "--headless", "--disable-gpu", "--no-sandbox",
                 "--no-first-run", paste0("--user-data-dir=", profile),
                 "--virtual-time-budget=10000", "--dump-dom",
                 shQuote(paste0("file://", file.path(site, pages[["reference"]])))),
    stdout = TRUE, stderr = FALSE))
  unlink(profile, recursive = TRUE)
  if (length(dom) == 0) dom <- "<html></html>"
  dom <- xml2::read_html(paste(dom, collapse = "\n"))
  n_math <- length(xml2::xml_find_all(dom, "//*[contains(@class, 'MathJax_SVG')]"))
  n_raw <- sum(grepl("\\\\\\(", xml2::xml_text(xml2::xml_find_all(dom, "//main//p"))))
  n_toc <- length(xml2::xml_find_all(dom, "//*[@id='toc']//a[contains(@class, 'nav-link')]"))
  script_report <- sprintf("%s: %d formulas typeset, %d paragraphs with raw TeX, %d entries in the table of contents",
                           pages[["reference"]], n_math, n_raw, n_toc)
  if (n_math == 0 || n_raw > 0) fail("MathJax did not typeset ", pages[["reference"]], " (", script_report, ")")
  if (n_toc == 0) fail("no table of contents on ", pages[["reference"]])
}

# ---- Links -----------------------------------------------------------------
html_files <- list.files(site, pattern = "\\.html$", recursive = TRUE, full.names = TRUE)
# MathJax's own test and documentation pages are not the site's.
html_files <- html_files[!startsWith(html_files, file.path(site, "mathjax", ""))]
docs <- list()
read_doc <- function(file) {
  if (is.null(docs[[file]])) docs[[file]] <<- xml2::read_html(file)
  docs[[file]]
}
ids_of <- local({
  cache <- list()
  function(file) {
    if (is.null(cache[[file]])) {
      doc <- read_doc(file)
      cache[[file]] <<- c(xml2::xml_attr(xml2::xml_find_all(doc, "//*[@id]"), "id"),
                          xml2::xml_attr(xml2::xml_find_all(doc, "//a[@name]"), "name"))
    }
    cache[[file]]
  }
})

counts <- c(internal = 0L, anchors = 0L, external = 0L)
broken <- character()
remote <- character()
for (file in html_files) {
  doc <- read_doc(file)
  rel_file <- substring(file, nchar(site) + 2)
  attr_of <- function(xpath, name) xml2::xml_attr(xml2::xml_find_all(doc, xpath), name)
  found <- list(a = attr_of("//a[@href]", "href"), img = attr_of("//img[@src]", "src"),
                script = attr_of("//script[@src]", "src"), link = attr_of("//link[@href]", "href"))
  refs <- data.frame(kind = rep(names(found), lengths(found)),
                     url = unlist(found, use.names = FALSE))
  for (i in seq_len(nrow(refs))) {
    url <- trimws(refs$url[i])
    kind <- refs$kind[i]
    if (!nzchar(url) || grepl("^(mailto|javascript|data|tel):", url, ignore.case = TRUE)) next
    if (grepl("^([a-z][a-z0-9+.-]*:)?//", url, ignore.case = TRUE)) {
      # An absolute URL: a page elsewhere is fine to link to; what the page
      # itself loads (scripts, styles, images) must be in the site.
      if (kind == "a") counts[["external"]] <- counts[["external"]] + 1L
      else remote <- c(remote, sprintf("%s: <%s> %s", rel_file, kind, url))
      next
    }
    fragment <- if (grepl("#", url, fixed = TRUE)) sub("^[^#]*#", "", url) else ""
    path <- URLdecode(sub("[?#].*$", "", url))
    target <- if (!nzchar(path)) file else if (startsWith(path, "/"))
      file.path(site, path) else file.path(dirname(file), path)
    if (dir.exists(target)) target <- file.path(target, "index.html")
    if (nzchar(path)) counts[["internal"]] <- counts[["internal"]] + 1L
    if (!file.exists(target)) {
      broken <- c(broken, sprintf("%s: <%s> %s (no file)", rel_file, kind, url))
      next
    }
    target <- normalizePath(target)
    if (!startsWith(target, paste0(site, "/"))) {
      broken <- c(broken, sprintf("%s: <%s> %s (outside the site)", rel_file, kind, url))
      next
    }
    if (nzchar(fragment) && grepl("\\.html$", target)) {
      counts[["anchors"]] <- counts[["anchors"]] + 1L
      if (!URLdecode(fragment) %in% ids_of(target))
        broken <- c(broken, sprintf("%s: <%s> %s (no id '%s' on the page)",
                                    rel_file, kind, url, fragment))
    }
  }
}
# Loaded by extra.js when the search box is used, so no page names it.
if (!file.exists(file.path(site, "search-index.js"))) fail("the site has no search-index.js")
for (b in broken) fail("broken link ", b)
for (r in remote) fail("loads from the network ", r)

# ---- Summary ---------------------------------------------------------------
cat("site check:", site, "\n")
cat("screenshots:\n")
cat(paste0("  ", shot_report, "\n"), sep = "")
if (length(script_report)) cat("scripts:", script_report, "\n")
cat(sprintf(paste("links: %d HTML pages, %d internal links and assets checked (%d anchors),",
                  "%d external links not followed, %d broken, %d loaded from the network\n"),
            length(html_files), counts[["internal"]], counts[["anchors"]], counts[["external"]],
            length(broken), length(remote)))
writeLines(c(shot_report, failures), file.path(shots, "report.txt"))
if (length(failures) > 0) {
  cat(sprintf("site check FAILED: %d problem(s), all in %s\n", length(failures),
              file.path(shots, "report.txt")))
  cat(paste0("  ", head(failures, 50), "\n"), sep = "")
  if (length(failures) > 50) cat("  ...", length(failures) - 50, "more\n")
  quit(status = 1)
}
cat("site check passed\n")
