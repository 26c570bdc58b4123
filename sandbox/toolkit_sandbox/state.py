"""What one running sandbox holds besides its database: faults, records, and each
interface's runtime state (Forem's rate-limit counters, its User-Agent switch...)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit_sandbox.faults import Faults
from toolkit_sandbox.protocols import Runtime
from toolkit_sandbox.recorder import Recorder
from toolkit_sandbox.store import Store


@dataclass
class SandboxState:
    store: Store
    faults: Faults = field(default_factory=Faults)
    recorder: Recorder = field(default_factory=Recorder)
    # The host the server was started with: a name the control API answers besides the
    # loopback names and the address a connection came in on.
    host: str | None = None
    # Interface name -> its runtime state (`Interface.state`), each with a `reset()`.
    interfaces: dict[str, Runtime] = field(default_factory=dict)
    # Where interfaces keep files (uploaded files, archives, log partitions): one folder
    # each under it. None: the sandbox was built without one (`files()` refuses).
    data_dir: Path | None = None

    def of(self, name: str) -> Any:
        """The runtime state of one interface; its own code knows the type and annotates
        what it gets (`forem: ForemState = state.of("forem")`)."""
        return self.interfaces[name]

    def files(self, name: str) -> Path:
        """The folder of interface `name` for its files, created when first asked for."""
        if self.data_dir is None:
            raise RuntimeError("this sandbox has no data folder")
        folder = self.data_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def reset(self) -> None:
        """Back to the seed: every interface's data and runtime state, pending faults.
        The request counts are kept (POST /__sandbox/stats/reset clears them)."""
        self.store.reset()
        for runtime in self.interfaces.values():
            runtime.reset()
        self.faults.clear()
