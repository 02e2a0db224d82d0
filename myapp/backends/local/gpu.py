"""GPUs of the local machine: discovery through NVML and a machine-wide allocation pool.

``nvml_devices()`` is the default device reader; the backend takes any other callable (or a
fixed list), which is how tests fake a machine with GPUs. The pool is one JSON file under the
backend's workdir guarded by ``flock``, so several backends / supervisors on the same machine
share it. An allocation belongs to a supervisor process (pid + create time): when that
process is gone the GPUs are free again, whatever happened to it.
"""
from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .procs import ProcessId, is_alive


@dataclass(frozen=True)
class GpuDevice:
    index: int  # NVML / PCI-bus order; what CUDA_VISIBLE_DEVICES names (with CUDA_DEVICE_ORDER=PCI_BUS_ID)
    uuid: str = ""
    name: str = ""
    memory_bytes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def nvml_devices() -> list[GpuDevice]:
    """GPUs NVML sees; [] when nvidia-ml-py is not installed or there is no driver."""
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return []
    try:
        out = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(handle)
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total
            out.append(GpuDevice(index, _text(uuid), _text(name), int(memory)))
        return out
    finally:
        pynvml.nvmlShutdown()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class GpuSampler:
    """Utilisation and per-process memory of the GPUs a replica holds (NVML); None without NVML."""

    def __init__(self) -> None:
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
        except Exception:  # absent library or driver: no GPU metrics
            self._nvml = None

    def sample(self, devices: Sequence[int], pids: set[int]) -> tuple[float | None, int | None]:
        if self._nvml is None or not devices:
            return None, None
        nv = self._nvml
        utils, memory = [], 0
        try:
            for index in devices:
                handle = nv.nvmlDeviceGetHandleByIndex(index)
                utils.append(float(nv.nvmlDeviceGetUtilizationRates(handle).gpu))
                for proc in nv.nvmlDeviceGetComputeRunningProcesses(handle):
                    if proc.pid in pids and proc.usedGpuMemory:
                        memory += int(proc.usedGpuMemory)
        except Exception:  # a device vanished / permission: report nothing
            return None, None
        return sum(utils) / len(utils), memory

    def close(self) -> None:
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception:
                pass


class GpuPool:
    """Machine-wide GPU allocations: ``{owner: {"devices": [...], "holder": ProcessId}}``."""

    def __init__(self, path: Path, devices: Sequence[GpuDevice]):
        self.path = Path(path)
        self.devices = [d.index for d in devices]

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                data = json.loads(self.path.read_text()) if self.path.exists() else {}
            except ValueError:
                data = {}
            before = json.dumps(data, sort_keys=True)
            live = {owner: entry for owner, entry in data.items()
                    if is_alive(ProcessId.from_dict(entry["holder"]))}
            yield live
            if json.dumps(live, sort_keys=True) != before:
                tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
                tmp.write_text(json.dumps(live, sort_keys=True))
                tmp.replace(self.path)

    def allocations(self) -> dict[str, list[int]]:
        with self._locked() as data:
            return {owner: list(entry["devices"]) for owner, entry in data.items()}

    def free(self) -> list[int]:
        used = {d for devices in self.allocations().values() for d in devices}
        return [d for d in self.devices if d not in used]

    def allocate(self, owner: str, count: int, holder: ProcessId) -> list[int] | None:
        """``count`` free devices for ``owner`` (all or nothing), or None if not enough are free.
        Asking again for an owner that already holds devices returns the same devices."""
        if count <= 0:
            return []
        with self._locked() as data:
            if owner in data:
                return list(data[owner]["devices"])
            used = {d for entry in data.values() for d in entry["devices"]}
            free = [d for d in self.devices if d not in used]
            if len(free) < count:
                return None
            chosen = free[:count]
            data[owner] = {"devices": chosen, "holder": holder.as_dict()}
            return chosen

    def release(self, owner: str) -> None:
        with self._locked() as data:
            data.pop(owner, None)
