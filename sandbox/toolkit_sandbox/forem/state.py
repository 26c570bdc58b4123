"""Interface A's runtime state in a running sandbox: the rate-limit counters, the
switch of the edge's User-Agent rule, the random source of slugs."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from toolkit_sandbox.forem.ratelimit import RateLimiter


@dataclass
class ForemState:
    limiter: RateLimiter
    # Opt-in emulation of the real edge: 403 with an empty body for the User-Agents it
    # refuses (agents.py; off by default so ad-hoc scripts just work).
    user_agent_check: bool = False
    # Random slug suffixes of writes; the seed uses its own fixed generator.
    rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def create(cls, rate_window: float) -> ForemState:
        return cls(limiter=RateLimiter(rate_window))

    def reset(self) -> None:
        """Back to the start: rate limits on with empty windows, the User-Agent rule off."""
        self.limiter.reset()
        self.user_agent_check = False
