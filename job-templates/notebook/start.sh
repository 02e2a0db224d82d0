#!/bin/sh
# Start JupyterLab under the prefix the VirtualService routes (NB_PREFIX, set in the Notebook CR).
# The platform checks every request first (Istio ext-authz) and adds this notebook's token, which
# comes from its own Secret (JUPYTER_TOKEN): without one, Jupyter does not start. No cross-origin
# access is allowed (Jupyter's default: same origin only).
set -eu
if [ -z "${JUPYTER_TOKEN:-}" ]; then
  echo "JUPYTER_TOKEN is empty: refusing to start JupyterLab without a token" >&2
  exit 64
fi
exec jupyter lab \
  --ip=0.0.0.0 --port=8888 --no-browser \
  --ServerApp.base_url="${NB_PREFIX:-/}" \
  --ServerApp.password='' \
  --ServerApp.root_dir="${HOME:-/home/jovyan}"
