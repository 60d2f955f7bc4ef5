# Summarises the hostile calls run by run.sh (run from $HOSTILE_OUT): one row per case
# and its class (OK, CRASH, HANG, SILENT-WRONG, INTERNAL).
ex <- getNamespaceExports("lsnn")
internal_pat <- c("subscript out of bounds", "missing value where TRUE/FALSE needed", "Not compatible with requested type",
  "Expecting a single value", "argument is of length zero", "non-numeric argument", "object of type", "invalid 'type'",
  "std::", "bad_alloc", "is missing, with no default", "cannot coerce", "NAs introduced", "no applicable method",
  "unable to find an inherited method", "non-conformable", "attempt to apply non-function", "invalid argument to unary",
  "arguments imply differing", "incorrect number of dimensions", "\\$ operator is invalid", "replacement has",
  "dims \\[product", "object '.*' not found", "could not find function", "unused argument", "argument \"[^\"]+\" is missing")
ids <- sub("\\.rc$", "", list.files("results", "\\.rc$"))
rows <- list()
for (id in ids) {
  rc <- as.integer(readLines(file.path("results", paste0(id, ".rc"))))
  f <- file.path("results", paste0(id, ".rds"))
  err <- paste(readLines(file.path("results", paste0(id, ".err")), warn = FALSE), collapse = "\n")
  code <- eval(parse(file.path("cases", paste0("case_", id, ".R")))[[2]][[3]])
  expect <- eval(parse(file.path("cases", paste0("case_", id, ".R")))[[2]][[4]])
  cls <- ""; msg <- ""; note <- ""
  if (rc == 137) { cls <- "HANG"; msg <- "killed after 60 s" }
  else if (!file.exists(f)) { cls <- "CRASH"; msg <- paste("exit", rc, ":", substr(gsub("\n", " | ", err), 1, 300)) }
  else {
    r <- readRDS(f)
    w <- if (length(r$warn)) paste0(" [warning: ", paste(unique(r$warn), collapse = "; "), "]") else ""
    if (r$status == "error") {
      msg <- r$msg
      callf <- if (nzchar(r$call)) sub("\\(.*", "", r$call) else ""
      if (any(vapply(internal_pat, grepl, logical(1), x = msg))) cls <- "INTERNAL?"
      else if (nzchar(callf) && !(callf %in% ex)) { cls <- "INTERNAL?"; note <- paste("call:", substr(r$call, 1, 80)) }
      else if (expect == "ok") cls <- "UNEXPECTED-ERROR?"
      else cls <- "OK"
      if (nzchar(callf)) note <- paste("call:", substr(r$call, 1, 80))
    } else {
      ck <- r$check
      if (!is.na(ck) && ck != "TRUE") { cls <- "SILENT-WRONG?"; msg <- paste("check:", ck) }
      else if (expect == "err") { cls <- "ACCEPTED?"; msg <- paste("returned", r$rclass) }
      else { cls <- "OK"; msg <- paste("returned", r$rclass, if (!is.na(ck)) "(checks pass)" else "") }
    }
    msg <- paste0(msg, w)
    if (rc != 0) { cls <- "CRASH?"; msg <- paste("exit", rc, msg) }
  }
  rows[[id]] <- data.frame(id = id, code = code, expect = expect, cls = cls, msg = gsub("\n", " ", msg), note = note)
}
d <- do.call(rbind, rows)
saveRDS(d, "summary.rds")
print(table(d$cls))
for (i in which(d$cls != "OK")) cat("\n##", d$id[i], d$cls[i], "\n", d$code[i], "\n  ->", substr(d$msg[i], 1, 400), d$note[i], "\n")
print(table(d$cls))
