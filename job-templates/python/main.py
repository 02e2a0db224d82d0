"""Entry point of the `python` job template: run a script text or a shell command."""
from __future__ import annotations

import argparse
import subprocess
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--script", default="", help="Python source executed as __main__")
    parser.add_argument("--command", default="", help="shell command run instead of the script")
    args = parser.parse_args(argv)
    if args.command:
        # The user asked for a shell command: that is the whole point, so use a shell.
        return subprocess.run(["/bin/sh", "-c", args.command], check=False).returncode
    code = compile(args.script, "<script>", "exec")
    exec(code, {"__name__": "__main__", "__file__": "<script>"})  # noqa: S102 - user's own job
    return 0


if __name__ == "__main__":
    sys.exit(main())
