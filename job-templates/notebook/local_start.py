"""Start a local notebook's JupyterLab with a package layer of its own (the local backend runs this in the
notebook's sandbox, as the project's uid; see docs/notebooks.md, "One Python for the kernel and the terminal").

    python local_start.py -- <the JupyterLab command...>

From the environment (set by the platform's planner):

- MYAPP_NOTEBOOK_LAYER: the layer, a venv in the notebook's work folder. Its site-packages come first,
  then the folders of MYAPP_NOTEBOOK_SITES (the image's environment, the platform's Python), chained by a
  .pth file. ``pip install`` (terminal) and ``%pip install`` (kernel) install into it: into this notebook's
  work folder, never into the shared environment, which is read-only here anyway;
- VIRTUAL_ENV and PATH name the layer already, so the terminal's ``python``, ``pip`` and the kernel's
  interpreter are the same;
- JUPYTER_DATA_DIR: the server's private data folder, where the ``python3`` kernel is written (the layer's
  Python), ahead of every other kernel spec.

The server itself keeps running the platform's Python without the layer (nothing from the work folder is
imported by it), and starts in the work folder (HOME), where terminals open.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PIP = "#!{python}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n"
CHAIN = "_myapp_layer.pth"


def chain_line(sites: list[str]) -> str:
    """Adds each folder as a site folder (its own .pth files apply) after the layer's site-packages."""
    return "import site; " + "; ".join(f"site.addsitedir({site!r})" for site in sites) + "\n"


def site_packages(layer: Path) -> Path:
    return layer / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def make_layer(layer: Path, sites: list[str]) -> None:
    """The venv if missing (kept across starts with the work folder), its chain written again every start:
    the notebook's image may have changed since."""
    if not (layer / "pyvenv.cfg").is_file():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(layer)], check=True)
    elif not (layer / "bin" / "python").exists():  # made by a Python since replaced: point it at this one
        for link in (layer / "bin").glob("python*"):
            if link.is_symlink() and not link.exists():
                link.unlink()  # venv --upgrade leaves links in place, dangling or not
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--upgrade", str(layer)], check=True)
    site = site_packages(layer)
    site.mkdir(parents=True, exist_ok=True)
    _replace(site / CHAIN, chain_line(sites), 0o644)
    for name in ("pip", "pip3"):  # pip itself comes from the chained platform Python
        _replace(layer / "bin" / name, PIP.format(python=layer / "bin" / "python"), 0o755)


def write_kernel(data_dir: Path, layer: Path) -> None:
    folder = data_dir / "kernels" / "python3"
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [str(layer / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3", "language": "python", "metadata": {"debugger": True}}
    _replace(folder / "kernel.json", json.dumps(spec, indent=1), 0o644)


def _replace(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text)
    tmp.chmod(mode)
    os.replace(tmp, path)


def main(argv: list[str]) -> None:
    if "--" not in argv:
        raise SystemExit("usage: local_start.py -- <jupyter command>")
    command = argv[argv.index("--") + 1:]
    layer = Path(os.environ["MYAPP_NOTEBOOK_LAYER"])
    sites = [s for s in os.environ.get("MYAPP_NOTEBOOK_SITES", "").split(os.pathsep) if s]
    make_layer(layer, sites)
    write_kernel(Path(os.environ["JUPYTER_DATA_DIR"]), layer)
    os.chdir(os.environ.get("HOME") or layer.parent)  # terminals open where the server runs
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
