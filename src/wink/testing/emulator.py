"""`ProviderEmulator`: one local server speaking the OpenAI, Anthropic and Gemini wires.

Each request takes, in order: the rate limiter's verdict, a scheduled fault, an injected
fault, then the script (queued turns, else the script callable, else `default_turn`, else
a 400 saying the script is exhausted). Faults other than `latency` do not use up a turn.
A request that sends the model's earlier thinking back wrong, or an image, a document or
an audio the real API refuses, gets that API's 400 instead of a turn
(`WireFormat.check_history`, `wink.testing.parts`). A turn's usage reports what the
emulated prompt cache read and wrote (`wink.testing.caching`).

If answering fails (a bug in the emulator, or in the script callable), the request gets
the distinctive answer of `internal.py` instead, what it took from the script is put
back, and the failure is kept until `check()` reports it (`internal.py`).

A request that asks for a stream (`"stream": true`, or Gemini's
`:streamGenerateContent?alt=sse`) is answered as the provider streams (`streams.py`):
server-sent events in a chunked body, `stream_chunk_size` characters of text per event,
`stream_chunk_delay` seconds apart. Error answers to it are plain JSON, as the providers
send them before a stream starts.

The three batch APIs are served too (`batches.py`): each item of a batch is answered as
the request it stands for would be, from the same script.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Self, cast

from ..core.foundation.checks import a_mapping, a_number, a_whole_number, an_instance
from ..core.foundation.errors import ConfigurationError
from .asgi import ASGIApp, make_asgi_app
from .batch_formats import BatchItemRequest, EmulatedBatch, ItemResult
from .batches import BatchEndpoint, BatchStore, batch_endpoint
from .caching import PromptCache
from .faults import Fault, RateLimit
from .formats import IdSource, as_object
from .internal import LOG, EmulatorInternalError, InternalError, internal_error_reply, record_of
from .parts import received_parts
from .ratelimit import RateSnapshot, TokenBucket
from .records import (
    EmulatedRequest,
    EmulatorStats,
    Provider,
    RecordedRequest,
    redact_headers,
)
from .routes import Route, parse_body
from .scripting import ScriptFunction, ScriptItem, call_script, checked_items, script_items
from .server import RawRequest, Reply, ServerThread
from .streams import (
    NOT_JSON,
    STREAM_FAULTS,
    breaks_stream,
    cut,
    plan_stream,
    stream_settings,
    without_stream,
)
from .thinking import ReasoningLedger
from .token_counts import answer_token_count, token_count_route
from .turns import Turn
from .wire import WIRES, Rendered, WireContext, WireFormat
from .wire.bedrock import AwsCredentials, BedrockAuth

__all__ = ["ProviderEmulator", "ScriptFunction", "ScriptItem"]  # the script types, re-exported

_PLACEHOLDER = Turn.text("This answer never arrives complete.")


class _Taken:
    """What one request took from the emulator's state, to put back if answering fails."""

    __slots__ = ("injected", "number", "popped", "provider")

    def __init__(self) -> None:
        self.number: int | None = None
        self.provider: Provider | None = None
        self.popped: list[ScriptItem] = []
        self.injected: Fault | None = None


