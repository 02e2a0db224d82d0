"""Register a model version with the platform API.

Looks the project up by name (``$MYAPP_PROJECT``), then POSTs {project_id, name, version,
uri, framework, metrics, signature, description} to ``$PLATFORM_API_URL/api/v1/model_version/`` with the run's own
API token ``$PLATFORM_API_TOKEN`` (mounted from the run's Secret via secretKeyRef, never an argument).
An empty --model-version lets the platform number it (the next integer for that name). The record names
this attempt (``task_run_id``, found from ``$MYAPP_RUN_ID`` and ``$MYAPP_TASK``), so the version links back
to its run.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.parse
import urllib.request


def build_record(args: argparse.Namespace, project_id: int | None) -> dict:
    metrics = json.loads(args.metrics)
    if not isinstance(metrics, dict):
        raise ValueError("--metrics must be a JSON object")
    record = {"project_id": project_id, "name": args.model_name, "uri": args.model_path,
              "framework": args.framework, "metrics": metrics}
    if args.signature:
        signature = json.loads(args.signature)
        if not isinstance(signature, dict):
            raise ValueError("--signature must be a JSON object")
        record["signature"] = signature
    if args.description:
        record["description"] = args.description
    if args.model_version:
        if not args.model_version.isdigit():
            raise ValueError("--model-version must be a whole number, or empty to let the platform number it")
        record["version"] = int(args.model_version)
    return record


def call(method: str, url: str, token: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def this_task_run(base: str, token: str) -> int | None:
    """The id of the attempt running this (from the contract's MYAPP_RUN_ID and MYAPP_TASK), if any."""
    run_id, task = os.environ.get("MYAPP_RUN_ID", ""), os.environ.get("MYAPP_TASK", "")
    if not run_id.isdigit() or not task:
        return None
    run = call("GET", f"{base}/api/v1/pipeline_run/{run_id}", token)
    query = urllib.parse.urlencode({"pipeline_id": run["pipeline_id"], "name": task})
    tasks = call("GET", f"{base}/api/v1/task/?{query}", token)["items"]
    if not tasks:
        return None
    query = urllib.parse.urlencode({"pipeline_run_id": run_id, "task_id": tasks[0]["id"], "order": "-id"})
    attempts = call("GET", f"{base}/api/v1/task_run/?{query}", token)["items"]
    return attempts[0]["id"] if attempts else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--model-version", default="")
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--framework", default="pytorch")
    parser.add_argument("--metrics", default="{}")
    parser.add_argument("--signature", default="")
    parser.add_argument("--description", default="")
    parser.add_argument("--dry-run", type=lambda v: v == "true", default=False)
    args = parser.parse_args(argv)
    if args.dry_run:  # what would be sent, for the project this job runs in
        record = build_record(args, None)
        del record["project_id"]
        print(json.dumps({"project": os.environ.get("MYAPP_PROJECT", ""), **record}, indent=2))
        return 0
    base, token = os.environ["PLATFORM_API_URL"].rstrip("/"), os.environ["PLATFORM_API_TOKEN"].strip()
    project = os.environ["MYAPP_PROJECT"]
    found = call("GET", f"{base}/api/v1/project/?{urllib.parse.urlencode({'name': project})}", token)["items"]
    if not found:
        print(f"project {project!r} not found or not visible to this token", file=sys.stderr)
        return 1
    record = build_record(args, found[0]["id"])
    task_run = this_task_run(base, token)
    if task_run is not None:  # the lineage: the version links back to this run
        record["task_run_id"] = task_run
    created = call("POST", f"{base}/api/v1/model_version/", token, record)
    print(f"registered {created['name']} version {created['version']} (id {created['id']}) -> {created['uri']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
