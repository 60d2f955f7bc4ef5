# Lists the code over the size limits of ARCHITECTURE.md: C++ functions over
# 80 lines and classes/structs over 300 in inst/include and src (the generated
# RcppExports.cpp aside), R functions over 80 lines and R files over 500 in R/
# (RcppExports.R aside). Lines are counted from a definition's first line to
# its closing brace, comments included.
#
#   Rscript tools/code-sizes.R [package directory]
#
# A report: it always exits with status 0.

args <- commandArgs(trailingOnly = TRUE)
root <- if (length(args) >= 1) args[1] else "."
max_function <- 80L
max_class <- 300L
max_r_file <- 500L

# The text with comments, string and character literals, preprocessor lines
# and access labels blanked (newlines kept, so that positions keep their
# lines): what is left holds only the braces of the code.
blank_cpp <- function(text) {
  pattern <- paste0(
    "//[^\n]*|/\\*[\\s\\S]*?\\*/|\"(?:\\\\.|[^\"\\\\\n])*\"|'(?:\\\\.|[^'\\\\\n])'|",
    "(?m)^[ \t]*#(?:[^\n]*\\\\\n)*[^\n]*|\\b(?:public|private|protected)[ \t]*:(?!:)")
  m <- gregexpr(pattern, text, perl = TRUE)
  regmatches(text, m) <- lapply(regmatches(text, m), function(s) gsub("[^\n]", " ", s))
  text
}

# The kind of the block a brace opens, from the code before it (its head).
brace_kind <- function(head, inside_function) {
  if (inside_function) return("block")
  head <- gsub("\\s+", " ", trimws(head))
  if (grepl("^(extern \"C\"|namespace\\b|inline namespace\\b)", head) || head == "extern") {
    return("namespace")
  }
  if (grepl("\\(", head)) {
    after <- sub("^.*\\)", "", head)
    if (grepl("^\\s*((const|noexcept|override|final|mutable|volatile|&&|&)\\s*)*(->.*)?$", after)) {
      return("function")
    }
  }
  if (grepl("(^|[^[:alnum:]_])(class|struct|union) ", head) &&
      !grepl("(^|[^[:alnum:]_])enum ", head) && !grepl("=", head)) {
    return("class")
  }
  "other"
}

definition_name <- function(head, kind) {
  head <- gsub("\\s+", " ", trimws(head))
  if (kind == "class") {
    head <- gsub("<[^<>]*>", "", gsub("<[^<>]*>", "", head))
    m <- regmatches(head, regexpr("(class|struct|union) [[:alnum:]_]+", head))
    return(sub("^\\S+ ", "", m))
  }
  before <- sub("\\(.*$", "", head)
  if (grepl("operator", before)) return(sub("^.*\\b(operator.*)$", "\\1", before))
  sub("^.*?([[:alnum:]_:~]+)\\s*$", "\\1", before, perl = TRUE)
}

