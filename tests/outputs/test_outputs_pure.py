"""The pure rules of task outputs (myapp/outputs/declarations.py): declarations, references, paths, the volume mount."""
from __future__ import annotations

import pytest

from myapp.outputs import declarations as outputs


def test_a_declaration_is_checked_and_completed():
    assert outputs.check_declaration({"model": {"type": "file", "path": "model.pt"}, "m": {"type": "metrics"}}) == {
        "model": {"type": "file", "path": "model.pt", "description": ""},
        "m": {"type": "metrics", "path": "metrics.jsonl", "description": ""}}
    for bad, field in [({"model": {"type": "blob"}}, "outputs.model.type"),
                       ({"model": {"path": "../etc/passwd"}}, "outputs.model.path"),
                       ({"model": {"path": "/abs"}}, "outputs.model.path"),
                       ({"a b": {}}, "outputs.a b"),
                       ({"model": {"other": 1}}, "outputs.model")]:
        with pytest.raises(outputs.OutputError) as exc:
            outputs.check_declaration(bad)
        assert exc.value.field == field


@pytest.mark.parametrize("path", ["a", "a/b.csv", "x..y", ".hidden"])
def test_relative_paths_inside_the_folder(path):
    assert outputs.PATH.fullmatch(path)


@pytest.mark.parametrize("path", ["..", "../a", "a/../b", "a/..", ".", "./a", "/a", "a//b", "a/", "", "a b"])
def test_paths_that_leave_the_folder_are_refused(path):
    assert not outputs.PATH.fullmatch(path)


def test_references_are_found_with_their_field_and_resolved_as_data():
    args = {"script": "open('{{ tasks.make.outputs.data.csv }}')", "list": ["x", "{{tasks.b.outputs.m}}"]}
    assert list(outputs.references(args)) == [("args.script", "make", "data.csv"), ("args.list[1]", "b", "m")]
    paths = {("make", "data.csv"): "/myapp/outputs/3/make/1/data.csv"}
    assert outputs.resolve(args, paths) == {"script": "open('/myapp/outputs/3/make/1/data.csv')",
                                            "list": ["x", "{{tasks.b.outputs.m}}"]}
    # Data, not a template: nothing else between braces is evaluated or touched.
    assert outputs.resolve("{{ 7*7 }} {{ tasks.make.outputs.data.csv.__class__ }}", paths) == \
        "{{ 7*7 }} {{ tasks.make.outputs.data.csv.__class__ }}"


def test_a_python_task_declares_its_own_outputs():
    template = {"metrics": {"type": "metrics", "path": "metrics.jsonl", "description": ""}}
    assert outputs.task_outputs(template, {"outputs": ["data.csv", "../x"]}) == {
        "metrics": "metrics.jsonl", "data.csv": "data.csv"}


def test_the_mount_gives_the_attempt_its_folder_and_the_rest_read_only():
    pod = {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}
    outputs.mount(pod, "3/make/2")
    assert pod["volumes"] == [{"name": "myapp-outputs", "persistentVolumeClaim": {"claimName": "myapp-outputs"}}]
    assert pod["containers"][0]["volumeMounts"] == [
        {"name": "myapp-outputs", "mountPath": "/myapp/outputs", "readOnly": True},
        {"name": "myapp-outputs", "mountPath": "/myapp/outputs/3/make/2", "subPath": "3/make/2"}]
    assert pod["containers"][0]["env"][-1] == {"name": "MYAPP_OUTPUT_DIR", "value": "/myapp/outputs/3/make/2"}
    assert outputs.mounted_dir([{"spec": {"template": {"spec": pod}}}]) == "3/make/2"


