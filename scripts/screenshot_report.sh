#!/usr/bin/env bash
# Render `hieropt report` in headless Chromium and save a screenshot of the page (a visual check, not a test).
#
# Usage: scripts/screenshot_report.sh [INSTANCE] [OUT_DIR]
#   INSTANCE  default instances/gpt3-4d.toml
#   OUT_DIR   default report-screenshot/ ; gets the report files, screenshot.png (1400 x 2400, the top of the
#             page) and screenshot-full.png (1400 x 6000, every figure)
# Needs: hieropt on PATH (or HIEROPT=/path/to/hieropt) and Chromium (Debian: apt-get install -y chromium).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
instance="${1:-$here/instances/gpt3-4d.toml}"
out="${2:-report-screenshot}"
hieropt="${HIEROPT:-hieropt}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [[ -z "$browser" ]]; then
  echo "no Chromium found: install it (Debian: apt-get update && apt-get install -y chromium)" >&2
  exit 2
fi
"$hieropt" report "$instance" -o "$out" >/dev/null
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
page="file://$(cd "$out" && pwd)/report.html"
for shot in "screenshot.png 1400,2400" "screenshot-full.png 1400,6000"; do
  set -- $shot
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$profile" --hide-scrollbars \
    --screenshot="$out/$1" --window-size="$2" "$page" 2>/dev/null
  test -s "$out/$1"
  echo "wrote $out/$1 (page $page)"
done
