# Shared set-up of scripts/run and scripts/test (sourced, not run): create .venv with Python >= 3.11 if missing and
# install hieropt into it (editable) with the extras given in $HIEROPT_EXTRAS. Re-installs only when pyproject.toml
# changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
find_python() {
  for c in python3.13 python3.12 python3.11 python3 python; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  echo "hieropt needs Python >= 3.11 on PATH" >&2; return 1
}
if [ ! -x .venv/bin/python ]; then
  "$(find_python)" -m venv .venv
fi
stamp=".venv/.hieropt-installed${HIEROPT_EXTRAS:+-$HIEROPT_EXTRAS}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${HIEROPT_EXTRAS:+[$HIEROPT_EXTRAS]}" >&2
  touch "$stamp"
fi
