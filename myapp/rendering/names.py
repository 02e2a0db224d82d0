"""Kubernetes names and label values.

Everything here is deterministic: the same input always yields the same name, and a
short SHA-256 suffix is appended whenever text had to be shortened or rewritten, so two
different inputs never collapse onto one name.
"""
from __future__ import annotations

import hashlib
import re

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
# Qualified name: optional DNS subdomain prefix + "/" + name (label keys, annotation keys).
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

HASH_LEN = 8
# Workload names stay below 63 so that controller-derived names still fit a DNS label:
# training-operator services "<job>-worker-12", StatefulSet revision label "<name>-<10 chars>".
NAME_MAX = 52


def stable_hash(text: str, length: int = HASH_LEN) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def is_dns1123_label(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 63 and DNS1123_LABEL.fullmatch(value) is not None


def is_dns1035_label(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 63 and DNS1035_LABEL.fullmatch(value) is not None


def is_dns1123_subdomain(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 253 and DNS1123_SUBDOMAIN.fullmatch(value) is not None


def is_label_value(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 63 and LABEL_VALUE.fullmatch(value) is not None


def is_qualified_key(key: object) -> bool:
    """Label/annotation key: ``[prefix/]name``, prefix a DNS subdomain, name <= 63 chars."""
    if not isinstance(key, str) or not key:
        return False
    prefix, _, name = key.rpartition("/")
    if "/" in key and not is_dns1123_subdomain(prefix):
        return False
    return len(name) <= 63 and _QUALIFIED_NAME.fullmatch(name) is not None


def k8s_name(*parts: object, max_len: int = NAME_MAX) -> str:
    """A DNS-1035 label (so also DNS-1123) built from ``parts`` joined by '-'.

    Lower-cases, replaces anything outside ``[a-z0-9-]``, makes it start with a letter. If
    the result differs from the input or is too long, ``-<hash>`` of the raw input is added.
    """
    raw = "-".join(str(p) for p in parts if p is not None and str(p) != "")
    name = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", raw.lower())).strip("-")
    if not name or not name[0].isalpha():
        name = ("x-" + name).rstrip("-")
    if name == raw and len(name) <= max_len:
        return name
    head = name[: max_len - HASH_LEN - 1].rstrip("-")
    return f"{head}-{stable_hash(raw)}"


def label_value(value: object) -> str:
    """A valid label value for ``value`` (empty stays empty); hash-suffixed when rewritten."""
    raw = "" if value is None else str(value)
    if is_label_value(raw):
        return raw
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", raw)
    head = cleaned[: 63 - HASH_LEN - 1].strip("-_.")
    return f"{head}-{stable_hash(raw)}" if head else stable_hash(raw)
