# The platform's Jupyter settings, given with --config (locally from the template catalog, which jobs see
# read-only; in the notebook image at /usr/local/etc/myapp/). See docs/notebooks.md, "Origins".
#
# Every browser request reaches Jupyter through the platform (the notebook proxy, or Istio's ext-authz on
# Kubernetes), which adds the notebook's token. Jupyter would take such a request as a script's and skip
# its XSRF and origin checks; here only the platform's worker (it sends X-Myapp-Worker, which the proxy
# strips from browsers and ext-authz verifies) counts as a script: every other request must pass them.
import os
import shutil

from jupyter_server.auth.identity import IdentityProvider

WORKER_HEADER = "X-Myapp-Worker"


class BrowserChecksIdentityProvider(IdentityProvider):
    def is_token_authenticated(self, handler):
        return super().is_token_authenticated(handler) and WORKER_HEADER in handler.request.headers


c = get_config()  # noqa: F821 - traitlets provides it to config files
c.ServerApp.identity_provider_class = BrowserChecksIdentityProvider
c.ServerApp.disable_check_xsrf = False
c.ServerApp.allow_origin = ""
c.ServerApp.allow_origin_pat = ""
# Requests carry the notebook's own host (NB_HOST, its origin), which a server on the loopback must accept.
if os.environ.get("NB_HOST"):
    c.ServerApp.local_hostnames = ["localhost", os.environ["NB_HOST"]]
# JupyterLab's settings and workspaces stay in the work folder (data, never code); Jupyter's own config,
# data (its cookie secret) and runtime folders are private to this server (JUPYTER_*_DIR, set by the launcher).
if os.environ.get("HOME"):
    c.LabApp.user_settings_dir = os.path.join(os.environ["HOME"], ".jupyter", "lab", "user-settings")
    c.LabApp.workspaces_dir = os.path.join(os.environ["HOME"], ".jupyter", "lab", "workspaces")
# Terminals run the server's environment as it is: a login shell would read /etc/profile, which puts the
# system's PATH back (the system's python3 and pip, no `python`) while VIRTUAL_ENV still names the notebook's.
SHELL = next((shell for shell in (os.environ.get("SHELL"), shutil.which("bash")) if shell and os.path.exists(shell)),
             "/bin/sh")
c.ServerApp.terminado_settings = {"shell_command": [SHELL]}
# The launcher started this server without Python's user site (~/.local, in the work folder: config or
# extensions there would run here); kernels and terminals get it back (locally `pip install` goes to the
# notebook's own layer, local_start.py; on Kubernetes `pip install --user` to the work folder).
os.environ.pop("PYTHONNOUSERSITE", None)