def test_the_claim_takes_its_storage_class_and_size_from_the_environment(monkeypatch):
    assert "storageClassName" not in outputs.claim_manifest("ns")["spec"]
    monkeypatch.setenv("MYAPP_OUTPUTS_STORAGE_CLASS", "nfs")
    monkeypatch.setenv("MYAPP_OUTPUTS_SIZE", "50Gi")
    spec = outputs.claim_manifest("ns")["spec"]
    assert spec == {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "50Gi"}},
                    "storageClassName": "nfs"}


def test_rendered_manifests_mount_the_volume_and_validate_strictly():
    from myapp.rendering import RenderContext, render
    from myapp.rendering.catalog import get_template

    ctx = RenderContext(project="p", namespace="proj", pipeline="pipe", run_id=4, task="train", attempt=1,
                        service_account="runner", output_dir="4/train/1")
    for name, args in [("python", {}), ("pytorch-ddp", None), ("xgboost", None)]:
        template = get_template(name)
        manifests = render(template, args if args is not None else _required(template), ctx)
        assert manifests[-1]["kind"] == "PersistentVolumeClaim"
        assert manifests[-1]["metadata"]["namespace"] == "proj"
        assert outputs.mounted_dir(manifests) == "4/train/1"
    plain = render(get_template("python"), {}, RenderContext(project="p", namespace="proj", service_account="r"))
    assert outputs.mounted_dir(plain) is None and [m["kind"] for m in plain] == ["Job"]


def _required(template):
    schema = template["args_schema"]
    return {name: "x" for name in schema.get("required", []) if schema["properties"][name]["type"] == "string"}


def test_readers_mount_the_volume_read_only_and_are_not_writers():
    from myapp.outputs import s3 as outputs_s3
    from myapp.outputs.declarations import mount, mount_read_only, mounted_dir, read_only_dirs

    def deployment(relative: str) -> dict:
        pod = {"containers": [{"name": "main", "image": "python", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}]}
        mount_read_only(pod, relative)
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "team-a"},
                "spec": {"template": {"spec": pod}}}

    notebook, server = deployment(""), deployment("7/train/1")
    assert notebook["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][-1] == {
        "name": "myapp-outputs", "mountPath": "/myapp/outputs", "readOnly": True}
    assert server["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][-1] == {
        "name": "myapp-outputs", "mountPath": "/myapp/outputs/7/train/1", "subPath": "7/train/1", "readOnly": True}
    assert notebook["spec"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "MYAPP_OUTPUTS", "value": "/myapp/outputs"}]  # where all of it is (a host folder unsandboxed)
    assert "env" not in server["spec"]["template"]["spec"]["containers"][0]  # its model's path says where
    assert [mounted_dir([notebook]), mounted_dir([server])] == [None, None]  # nothing for the backend to make
    assert [read_only_dirs([notebook]), read_only_dirs([server])] == [[""], ["7/train/1"]]
    task = {"containers": [{"name": "main", "image": "python"}]}
    mount(task, "7/use/1")
    assert read_only_dirs([{"spec": {"template": {"spec": task}}}]) == []  # a task's view is its own mounts

    # With an S3 store there is no filesystem to mount: a reader gets nothing, and no transfer containers.
    store = outputs_s3.Settings(bucket="b")
    (stored,) = outputs_s3.to_store([notebook], store)
    spec = stored["spec"]["template"]["spec"]
    assert spec["volumes"] == [] and spec["containers"][0]["volumeMounts"] == [{"name": "x", "mountPath": "/x"}]
    assert spec["containers"][0]["env"] == []  # no MYAPP_OUTPUTS: nothing there
    assert "initContainers" not in spec
    (stored,) = outputs_s3.to_store([server], store)  # a model server: its one attempt folder downloaded
    spec = stored["spec"]["template"]["spec"]
    assert {"name": "myapp-outputs", "emptyDir": {}} in spec["volumes"]
    (download,) = spec["initContainers"]
    assert download["name"] == outputs_s3.DOWNLOAD and download["args"] == ["7/train/1"]
    assert spec["containers"][0]["volumeMounts"][-1]["subPath"] == "7/train/1"
