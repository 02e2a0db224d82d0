#!/bin/sh
# Start JupyterLab under the prefix the VirtualService routes (NB_PREFIX, set in the
# Notebook CR). Authentication is done by the platform's gateway, hence no token.
set -eu
exec jupyter lab \
  --ip=0.0.0.0 --port=8888 --no-browser \
  --ServerApp.base_url="${NB_PREFIX:-/}" \
  --ServerApp.token='' --ServerApp.password='' \
  --ServerApp.allow_origin='*' \
  --ServerApp.root_dir="${HOME:-/home/jovyan}"
