"""A request whose answer comes later, for the loop: the seam batches use.

A batch round is one request of the loop whose answer arrives hours later, in another
call, perhaps in another process. The loop needs two things for that, and no second copy
of its round logic:

* a `ModelClient` may raise `AnswerLater` from `request`: the loop stops before that
  round and puts where it is on the exception (`LoopState`: the conversation so far and
  the counters its limits need);
* `run_evaluation(..., resume=state)` goes on from there: the same request is made
  again, and the client answers it this time (with the answer that came in the batch).

Everything else (tools, structured answers, approvals, the round, budget and failed-round
limits) is the loop's own, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..foundation.cost import PriceTag
from ..foundation.events import ToolInvoked
from ..foundation.messages import Usage
from ..foundation.transcript import TranscriptMessage

__all__ = ["AnswerLater", "LoopState"]


@dataclass(frozen=True, slots=True)
class LoopState:
    """Where an evaluation stopped: before the request of round `round`, whose answer
    is awaited.

    `messages` is the conversation the request sends (instructions apart); the counters
    keep the limits whole across the wait: `failed_rounds` (consecutive tool rounds whose
    every call failed), `usage` (what the earlier requests cost, the budget's), `rejected`
    (structured answers rejected so far, `max_output_retries`'), `thoughts` (readable
    thinking so far). `invocations` are the tools it ran and `price_tag` what the earlier
    requests cost, both kept in this process only (a job read back from JSON has no
    cost for its earlier rounds: its items' `cost` is then None, never a part sum).
    """

    messages: tuple[TranscriptMessage, ...]
    round: int
    failed_rounds: int = 0
    usage: Usage = field(default_factory=Usage)
    rejected: int = 0
    thoughts: tuple[str, ...] = ()
    invocations: tuple[ToolInvoked, ...] = field(default=(), compare=False)
    price_tag: PriceTag | None = field(default=None, compare=False)


class AnswerLater(Exception):
    """Raised by a `ModelClient`'s `request` whose answer comes later (a batch). The
    loop sets `state` (where it stopped) and lets it through: no failure is recorded."""

    state: LoopState | None = None
