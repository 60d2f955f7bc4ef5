#!/usr/bin/env bash
# Builds lsnn with AddressSanitizer + UndefinedBehaviorSanitizer into a
# private library and runs the test suite and every help page's examples
# under it: with both kernel builds (options(lsnn.simd = "generic") and the
# default) and both RcppParallel back ends (TBB and tinythread). Exits
# non-zero if anything fails or any sanitizer report is written.
#
#   bash tools/sanitize.sh            # everything (slow: about an hour on 2 cores)
#   SANITIZE_CONFIGS="auto:tbb" bash tools/sanitize.sh   # one configuration
#
# Needs only a Debian machine with R (as root it installs the compiler, the
# sanitizer run-times and lsnn's dependencies with apt-get). The build and
# the reports go to $SANITIZE_DIR (default: a new directory under /tmp);
# nothing outside it is changed. Not part of CI.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="${SANITIZE_DIR:-$(mktemp -d /tmp/lsnn-sanitize.XXXXXX)}"
mkdir -p "$work"
configs="${SANITIZE_CONFIGS:-generic:tbb auto:tbb generic:tinythread auto:tinythread}"
say() { echo "sanitize: $*"; }

# 1. What the build needs.
debs="g++ make libasan8 libubsan1 r-base-dev r-cran-rcpp r-cran-rcppeigen r-cran-rcppparallel
      r-cran-matrix r-cran-testthat r-cran-uwot r-cran-rspectra r-cran-irlba r-cran-png"
if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=""
  for p in $debs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    say "installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
      { say "apt-get failed"; exit 2; }
  fi
fi
cxx=$(R CMD config CXX17 2>/dev/null | awk '{print $1}')
[ -n "$cxx" ] || cxx=g++
libasan=$("$cxx" -print-file-name=libasan.so)
libubsan=$("$cxx" -print-file-name=libubsan.so)
if [ ! -e "$libasan" ] || [ "$libasan" = libasan.so ]; then
  say "no libasan.so for $cxx"; exit 2
fi

# 2. The instrumented build, into a private library.
flags="-fsanitize=address,undefined -fno-sanitize=float-divide-by-zero -fno-omit-frame-pointer -g -O1"
cat >"$work/Makevars" <<EOF
CXXFLAGS = $flags
CXX11FLAGS = $flags
CXX14FLAGS = $flags
CXX17FLAGS = $flags
CFLAGS = $flags
LDFLAGS = -fsanitize=address,undefined
EOF
mkdir -p "$work/lib"
say "building into $work/lib (log: $work/install.log)"
if ! R_MAKEVARS_USER="$work/Makevars" MAKEFLAGS="-j2" \
     R CMD INSTALL --preclean --no-test-load --no-multiarch -l "$work/lib" . >"$work/install.log" 2>&1; then
  tail -30 "$work/install.log"; say "build failed"; exit 2
fi
grep -q -- "-fsanitize=address" "$work/install.log" || { say "the build did not use the sanitizer flags"; exit 2; }

# 3. The runs. Every report goes to its own file under $work/reports.
cat >"$work/examples.R" <<'EOF'
# Runs the examples of every help page of the source tree in the current directory.
library(lsnn)
failed <- character()
for (rd in sort(list.files("man", pattern = "[.]Rd$", full.names = TRUE))) {
  ex <- tempfile(fileext = ".R")
  tools::Rd2ex(rd, ex, commentDontrun = TRUE, commentDonttest = FALSE)
  if (!file.exists(ex)) next
  cat("examples:", basename(rd), "\n")
  ok <- tryCatch({
    source(ex, local = new.env(parent = globalenv()), echo = FALSE)
    TRUE
  }, error = function(e) {
    message("  error: ", conditionMessage(e))
    FALSE
  })
  if (!ok) failed <- c(failed, basename(rd))
}
if (length(failed)) {
  cat("examples failed:", failed, "\n")
  quit(status = 1)
}
cat("examples: all ran\n")
EOF
rm -rf "$work/reports"
mkdir -p "$work/reports"
status=0
for cfg in $configs; do
  simd=${cfg%%:*}
  backend=${cfg##*:}
  cat >"$work/profile.R" <<EOF
options(lsnn.simd = "$simd")
EOF
  for what in tests examples; do
    if [ "$what" = tests ]; then script="$root/tools/run-tests.R"; else script="$work/examples.R"; fi
    log="$work/$what-$simd-$backend.log"
    say "$what with simd = $simd, RCPP_PARALLEL_BACKEND = $backend (log: $log)"
    (
      export R_LIBS="$work/lib${R_LIBS:+:$R_LIBS}"
      export R_PROFILE_USER="$work/profile.R"
      export RCPP_PARALLEL_BACKEND="$backend"
      export LSNN_SANITIZE=true
      export ASAN_OPTIONS="detect_leaks=0:log_path=$work/reports/asan:halt_on_error=0:detect_odr_violation=0"
      export UBSAN_OPTIONS="print_stacktrace=1:log_path=$work/reports/ubsan:halt_on_error=0"
      export LD_PRELOAD="$libasan${libubsan:+ $libubsan}"
      Rscript "$script"
    ) >"$log" 2>&1
    rc=$?
    tail -1 "$log"
    if [ $rc -ne 0 ]; then
      say "FAILED ($what, $simd, $backend): exit status $rc"
      status=1
    fi
  done
done

reports=$(find "$work/reports" -type f | sort)
if [ -n "$reports" ]; then
  say "sanitizer reports:"
  for f in $reports; do
    echo "---- $f"
    head -40 "$f"
  done
  status=1
fi
if [ $status -eq 0 ]; then
  say "clean: no sanitizer report, all tests and examples passed ($configs)"
else
  say "NOT clean (see above; build and logs in $work)"
fi
exit $status
