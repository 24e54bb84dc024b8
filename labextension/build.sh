#!/usr/bin/env bash
# Rebuild the card renderer into dsh_nb/labextension/ from labextension/src.
#
# The one command for anyone who changes labextension/src or style/:
#     bash labextension/build.sh
# then commit dsh_nb/labextension/. It needs Node.js 20 with npm, and
# jupyter-builder on PATH (it comes with the [lab] and [test] extras). The
# build is reproducible and independent of the checkout's folder, so
# .ci/run checks that the committed assets are exactly what this builds.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
  echo "labextension/build.sh: npm not found; install Node.js 20 (npm comes with it)" >&2
  exit 1
fi
if ! command -v jupyter-builder >/dev/null 2>&1; then
  echo "labextension/build.sh: jupyter-builder not found; run it inside the venv" \
    "that has pip install -e \".[lab]\"" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
npm run -s build
python3 stamp.py write
