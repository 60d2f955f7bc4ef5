# The installed help pages render as a user reads them: no raw markdown
# (roxygen's markdown must be on), nothing cut short, an example on each.

rendered_help <- function() {
  db <- tools::Rd_db("lsnn")
  lapply(db, function(rd) {
    out <- character()
    con <- textConnection("out", "w", local = TRUE)
    on.exit(close(con))
    tools::Rd2txt(rd, out = con, options = list(underline_titles = FALSE))
    out
  })
}

test_that("every installed help page renders without raw markdown", {
  pages <- rendered_help()
  expect_gt(length(pages), 20)
  for (name in names(pages)) {
    text <- paste(pages[[name]], collapse = "\n")
    # examples are code, where x[i] is no link
    text <- sub("\nExamples:.*$", "", text)
    # [fun()] links and [pkg::fun()] left as text
    expect_false(grepl("\\[[A-Za-z][A-Za-z0-9_.:-]*(\\(\\))?\\]", text),
                 label = paste(name, "has a raw [link]"))
    expect_false(grepl("`", text, fixed = TRUE), label = paste(name, "has a backtick"))
    expect_false(grepl("\\*\\*", text), label = paste(name, "has raw **bold**"))
    # Rd macros or LaTeX (maths needs a plain-text form: \\eqn{latex}{ascii})
    expect_false(grepl("\\", text, fixed = TRUE), label = paste(name, "has a backslash"))
  }
})

test_that("every help page has a runnable example", {
  db <- tools::Rd_db("lsnn")
  for (name in names(db)) {
    tags <- vapply(db[[name]], function(x) attr(x, "Rd_tag"), character(1))
    expect_true("\\examples" %in% tags, label = paste(name, "has examples"))
  }
})

test_that("a percent sign does not cut a page short", {
  text <- gsub("\\s+", " ", paste(rendered_help()[["scurvehole.Rd"]], collapse = " "))
  expect_match(text, "about 5% of its area", fixed = TRUE)
})
