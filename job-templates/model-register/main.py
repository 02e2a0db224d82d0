"""Register a model version with the platform API.

POSTs {name, version, path, framework, metrics, description, project, run_id} to
``$PLATFORM_API_URL/api/v1/models/<name>/versions`` with ``$PLATFORM_API_TOKEN`` (mounted
from a Secret via secretKeyRef, never passed as an argument).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request


def build_record(args: argparse.Namespace) -> dict:
    metrics = json.loads(args.metrics)
    if not isinstance(metrics, dict):
        raise ValueError("--metrics must be a JSON object")
    return {
        "name": args.model_name, "version": args.model_version, "path": args.model_path,
        "framework": args.framework, "metrics": metrics, "description": args.description,
        "project": os.environ.get("MYAPP_PROJECT", ""), "run_id": os.environ.get("MYAPP_RUN_ID", ""),
        "task": os.environ.get("MYAPP_TASK", ""),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--model-version", required=True)
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--framework", default="pytorch")
    parser.add_argument("--metrics", default="{}")
    parser.add_argument("--description", default="")
    parser.add_argument("--dry-run", type=lambda v: v == "true", default=False)
    args = parser.parse_args(argv)
    record = build_record(args)
    if args.dry_run:
        print(json.dumps(record, indent=2))
        return 0
    url = f"{os.environ['PLATFORM_API_URL'].rstrip('/')}/api/v1/models/{args.model_name}/versions"
    request = urllib.request.Request(url, data=json.dumps(record).encode(), method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {os.environ['PLATFORM_API_TOKEN']}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        print(f"registered {args.model_name}:{args.model_version} -> HTTP {response.status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
