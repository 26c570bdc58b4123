"""What one running sandbox holds besides its database: limits, faults, records."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from toolkit.sandbox.faults import Faults
from toolkit.sandbox.ratelimit import RateLimiter
from toolkit.sandbox.recorder import Recorder
from toolkit.sandbox.store import Store


@dataclass
class SandboxState:
    store: Store
    limiter: RateLimiter
    faults: Faults = field(default_factory=Faults)
    recorder: Recorder = field(default_factory=Recorder)
    # Opt-in emulation of the real edge: 403 with an empty body for a missing or
    # generic-library User-Agent (off by default so ad-hoc scripts just work).
    user_agent_check: bool = False
    # Random slug suffixes of writes; the seed uses its own fixed generator.
    rng: random.Random = field(default_factory=random.Random)
    # The host the server was started with: a name the control API answers besides the
    # loopback names and the address a connection came in on.
    host: str | None = None

    def reset(self) -> None:
        """Back to the seed: data, rate-limit windows, pending faults, settings.
        The request counts are kept (POST /__sandbox/stats/reset clears them)."""
        self.store.reset()
        self.limiter.reset()
        self.faults.clear()
        self.user_agent_check = False
