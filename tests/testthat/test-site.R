# The documentation site: built by tools/build-site.R from the installed lsnn
# and checked by tools/check-site.R (screenshots in headless Chromium, every
# link). Several minutes, so only with LSNN_TEST_SITE=true, from a source
# tree (tools/ is not in the package).
test_that("the pkgdown site builds offline and passes its check", {
  skip_if_not(identical(Sys.getenv("LSNN_TEST_SITE"), "true"),
              "set LSNN_TEST_SITE=true to build and check the site")
  skip_if_not_installed("pkgdown")
  skip_if_not_installed("png")
  skip_if_not_installed("xml2")
  browser <- Sys.getenv("CHROMIUM", "chromium")
  skip_if(!nzchar(Sys.which(browser)), "no Chromium")
  root <- normalizePath(test_path("..", ".."))
  skip_if_not(file.exists(file.path(root, "tools", "build-site.R")), "not a source tree")

  site <- file.path(tempfile("lsnn-site-"), "site")
  on.exit(unlink(dirname(site), recursive = TRUE), add = TRUE)
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  run <- function(script, ...) {
    old <- setwd(root)
    on.exit(setwd(old))
    out <- suppressWarnings(system2(rscript, c(script, ...), stdout = TRUE, stderr = TRUE,
                                   env = paste0("R_LIBS=", libs)))
    list(status = if (is.null(attr(out, "status"))) 0L else attr(out, "status"), out = out)
  }
  build <- run("tools/build-site.R", site)
  expect_identical(build$status, 0L, info = paste(tail(build$out, 30), collapse = "\n"))
  check <- run("tools/check-site.R", site, paste0(site, "-check"))
  expect_identical(check$status, 0L, info = paste(check$out, collapse = "\n"))
  expect_true(any(grepl(", 0 broken, 0 loaded from the network", check$out)))
  for (png_file in c("home", "reference", "article"))
    expect_gt(file.size(file.path(paste0(site, "-check"), paste0(png_file, ".png"))), 10000)
})
