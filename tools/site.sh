#!/usr/bin/env bash
# Build lsnn's documentation site (pkgdown) and check it in headless Chromium.
#   bash tools/site.sh                # install what is missing, install lsnn, build docs/, check
#   bash tools/site.sh --no-check     # build only
#   bash tools/site.sh --lib DIR      # use the lsnn already installed in DIR (no install)
#   bash tools/site.sh DEST           # build into DEST instead of docs/
# The site reads from file:// without a network: open DEST/index.html.
# Screenshots and the check's report go to DEST-check/. Dependencies come from
# Debian's packages where the machine is Debian and we are root, R packages
# from CRAN otherwise (Chromium and pandoc must then be installed already).
set -euo pipefail
cd "$(dirname "$0")/.."

dest=docs
lib=""
check=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --no-check) check=no ;;
    --lib) lib="$2"; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "usage: bash tools/site.sh [--no-check] [--lib DIR] [DEST]" >&2; exit 2 ;;
    *) dest="$1" ;;
  esac
  shift
done

# shellcheck source=tools/dependencies.sh
. tools/dependencies.sh
find_chromium() {
  for c in "${CHROMIUM:-}" chromium chromium-browser google-chrome; do
    if [ -n "$c" ] && command -v "$c" >/dev/null; then echo "$c"; return; fi
  done
}
need=no
command -v pandoc >/dev/null && [ -n "$(find_chromium)" ] &&
  [ -f /usr/share/javascript/mathjax/MathJax.js ] || need=yes
install_missing "lsnn site" \
  "$lsnn_debs r-cran-pkgdown r-cran-downlit r-cran-ragg r-cran-xml2 libjs-mathjax chromium
   fonts-dejavu-core" \
  "$lsnn_cran, \"pkgdown\", \"downlit\", \"ragg\", \"xml2\"" "$need"

start=$(date +%s)
if [ -z "$lib" ]; then
  # A library of its own, so that the site documents this tree's lsnn.
  lib=$(mktemp -d)
  trap 'rm -rf "$lib"' EXIT
  echo "lsnn site: installing lsnn into $lib"
  log="$lib/install.log"
  MAKEFLAGS="${MAKEFLAGS:--j$(nproc 2>/dev/null || echo 2)}" \
    R CMD INSTALL --no-test-load -l "$lib" . >"$log" 2>&1 ||
    { cat "$log"; echo "lsnn site: R CMD INSTALL failed" >&2; exit 1; }
elif [ ! -d "$lib/lsnn" ]; then
  echo "lsnn site: no lsnn installed in '$lib'" >&2; exit 1
fi
export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"

Rscript tools/build-site.R "$dest"
echo "lsnn site: built $dest/index.html in $(( $(date +%s) - start )) s"

if [ "$check" = yes ]; then
  Rscript tools/check-site.R "$dest" "${dest%/}-check"
fi
