"""A container's environment as kubelet would give it, the planner's env part (a mixin of ``Planner``): the
host variables a replica inherits (HOST_ENV, nothing else of the platform's), ``env`` and ``envFrom``
with ``$(VAR)`` expansion, ``valueFrom`` (the job's own Secret and ConfigMap manifests, else the project's
files under the workdir's ``secrets/`` and ``configmaps/``, field and resource refs), then the operator's
variables and the platform's overrides. A value that cannot be built is a ``ConfigError``.
"""
from __future__ import annotations

import base64
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Host environment a replica inherits; nothing else of the platform's own env leaks in.
HOST_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "SHELL",
            "LD_LIBRARY_PATH", "CUDA_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
            "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
ENV_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
SECRET_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")


class ConfigError(Exception):
    """A container's config cannot be built (K8s: CreateContainerConfigError)."""


class ContainerEnv:
    """The env of one container; Planner holds the settings these read."""
    workdir: Path
    python: str
    extra_env: Mapping[str, str]
    override_env: Mapping[str, str]
    sandbox_env: Mapping[str, str]

    def _path(self) -> str:
        return os.pathsep.join([str(Path(self.python).parent), os.environ.get("PATH", "/usr/bin:/bin")])

    def base_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k in HOST_ENV or k.startswith("LC_")}
        env["PATH"] = self._path()
        env.update(self.sandbox_env)
        env.update(self.extra_env)
        return env

    def _env(self, container: Mapping[str, Any], pod: Mapping[str, Any], operator_env: Mapping[str, str],
             data: dict[str, dict[str, dict[str, str]]]) -> dict[str, str]:
        defined: dict[str, str] = {}
        for source in container.get("envFrom") or []:
            prefix = source.get("prefix", "")
            for kind, key in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
                if key in source:
                    ref = source[key]
                    values = self._all_values(kind, pod["namespace"], ref["name"], data, ref.get("optional", False))
                    defined.update({prefix + k: v for k, v in values.items()})
        for item in container.get("env") or []:
            name = item["name"]
            if "valueFrom" in item:
                value = self._value_from(item["valueFrom"], container, pod, data)
                if value is None:
                    continue
                defined[name] = value
            else:
                defined[name] = expand(str(item.get("value", "")), defined)
        env = self.base_env()
        env.update(defined)
        env.update(operator_env)
        env.update(self.override_env)
        return env

    def _value_from(self, source: Mapping[str, Any], container: Mapping[str, Any], pod: Mapping[str, Any],
                    data: dict[str, dict[str, dict[str, str]]]) -> str | None:
        for kind, key in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
            if key in source:
                ref = source[key]
                return self._value(kind, pod["namespace"], ref["name"], ref["key"], data, ref.get("optional", False))
        if "fieldRef" in source:
            path = source["fieldRef"]["fieldPath"]
            match = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
            if match:
                return pod[match.group(1)].get(match.group(2), "")
            fields = {"metadata.name": pod["name"], "metadata.namespace": pod["namespace"],
                      "spec.nodeName": socket.gethostname(), "spec.serviceAccountName": pod["service_account"],
                      "status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1"}
            if path not in fields:
                raise ConfigError(f"fieldRef {path} is not available locally")
            return fields[path]
        if "resourceFieldRef" in source:
            resource = source["resourceFieldRef"]["resource"]
            section, _, name = resource.partition(".")
            value = str(((container.get("resources") or {}).get(section) or {}).get(name, "0"))
            return value
        raise ConfigError(f"unsupported valueFrom {sorted(source)}")

    def _folder(self, kind: str, namespace: str, name: str) -> Path:
        """Per project: a job reads only its own namespace's secrets and configmaps."""
        if not SECRET_NAME.fullmatch(name):
            raise ConfigError(f"invalid {kind.lower()} name {name!r}")
        return self.workdir / ("secrets" if kind == "Secret" else "configmaps") / namespace / name

    def _value(self, kind: str, namespace: str, name: str, key: str, data: dict[str, dict[str, dict[str, str]]],
               optional: bool) -> str | None:
        if key in data[kind].get(name, {}):
            return data[kind][name][key]
        if not SECRET_KEY.fullmatch(key) or key in (".", ".."):
            raise ConfigError(f"invalid {kind.lower()} key {key!r}")
        path = self._folder(kind, namespace, name) / key
        try:
            value = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if optional:
                return None
            raise ConfigError(f"{kind.lower()} {name!r} key {key!r} not found: create the file {path}") from None
        return value[:-1] if value.endswith("\n") else value  # `echo token > file` leaves a newline

    def _all_values(self, kind: str, namespace: str, name: str, data: dict[str, dict[str, dict[str, str]]],
                    optional: bool) -> dict[str, str]:
        if name in data[kind]:
            return dict(data[kind][name])
        folder = self._folder(kind, namespace, name)
        if not folder.is_dir():
            if optional:
                return {}
            raise ConfigError(f"{kind.lower()} {name!r} not found: create the folder {folder} (one file per key)")
        return {p.name: self._value(kind, namespace, name, p.name, data, False) or ""
                for p in sorted(folder.iterdir()) if p.is_file() and SECRET_KEY.fullmatch(p.name)}


def object_data(obj: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in (obj.get("data") or {}).items():
        out[key] = base64.b64decode(value).decode("utf-8", "replace") if obj["kind"] == "Secret" else str(value)
    out.update({k: str(v) for k, v in (obj.get("stringData") or {}).items()})
    return out


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: defined variables only; ``$$`` escapes a ``$``."""
    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return ENV_REF.sub(sub, text)
