#!/bin/sh
# Rebuilds the console's vendored files from the npm packages pinned in package-lock.json
# (ADR 0150): mermaid's own minified browser build, stored gzip-compressed (the server
# sends it as it is, Content-Encoding: gzip), and its licence. With --check, compares the
# committed files with a fresh `npm ci` instead of writing them (.ci/run does this).
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --silent
built=node_modules/mermaid/dist/mermaid.min.js
if [ "${1:-}" = "--check" ]; then
  gzip -dc mermaid.min.js.gz | cmp - "$built"
  cmp node_modules/mermaid/LICENSE mermaid.LICENSE
  echo "vendored mermaid matches package-lock.json"
else
  gzip -9nc "$built" > mermaid.min.js.gz
  cp node_modules/mermaid/LICENSE mermaid.LICENSE
  ls -l mermaid.min.js.gz "$built"
fi
