"""The local backend gives an attempt its output folder: sandboxed at /myapp/outputs (the attempt's own
folder writable, the rest read-only); with isolation switched off, at its host folder, the same paths
rewritten in argv and env. Either way the files land in the project's outputs folder, kept after cleanup."""
from __future__ import annotations

import pytest

from myapp.backends.local import sandbox
from myapp.rendering import RenderContext, render
from myapp.rendering.catalog import get_template

SCRIPT = """
import os
out = os.environ["MYAPP_OUTPUT_DIR"]
open(os.path.join(out, "result.txt"), "w").write("ok")
print("OUT", out)
print("ARG", "/myapp/outputs/5/first/1/result.txt")
"""


def ctx(task: str) -> RenderContext:
    return RenderContext(project="p", namespace="proj-outputs", pipeline="pipe", run_id=5, task=task, attempt=1,
                         service_account="runner", output_dir=f"5/{task}/1")


@pytest.mark.parametrize("mode", ["sandboxed", "unsandboxed"])
def test_the_attempt_writes_its_folder_and_it_is_kept(backends, mode):
    isolation = sandbox.detect() if mode == "sandboxed" else sandbox.Isolation(sandbox.NONE, "off for the test")
    if mode == "sandboxed" and not isolation.sandboxed:
        pytest.skip(f"this machine cannot sandbox jobs: {isolation.reason}")  # the unsandboxed case still runs
    backend = backends(isolation=isolation)
    ref = backend.submit(render(get_template("python"), {"script": SCRIPT}, ctx("first")))
    assert backend.wait(ref, timeout=60).state.value == "succeeded"
    host = backend.outputs_dir("proj-outputs")
    assert (host / "5" / "first" / "1" / "result.txt").read_text() == "ok"
    lines = [line.line for line in backend.logs(ref)]
    if mode == "sandboxed":
        assert "OUT /myapp/outputs/5/first/1" in lines and "ARG /myapp/outputs/5/first/1/result.txt" in lines
    else:  # nothing mounts the volume at its place: the host folder, in env and in argv alike
        assert f"OUT {host}/5/first/1" in lines and f"ARG {host}/5/first/1/result.txt" in lines
    backend.cleanup(ref, _NoArchive())
    assert (host / "5" / "first" / "1" / "result.txt").is_file()  # outputs outlive the attempt's cleanup


class _NoArchive:
    def write(self, ref, lines):
        pass

    def read(self, ref):
        return []


READER = """
import os
where = os.environ["MYAPP_OUTPUTS"]
print("AT", where)
print("READ", open(os.path.join(where, "5/first/1/result.txt")).read())
"""


@pytest.mark.parametrize("mode", ["sandboxed", "unsandboxed"])
def test_a_reader_of_all_outputs_finds_them_in_MYAPP_OUTPUTS(backends, mode):
    """What a notebook's pod gets (outputs.mount_read_only, as rendering/kinds/notebook.py calls it): the
    project's outputs at MYAPP_OUTPUTS, /myapp/outputs in the sandbox, the host folder without one."""
    from myapp.outputs import declarations as outputs

    isolation = sandbox.detect() if mode == "sandboxed" else sandbox.Isolation(sandbox.NONE, "off for the test")
    if mode == "sandboxed" and not isolation.sandboxed:
        pytest.skip(f"this machine cannot sandbox jobs: {isolation.reason}")
    backend = backends(isolation=isolation)
    host = backend.outputs_dir("proj-outputs")
    (host / "5" / "first" / "1").mkdir(parents=True)
    (host / "5" / "first" / "1" / "result.txt").write_text("ok")
    for made in [host, *host.rglob("*")]:
        made.chmod(0o755 if made.is_dir() else 0o644)
    reader = RenderContext(project="p", namespace="proj-outputs", pipeline="pipe", run_id=6, task="read",
                           attempt=1, service_account="runner")
    manifests = render(get_template("python"), {"script": READER}, reader)
    job = next(m for m in manifests if m["kind"] == "Job")
    outputs.mount_read_only(job["spec"]["template"]["spec"])
    ref = backend.submit(manifests)
    assert backend.wait(ref, timeout=60).state.value == "succeeded", [line.line for line in backend.logs(ref)]
    lines = [line.line for line in backend.logs(ref)]
    assert "READ ok" in lines
    assert f"AT {outputs.MOUNT if mode == 'sandboxed' else host}" in lines
    backend.cleanup(ref, _NoArchive())
