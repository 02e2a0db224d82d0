"""Serve a registered model version as an inference service, through the platform API.

With the run's own token ($PLATFORM_API_TOKEN) in the project $MYAPP_PROJECT: find the version
(--model-version, or the newest of --model-name), then create the service --service-name for it, or
roll it out on the existing service as a canary at --canary-weight % (100: then promote it), and wait
until the service answers. The platform's worker runs the servers (docs/serving.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def call(method: str, url: str, token: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def listed(base: str, token: str, resource: str, **filters: object) -> list[dict]:
    return call("GET", f"{base}/api/v1/{resource}/?{urllib.parse.urlencode(filters)}", token)["items"]


def deploy(base: str, token: str, project_id: int, args: argparse.Namespace) -> tuple[dict, str]:
    """The service after the change, and what was done."""
    versions = listed(base, token, "model_version", project_id=project_id, name=args.model_name, order="-version",
                      page_size=100)
    if args.model_version:
        versions = [v for v in versions if v["version"] == int(args.model_version)]
    if not versions:
        raise LookupError(f"model {args.model_name!r} has no version {args.model_version or '(none registered)'}")
    version = versions[0]
    found = listed(base, token, "inference_service", project_id=project_id, name=args.service_name)
    if not found:
        service = call("POST", f"{base}/api/v1/inference_service/", token, {
            "project_id": project_id, "name": args.service_name, "model_version_id": version["id"]})
        return service, f"created {args.service_name} serving v{version['version']}"
    service = found[0]
    if service["model_version_id"] == version["id"]:
        return service, f"{args.service_name} already serves v{version['version']}"
    url = f"{base}/api/v1/inference_service/{service['id']}"
    service = call("POST", f"{url}/canary", token, {"version_id": version["id"], "weight": args.canary_weight})
    if args.canary_weight < 100:
        return service, f"v{version['version']} takes {args.canary_weight} % of {args.service_name}"
    service = call("POST", f"{url}/promote", token, {"version_id": version["id"]})
    return service, f"{args.service_name} now serves v{version['version']}"


def wait(base: str, token: str, service: dict, seconds: int) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        current = call("GET", f"{base}/api/v1/inference_service/{service['id']}", token)
        if current["state"] == "running" and current["generation"] >= service["generation"]:
            return current
        if time.monotonic() > deadline:
            raise TimeoutError(f"{service['name']} still {current['state']} after {seconds} s: {current['reason']}")
        time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--service-name", required=True)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--model-version", default="")
    parser.add_argument("--canary-weight", type=int, default=100)
    parser.add_argument("--wait-seconds", type=int, default=300)
    args = parser.parse_args(argv)
    base, token = os.environ["PLATFORM_API_URL"].rstrip("/"), os.environ["PLATFORM_API_TOKEN"].strip()
    project = os.environ["MYAPP_PROJECT"]
    found = listed(base, token, "project", name=project)
    if not found:
        print(f"project {project!r} not found or not visible to this token", file=sys.stderr)
        return 1
    try:
        service, done = deploy(base, token, found[0]["id"], args)
        print(done, flush=True)
        if args.wait_seconds:
            service = wait(base, token, service, args.wait_seconds)
    except urllib.error.HTTPError as exc:
        print(f"the platform refused: {exc.code} {exc.read().decode(errors='replace')}", file=sys.stderr)
        return 1
    except (LookupError, TimeoutError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(f"serving at {service['endpoint']} (state {service['state']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
