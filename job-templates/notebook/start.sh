#!/bin/sh
# Start JupyterLab under the prefix the VirtualService routes (NB_PREFIX, set in the Notebook CR), on the
# notebook's own origin (NB_HOST). The platform checks every request first (Istio ext-authz) and adds this
# notebook's token, which comes from its own Secret (JUPYTER_TOKEN): without one, Jupyter does not start.
# No cross-origin access is allowed (Jupyter's default: same origin only), and browser requests keep
# Jupyter's XSRF check (jupyter_server_config.py, beside this script in the image).
#
# Jupyter's config, data (its cookie secret) and runtime folders go to MYAPP_JUPYTER_DIR (an emptyDir of
# the pod), never the work folder (HOME), which the project's members and jobs can write: the server starts
# without Python's user site (~/.local is in HOME too); the config gives it back to kernels.
set -eu
if [ -z "${JUPYTER_TOKEN:-}" ]; then
  echo "JUPYTER_TOKEN is empty: refusing to start JupyterLab without a token" >&2
  exit 64
fi
private="${MYAPP_JUPYTER_DIR:-}"
if [ -z "$private" ] || [ ! -w "$private" ]; then
  private="$(mktemp -d)"
fi
export JUPYTER_CONFIG_DIR="$private/config" JUPYTER_DATA_DIR="$private/data" JUPYTER_RUNTIME_DIR="$private/runtime"
export PYTHONNOUSERSITE=1
exec jupyter lab \
  --ip=0.0.0.0 --port=8888 --no-browser \
  --config="${MYAPP_JUPYTER_CONFIG:-/usr/local/etc/myapp/jupyter_server_config.py}" \
  --ServerApp.base_url="${NB_PREFIX:-/}" \
  --ServerApp.password='' \
  --ServerApp.root_dir="${HOME:-/home/jovyan}"
