#!/usr/bin/env bash
# Render the committee page of `hieropt report` in headless Chromium and save screenshots of it.
#
# Usage: scripts/screenshot_report.sh              -> docs/img/committee-page.png (the documentation's picture)
#        scripts/screenshot_report.sh INPUT OUT_DIR -> OUT_DIR/report.html etc., OUT_DIR/screenshot.png (1300 x 1650,
#                                                      the top of the page) and OUT_DIR/screenshot-full.png (1300 x 6000)
#   INPUT: an instance TOML, a co-design space TOML or the JSON `hieropt codesign --json` wrote.
# Without arguments the input is instances/gpt3-nvl72-2304.toml with a 300B-token run and a [cluster] section
# (GB200-class accelerators, facility and electricity; the figures and their sources are below), so that the page
# shows the $ per run, days and MW.
# Needs: hieropt on PATH, or .venv/bin/hieropt, or HIEROPT=/path/to/hieropt; Chromium (Debian: apt-get install -y
# chromium). Runs offline.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
hieropt="${HIEROPT:-$(command -v hieropt || echo "$here/.venv/bin/hieropt")}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [[ -z "$browser" ]]; then
  echo "no Chromium found: install it (Debian: apt-get update && apt-get install -y chromium)" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

demo_instance() {  # the NVL72 instance with a token budget and a sourced [cluster], written to $1
  sed "s#workload = \"../models/#workload = \"$here/models/#" "$here/instances/gpt3-nvl72-2304.toml" \
    | awk '/^\[network\]/ && !done { print "tokens = 300e9  # GPT-3 175B was trained on 300B tokens"; print "";
                                      done = 1 } { print }' > "$1"
  cat >> "$1" <<'TOML'

[cluster]
accelerator_usd = { value = 43000, source = "rack" }
accelerator_w = { value = 1200, source = "nvidia" }
pue = { value = 1.25, source = "epoch" }
electricity_usd_per_kwh = { value = 0.0826, source = "epoch" }
facility_usd_per_mw = { value = 11.7e6, source = "cushwake" }
amortisation_years = { value = 5, source = "epoch" }
[cluster.sources.rack]
ref = "GB200 NVL72 rack about $3.1M (SemiAnalysis-style estimate, as quoted by fetchlogic), / 72 GPUs"
date = "2026-12-05"
kind = "estimate"
[cluster.sources.nvidia]
ref = "nvidia.com/en-us/data-center/gb200-nvl72: 1,200 W per Blackwell GPU"
date = "2026-12-05"
kind = "spec"
[cluster.sources.epoch]
ref = "Epoch AI cost model: PUE 1.25 outside hyperscalers, US industrial electricity 2025 $0.0826/kWh (EIA), 5-year server life"
date = "2026-12-05"
kind = "assumption"
[cluster.sources.cushwake]
ref = "Cushman & Wakefield, Data Center Development Cost Guide 2025: $11.7M per MW of critical load (19-market average)"
date = "2026-12-05"
kind = "estimate"
TOML
}

shot() {  # shot PAGE PNG WIDTH,HEIGHT
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$work/profile" --hide-scrollbars \
    --screenshot="$2" --window-size="$3" "$1" >/dev/null 2>&1
  test -s "$2"
  echo "wrote $2 (page $1)"
}

if [[ $# -eq 0 ]]; then
  demo_instance "$work/gpt3-nvl72-2304-priced.toml"
  "$hieropt" report "$work/gpt3-nvl72-2304-priced.toml" -o "$work/out" --points 16 >/dev/null
  mkdir -p "$here/docs/img"
  shot "file://$work/out/report.html" "$here/docs/img/committee-page.png" 1300,1650
  exit 0
fi
input="$1"
out="${2:-report-screenshot}"
"$hieropt" report "$input" -o "$out" >/dev/null
page="file://$(cd "$out" && pwd)/report.html"
shot "$page" "$out/screenshot.png" 1300,1650
shot "$page" "$out/screenshot-full.png" 1300,6000