class ProviderEmulator:
    """A scripted, fault-injecting stand-in for the three providers' HTTP APIs.

    Use it as a context manager (`with` or `async with`); it serves on 127.0.0.1 from a
    background thread, so sync tests, async tests and in-process clients can all reach it.
    `record_limit` keeps only the latest requests (a long-running server needs a bound).
    `batch_items_per_poll` is how many items of a batch one retrieve answers (None: all).
    Bedrock requests must be signed with `aws_credentials` (SigV4, checked with botocore)
    or carry one of `bedrock_api_keys` as a bearer; with neither given, any signature or
    key is taken.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] | ScriptFunction | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_turn: Turn | None = None,
        latency: float = 0.0,
        rate_limit: RateLimit | None = None,
        schedule: Mapping[int, Fault] | None = None,
        google_function_call_ids: bool = False,
        seed: int | None = None,
        record_limit: int | None = None,
        stream_chunk_size: int = 8,
        stream_chunk_delay: float = 0.0,
        batch_items_per_poll: int | None = None,
        aws_credentials: AwsCredentials | None = None,
        bedrock_api_keys: Iterable[str] = (),
    ) -> None:
        where = "ProviderEmulator"
        a_number(latency, f"{where}(latency=...)", "latency", minimum=0)
        if batch_items_per_poll is not None:
            name = "batch_items_per_poll"
            a_whole_number(batch_items_per_poll, f"{where}({name}=...)", name, minimum=1)
        if seed is not None:
            a_whole_number(seed, f"{where}(seed=...)", "seed")
        if record_limit is not None:
            name = "record_limit"
            a_whole_number(record_limit, f"{where}({name}=...)", name, minimum=0, maximum=2**31)
        self._chunk_size, self._chunk_delay = stream_settings(stream_chunk_size, stream_chunk_delay)
        if aws_credentials is not None:
            an_instance(aws_credentials, AwsCredentials, where, "aws_credentials", "AwsCredentials")
        given = cast(object, bedrock_api_keys)
        if isinstance(given, str) or not isinstance(given, Iterable):
            raise ConfigurationError(
                f"{where}(bedrock_api_keys=...) takes keys (a list of str), got "
                f"{bedrock_api_keys!r}",
                option="bedrock_api_keys",
            )
        self._bedrock_auth = BedrockAuth(aws_credentials, tuple(map(str, bedrock_api_keys)))
        self._lock = threading.Lock()
        self._host, self._requested_port = host, port
        self._server: ServerThread | None = None
        self._port = 0
        self._queue: deque[ScriptItem] = deque()
        self._function: ScriptFunction | None = None
        self._default_turn = default_turn
        self._latency = latency
        self._google_ids = google_function_call_ids
        self._ids = IdSource(seed)
        self._ledger = ReasoningLedger()
        self._cache = PromptCache()
        self._count = 0
        self._schedule: dict[int, Fault] = {}
        self._injected: deque[tuple[Fault, int]] = deque()
        self._bucket: TokenBucket | None = None
        self._recorded: deque[RecordedRequest] = deque(maxlen=record_limit)
        self._owner = LOG.owner()
        self._batches = BatchStore(self._ids, self._answer_item, batch_items_per_poll)
        self._reset_stats()
        self.set_script(script)
        self.set_rate_limit(rate_limit)
        if schedule:
            self.schedule(schedule)

    # --- lifecycle

    def start(self) -> Self:
        """Bind and serve (idempotent); `with` calls this for you."""
        if self._server is None:
            server = ServerThread(self.handle, self._host, self._requested_port)
            self._port = server.start()
            self._server = server
        return self

    def close(self) -> None:
        """Stop serving and close every connection, hanging ones included (idempotent);
        then `check()`: an internal error not reported yet is raised here."""
        self._stop()
        self.check()

    def _stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._exit(exc)

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._exit(exc)

    def _exit(self, exc: BaseException | None) -> None:
        """Close; raise the internal errors, or, with an exception already on its way,
        name them on it (they stay pending: a test that expected that exception still
        fails at teardown)."""
        self._stop()
        if exc is None:
            self.check()
            return
        for error in self.internal_errors:
            exc.add_note(error.message)

    @property
    def port(self) -> int:
        """The bound port (an ephemeral one unless `port=` was given)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running; use `with ProviderEmulator()`")
        return self._port

    @property
    def url(self) -> str:
        """`http://HOST:PORT`, with no path."""
        return f"http://{self._host}:{self.port}"

    def base_url(self, provider: Provider) -> str:
        """What to pass as the SDK's `base_url` for that provider."""
        # compared, not hashed: a bad argument (a dict) gets the ConfigurationError too
        wire = next((wire for wire in WIRES.values() if wire.provider == provider), None)
        if wire is None:
            raise ConfigurationError(
                f"unknown provider {provider!r}: one of {', '.join(sorted(WIRES))}",
                option="provider",
            )
        return self.url + wire.base_path

    @property
    def asgi_app(self) -> ASGIApp:
        """The same emulator as an ASGI app, for `httpx2.ASGITransport` (no socket)."""
        return make_asgi_app(self.handle)

    # --- script and faults

    def set_script(self, script: Iterable[ScriptItem] | ScriptFunction | None) -> None:
        """Replace the queued turns (an iterable) or the script callable."""
        with self._lock:
            self._queue.clear()
            self._function = None
            if callable(script):
                self._function = script
            elif script is not None:
                self._queue.extend(checked_items(script_items(script)))

    def enqueue(self, *items: ScriptItem) -> None:
        """Append turns (or faults) to the queue; they are answered before the callable."""
        with self._lock:
            self._queue.extend(checked_items(items))

    def inject(self, fault: Fault, times: int = 1) -> None:
        """Apply `fault` to the next `times` requests (after any injected earlier)."""
        _check_fault("inject(fault=...)", fault)
        a_whole_number(times, "ProviderEmulator.inject(times=...)", "times", minimum=1)
        with self._lock:
            self._injected.append((fault, times))

    def schedule(self, plan: Mapping[int, Fault]) -> None:
        """Faults by request number, counted from now: `{1: ...}` is the next request."""
        where = "ProviderEmulator.schedule(plan=...)"
        for number, fault in a_mapping(plan, where, "plan").items():
            a_whole_number(number, f"{where} request numbers", "plan", minimum=1)
            _check_fault("schedule(plan=...)", fault)
        with self._lock:
            for number, fault in plan.items():
                self._schedule[self._count + number] = fault

    def set_streaming(
        self, *, chunk_size: int | None = None, chunk_delay: float | None = None
    ) -> None:
        """Change how streams are cut: characters of text (or tool arguments) per event,
        and the pause between events."""
        with self._lock:
            self._chunk_size, self._chunk_delay = stream_settings(
                self._chunk_size if chunk_size is None else chunk_size,
                self._chunk_delay if chunk_delay is None else chunk_delay,
            )

    def set_rate_limit(self, limit: RateLimit | None) -> None:
        """Turn the token bucket on (starting full), change it, or turn it off with None."""
        if limit is not None:
            an_instance(limit, RateLimit, "rate_limit", "limit", "a RateLimit or None")
        with self._lock:
            self._bucket = TokenBucket(limit, time.monotonic()) if limit else None

    @property
    def pending(self) -> int:
        """Queued turns and faults not answered yet."""
        with self._lock:
            return len(self._queue)

    # --- observation

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (since the last `clear()`), in order."""
        with self._lock:
            return list(self._recorded)

    @property
    def open_connections(self) -> int:
        """Client connections open right now (a stream a client abandoned must not stay)."""
        server = self._server
        return server.open_connections if server is not None else 0

    @property
    def internal_errors(self) -> tuple[InternalError, ...]:
        """The requests this emulator failed to answer, not yet reported by `check()`."""
        return LOG.pending(self._owner)

    def check(self) -> None:
        """Raise `EmulatorInternalError` for the internal errors not reported yet (each is
        reported once); `close()` and a clean `with` exit call it."""
        errors = LOG.take(self._owner)
        if errors:
            raise EmulatorInternalError(errors)

    @property
    def stats(self) -> EmulatorStats:
        """Counters since start or the last `clear()`."""
        with self._lock:
            return EmulatorStats(
                requests=self._stat_requests,
                responses=dict(sorted(self._stat_responses.items())),
                throttled=self._stat_throttled,
                dropped=self._stat_dropped,
                hung=self._stat_hung,
                internal_errors=self._stat_internal,
            )

    def clear(self) -> None:
        """Forget recorded requests and reset the counters (the script is kept)."""
        with self._lock:
            self._recorded.clear()
            self._reset_stats()

    def reset(self) -> None:
        """`clear()`, and also drop queued turns, pending faults, the schedule, what the
        emulated models remember of their thinking, the emulated prompt cache and the
        batches."""
        with self._lock:
            self._recorded.clear()
            self._reset_stats()
            self._queue.clear()
            self._injected.clear()
            self._schedule.clear()
        self._ledger.clear()
        self._cache.clear()
        self._batches.clear()

    def _reset_stats(self) -> None:
        self._stat_requests = self._stat_throttled = self._stat_dropped = self._stat_hung = 0
        self._stat_internal = 0
        self._stat_responses: dict[int, int] = {}

    # --- request handling (runs on the server thread)

    def handle(self, raw: RawRequest) -> Reply:
        """Answer one request; the transport-independent core that both servers call."""
        taken = _Taken()
        try:
            endpoint = batch_endpoint(raw)
            if endpoint is not None:
                return self._batch_request(raw, endpoint, taken)
            counted = token_count_route(raw)
            if counted is not None:
                return self._token_count(raw, *counted, taken)
            return self._answer(raw, taken)
        except Exception as exc:
            return self._failed(raw, taken, exc)

    def _answer(self, raw: RawRequest, taken: _Taken, batch: str | None = None) -> Reply:
        """One request answered from the script, or one item of `batch` (which takes no
        injected fault and no rate-limit token: those are its batch's requests')."""
        received = time.time()
        body = parse_body(raw.body)
        route = Route(raw, body, self._ledger)
        denied = (
            self._bedrock_auth.check(raw)
            if self._bedrock_auth.guards(route.provider) and not route.not_found and batch is None
            else None
        )
        with self._lock:
            number = taken.number = self._record(raw, route.provider, body, received, batch)
            taken.provider = route.provider
            headers = redact_headers(raw.headers)
            rate = self._take_token(route) if batch is None else None
            pick, delay = self._pick(number, route, rate, taken, batch is None)
            under = self._peek() if isinstance(pick, Fault) and breaks_stream(pick) else None
            chunking = (self._chunk_size, self._chunk_delay)
        delay += self._latency
        if route.provider is None or route.not_found:
            rendered = self._not_found(raw, route, received)
            return self._finish(Reply(rendered.status, rendered.headers, rendered.body, delay))
        wire = WIRES[route.provider]
        ctx = WireContext(
            route.model,
            as_object(body),
            received,
            self._ids,
            rate,
            self._google_ids,
            self._ledger,
            route.host,
        )
        if denied is not None:  # before any fault or turn: nothing else is looked at
            with self._lock:
                self._queue.extendleft(reversed(taken.popped))
                if taken.injected is not None:
                    self._injected.appendleft((taken.injected, 1))
            return self._finish(self._render(wire, denied, ctx, delay))
        fields = as_object(body)
        function = self._function
        if pick is None and function is not None:
            request = EmulatedRequest(
                number=number,
                provider=route.provider,
                path=raw.path,
                model=route.model,
                body=fields,
                headers=headers,
                tool_results=wire.tool_results(fields),
                tools=wire.tool_names(fields),
                parts=received_parts(wire, fields),
                history=wire.history(fields),
                instructions=wire.instructions(fields),
            )
            pick, extra = call_script(function, request)
            delay += extra
        if pick is None:
            pick = self._default_turn or Fault.bad_request(
                f"wink emulator: the script is exhausted (request #{number}); enqueue more "
                "turns or pass default_turn=."
            )
        if isinstance(pick, Fault) and pick.kind == "batch_expired":
            if batch is not None:
                raise BatchExpiry
            pick = Fault.bad_request("wink emulator: Fault.batch_expired() answers batch items")
        if isinstance(pick, Turn):
            pick.check_parts(tuple(part.label for part in received_parts(wire, fields)))
            if pick.expect_history is not None:
                pick.check_history(wire.history(fields))
            pick = self._cache.counted(pick, wire.cache_prefixes(fields))
        if route.stream and batch is None:
            return self._finish(self._render_stream(wire, pick, ctx, delay, under, chunking))
        if isinstance(pick, Fault) and pick.kind in STREAM_FAULTS:
            pick = without_stream(pick)
        return self._finish(self._render(wire, pick, ctx, delay))

    def _peek(self) -> Turn:
        """The turn a stream fault streams before it breaks (not used up)."""
        head = self._queue[0] if self._queue else None
        if isinstance(head, Turn):
            return head
        return self._default_turn or _PLACEHOLDER

    def _render_stream(
        self,
        wire: WireFormat,
        pick: ScriptItem,
        ctx: WireContext,
        delay: float,
        under: Turn | None,
        chunking: tuple[int, float],
    ) -> Reply:
        if isinstance(pick, Fault) and not breaks_stream(pick):
            return self._render(wire, pick, ctx, delay)  # an error answer, a hang, a raw body
        if isinstance(pick, Fault):  # breaks the stream of the turn it does not use up
            plan = plan_stream(wire.provider, under or _PLACEHOLDER, ctx, chunking[0], pick)
        else:
            plan = plan_stream(wire.provider, pick, ctx, chunking[0])
        headers = plan.headers
        if ctx.rate is not None:
            headers.update(wire.rate_headers(ctx.rate, ctx.now))
        return Reply(
            plan.status,
            headers,
            b"",
            delay,
            pieces=tuple(plan.events),
            piece_delay=chunking[1],
            reset_after=plan.reset_after,
        )

    def _take_token(self, route: Route) -> RateSnapshot | None:
        if self._bucket is None or route.provider is None or route.not_found:
            return None
        rate = self._bucket.take(time.monotonic())
        if rate.retry_after is not None:
            self._stat_throttled += 1
        return rate

    def _pick(
        self, number: int, route: Route, rate: RateSnapshot | None, taken: _Taken, faults: bool
    ) -> tuple[ScriptItem | None, float]:
        """The fault or turn for this request (None: ask the callable); and extra delay.
        `faults`: it takes the rate limit's, scheduled and injected faults first."""
        if route.provider is None or route.not_found:
            return None, 0.0
        delay = 0.0
        if faults:
            fault, delay = self._fault(number, rate, taken)
            if fault is not None:
                return fault, delay
        if route.problem is not None:
            return Fault.bad_request(route.problem), delay
        if route.rejection is not None:
            return route.rejection, delay
        while self._queue:
            item = self._queue.popleft()
            taken.popped.append(item)
            if isinstance(item, Fault) and item.kind == "latency":
                delay += item.seconds
                continue
            return item, delay
        return None, delay

    def _fault(
        self, number: int, rate: RateSnapshot | None, taken: _Taken
    ) -> tuple[Fault | None, float]:
        """The rate limit's 429, else the scheduled or injected fault for this request,
        if any; and the latency it adds."""
        if rate is not None and rate.retry_after is not None:
            style = "both" if self._rate_headers() else "seconds"
            return Fault.rate_limit(rate.retry_after, header_style=style), 0.0
        fault = self._schedule.pop(number, None)
        if fault is None:
            fault = taken.injected = self._take_injected()
        if fault is not None and fault.kind == "latency":
            return None, fault.seconds
        return fault, 0.0

    def _record(
        self, raw: RawRequest, provider: Provider | None, body: object, at: float, batch: str | None
    ) -> int:
        """Count and record a request (under the lock); its number."""
        self._count += 1
        self._stat_requests += 1
        number = self._count
        headers = redact_headers(raw.headers)
        self._recorded.append(
            RecordedRequest(
                number, provider, raw.method, raw.path, raw.query, body, headers, at, batch
            )
        )
        return number

    # --- batches (batches.py)

    def _batch_request(self, raw: RawRequest, endpoint: BatchEndpoint, taken: _Taken) -> Reply:
        """A request to a batch API: its faults and rate limit first, then the batch's."""
        received = time.time()
        provider = endpoint.provider
        with self._lock:
            number = taken.number = self._record(
                raw, provider, parse_body(raw.body), received, None
            )
            taken.provider = provider
            rate = self._endpoint_token()
            fault, delay = self._fault(number, rate, taken)
        wire = WIRES[provider]
        ctx = WireContext("", {}, received, self._ids, rate, self._google_ids, self._ledger)
        if fault is not None:
            return self._finish(self._render(wire, fault, ctx, delay + self._latency))
        rendered = self._batches.handle(endpoint, raw, ctx)
        headers = self._with_rate(wire, rendered, ctx)
        return self._finish(Reply(rendered.status, headers, rendered.body, delay + self._latency))

    def _token_count(self, raw: RawRequest, wire: WireFormat, model: str, taken: _Taken) -> Reply:
        """A request to a token-count endpoint (`token_counts.py`): faults and the rate
        limit as for any request, then the count; the script's turns are not used."""
        received = time.time()
        body = parse_body(raw.body)
        with self._lock:
            number = taken.number = self._record(raw, wire.provider, body, received, None)
            taken.provider = wire.provider
            rate = self._endpoint_token()
            fault, delay = self._fault(number, rate, taken)
            answer = fault or answer_token_count(wire, model, body, self._ledger)
        ctx = WireContext(model, {}, received, self._ids, rate, self._google_ids, self._ledger)
        if isinstance(answer, Fault):
            return self._finish(self._render(wire, answer, ctx, delay + self._latency))
        rendered = Rendered(200, {"content-type": "application/json"}, json.dumps(answer).encode())
        headers = self._with_rate(wire, rendered, ctx)
        return self._finish(Reply(200, headers, rendered.body, delay + self._latency))

    def _endpoint_token(self) -> RateSnapshot | None:
        """A rate-limit token for a request outside the generation routes (a batch's, a
        token count's); call with the lock held."""
        if self._bucket is None:
            return None
        rate = self._bucket.take(time.monotonic())
        self._stat_throttled += rate.retry_after is not None
        return rate

    def _answer_item(self, batch: EmulatedBatch, item: BatchItemRequest) -> ItemResult | None:
        """One item of `batch`, answered as its route answers the same request (None:
        the script says the batch expires here)."""
        raw = RawRequest("POST", item.path, "", {"content-type": "application/json"}, item.body)
        taken = _Taken()
        try:
            reply = self._answer(raw, taken, batch.id)
        except BatchExpiry:
            return None
        except Exception as exc:
            reply = self._failed(raw, taken, exc)
        if reply.action != "respond" or reply.pieces is not None:  # a cut connection, a hang
            ctx = WireContext("", {}, time.time(), self._ids)
            rendered = WIRES[batch.provider].render_fault(Fault.server_error(), ctx)
            return ItemResult(rendered.status, rendered.body)
        return ItemResult(reply.status, reply.body)

    def _take_injected(self) -> Fault | None:
        if not self._injected:
            return None
        fault, times = self._injected[0]
        if times <= 1:
            self._injected.popleft()
        else:
            self._injected[0] = (fault, times - 1)
        return fault

    def _render(self, wire: WireFormat, pick: ScriptItem, ctx: WireContext, delay: float) -> Reply:
        if isinstance(pick, Turn):
            rendered = wire.render_turn(pick, ctx)
        elif pick.kind == "hang":
            return Reply(0, {}, b"", delay, "hang", pick.seconds)
        elif pick.kind == "drop_connection":
            rendered = wire.render_turn(_PLACEHOLDER, ctx)
            return Reply(200, self._with_rate(wire, rendered, ctx), rendered.body, delay, "drop")
        elif pick.kind == "non_json":
            rendered = wire.render_turn(_PLACEHOLDER, ctx)
            rendered = Rendered(200, rendered.headers, NOT_JSON)
        elif pick.kind == "http" and pick.chunks is not None:
            rendered = _raw_fault(pick)
            return Reply(
                rendered.status,
                self._with_rate(wire, rendered, ctx),
                b"",
                delay,
                pieces=cut(rendered.body, pick.chunks),
                piece_delay=pick.chunk_delay,
            )
        elif pick.kind == "http":
            rendered = _raw_fault(pick)
        else:
            rendered = wire.render_fault(pick, ctx)
        return Reply(rendered.status, self._with_rate(wire, rendered, ctx), rendered.body, delay)

    def _with_rate(self, wire: WireFormat, rendered: Rendered, ctx: WireContext) -> dict[str, str]:
        headers = rendered.headers
        if ctx.rate is not None and self._rate_headers():
            headers.update(wire.rate_headers(ctx.rate, ctx.now))
        return headers

    def _rate_headers(self) -> bool:
        bucket = self._bucket
        return bucket is None or bucket.limit.headers

    def _not_found(self, raw: RawRequest, route: Route, now: float) -> Rendered:
        """The 404 of the first wire (in registration order) that takes the request as
        its own: its route named it, or its headers or path say so."""
        ctx = WireContext(route.model, {}, now, self._ids)
        for wire in WIRES.values():
            rendered = wire.stray_not_found(raw, wire.provider == route.provider, ctx)
            if rendered is not None:
                return rendered
        raise AssertionError("the OpenAI Chat wire answers any request")  # pragma: no cover

    def _failed(self, raw: RawRequest, taken: _Taken, exc: Exception) -> Reply:
        """Answer a request the emulator failed on, put back what it took, keep the error."""
        with self._lock:
            if taken.number is None:  # it failed before it was counted
                self._count += 1
                self._stat_requests += 1
                taken.number = self._count
            self._queue.extendleft(reversed(taken.popped))
            if taken.injected is not None:
                self._injected.appendleft((taken.injected, 1))
            self._stat_internal += 1
        error = record_of(exc, taken.number, taken.provider, raw.method, raw.path)
        LOG.add(self._owner, error)
        return self._finish(internal_error_reply(error))

    def _finish(self, reply: Reply) -> Reply:
        with self._lock:
            if reply.action == "hang":
                self._stat_hung += 1
            elif reply.action == "drop" or reply.reset_after is not None:
                self._stat_dropped += 1
            else:
                self._stat_responses[reply.status] = self._stat_responses.get(reply.status, 0) + 1
        return reply


class BatchExpiry(Exception):
    """A script's `Fault.batch_expired()` met by a batch item: the batch expires there."""


def _check_fault(call: str, fault: object) -> None:
    an_instance(
        fault, Fault, f"ProviderEmulator.{call}", "fault", "a Fault (Fault.overloaded(), ...)"
    )


def _raw_fault(fault: Fault) -> Rendered:
    body = fault.body
    content_type = "application/json"
    if isinstance(body, bytes):
        data = body
    elif isinstance(body, str):
        data, content_type = body.encode(), "text/plain; charset=utf-8"
    else:
        data = json.dumps(body).encode()
    headers = {"content-type": content_type, **dict(fault.headers)}
    return Rendered(fault.status or 500, headers, data)