# Every function and class of a C++ file: data.frame(file, kind, name, start, lines).
cpp_definitions <- function(path) {
  text <- paste(readLines(path, warn = FALSE), collapse = "\n")
  code <- blank_cpp(text)
  chars <- strsplit(code, "")[[1]]
  newline_at <- which(chars == "\n")
  line_of <- function(pos) findInterval(pos - 1, newline_at) + 1L
  marks <- which(chars %in% c("{", "}", ";"))
  stack <- list()
  head_from <- 1L
  kept_head <- ""
  out <- list()
  for (pos in marks) {
    ch <- chars[pos]
    head <- paste0(kept_head, paste(chars[seq_len(pos - head_from) + head_from - 1L],
                                    collapse = ""))
    inside_function <- any(vapply(stack, function(s) s$kind %in% c("function", "block"),
                                  logical(1)))
    if (ch == "{") {
      kind <- brace_kind(head, inside_function)
      start <- if (grepl("\\S", head)) line_of(head_from + regexpr("\\S", head)[1] - 1L -
                                                 nchar(kept_head)) else line_of(pos)
      if (nchar(kept_head) > 0) start <- kept_start
      stack[[length(stack) + 1L]] <- list(kind = kind, head = head, start = start,
                                          name = if (kind %in% c("function", "class"))
                                            definition_name(head, kind) else "")
      kept_head <- ""
    } else if (ch == "}") {
      if (length(stack) == 0) next
      top <- stack[[length(stack)]]
      stack[[length(stack)]] <- NULL
      kept_head <- ""
      if (top$kind %in% c("function", "class")) {
        owners <- vapply(stack, function(s) if (s$kind == "class") s$name else "", "")
        owners <- owners[owners != ""]
        out[[length(out) + 1L]] <- data.frame(
          file = path, kind = top$kind,
          name = paste(c(owners, top$name), collapse = "::"),
          start = top$start, lines = line_of(pos) - top$start + 1L)
      } else if (top$kind == "other" && !inside_function) {
        # a brace initialiser outside a function body (a member's, or one in a
        # constructor's initialiser list): the head goes on past it
        kept_head <- paste0(top$head, "{}")
        kept_start <- top$start
      }
    } else {
      kept_head <- ""
    }
    head_from <- pos + 1L
  }
  if (length(out) == 0) return(NULL)
  do.call(rbind, out)
}

# Every top-level function of an R file: data.frame(file, name, start, lines).
r_definitions <- function(path) {
  exprs <- parse(path, keep.source = TRUE)
  refs <- attr(exprs, "srcref")
  out <- list()
  for (i in seq_along(exprs)) {
    e <- exprs[[i]]
    if (is.call(e) && as.character(e[[1]]) %in% c("<-", "=") && length(e) == 3 &&
        is.call(e[[3]]) && identical(e[[3]][[1]], as.name("function"))) {
      r <- refs[[i]]
      out[[length(out) + 1L]] <- data.frame(file = path, name = deparse(e[[2]]),
                                            start = r[1], lines = r[3] - r[1] + 1L)
    }
  }
  if (length(out) == 0) return(NULL)
  do.call(rbind, out)
}

section <- function(title, rows, format) {
  cat("\n", title, "\n", sep = "")
  if (is.null(rows) || nrow(rows) == 0) {
    cat("  none\n")
    return(invisible())
  }
  rows <- rows[order(-rows$lines), , drop = FALSE]
  for (i in seq_len(nrow(rows))) cat("  ", format(rows[i, ]), "\n", sep = "")
}

relative <- function(path) sub(paste0("^", normalizePath(root), "/"), "", normalizePath(path))

cpp_files <- c(list.files(file.path(root, "inst", "include"), "\\.(h|hpp)$", recursive = TRUE,
                          full.names = TRUE),
               list.files(file.path(root, "src"), "\\.(h|hpp|cpp|cc)$", full.names = TRUE))
cpp_files <- cpp_files[basename(cpp_files) != "RcppExports.cpp"]
cpp <- do.call(rbind, lapply(cpp_files, cpp_definitions))
r_files <- list.files(file.path(root, "R"), "\\.R$", full.names = TRUE)
r_files <- r_files[basename(r_files) != "RcppExports.R"]
r_funs <- do.call(rbind, lapply(r_files, r_definitions))
r_lines <- data.frame(file = r_files,
                      lines = vapply(r_files, function(f) length(readLines(f, warn = FALSE)), 1L))

where <- function(row) sprintf("%4d  %s  (%s:%d)", row$lines, row$name, relative(row$file),
                               row$start)
section(sprintf("C++ functions over %d lines:", max_function),
        cpp[cpp$kind == "function" & cpp$lines > max_function, ], where)
section(sprintf("C++ classes and structs over %d lines:", max_class),
        cpp[cpp$kind == "class" & cpp$lines > max_class, ], where)
section(sprintf("R functions over %d lines:", max_function),
        r_funs[r_funs$lines > max_function, ], where)
section(sprintf("R files over %d lines:", max_r_file),
        r_lines[r_lines$lines > max_r_file, ],
        function(row) sprintf("%4d  %s", row$lines, relative(row$file)))
invisible(quit(status = 0))
