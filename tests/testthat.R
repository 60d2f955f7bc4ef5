library(testthat)
library(lsnn)

test_check("lsnn")
