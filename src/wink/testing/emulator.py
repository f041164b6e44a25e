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

What the emulator holds between requests (script, faults, rate limiter, records) is
`state.py`'s; how a turn or fault becomes the bytes sent is `replies.py`'s.
"""

from __future__ import annotations

import json
import time
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
from .hosts import EmulatedHost
from .internal import LOG, EmulatorInternalError, InternalError, internal_error_reply, record_of
from .parts import received_parts
from .ratelimit import RateSnapshot
from .records import EmulatedRequest, EmulatorStats, Provider, RecordedRequest, redact_headers
from .replies import not_found, render, render_stream, with_rate
from .routes import Route, parse_body
from .scripting import ScriptFunction, ScriptItem, call_script
from .server import RawRequest, Reply, ServerThread
from .state import EmulatorState, Taken
from .streams import STREAM_FAULTS, stream_settings, without_stream
from .thinking import ReasoningLedger
from .token_counts import answer_token_count, token_count_route
from .turns import Turn
from .wire import WIRES, Rendered, WireContext, WireFormat
from .wire.bedrock import AwsCredentials, BedrockAuth

__all__ = ["ProviderEmulator", "ScriptFunction", "ScriptItem"]  # the script types, re-exported


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
        chunking = stream_settings(stream_chunk_size, stream_chunk_delay)
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
        self._host, self._requested_port = host, port
        self._server: ServerThread | None = None
        self._port = 0
        self._state = EmulatorState(chunking, record_limit)
        self._default_turn = default_turn
        self._latency = latency
        self._google_ids = google_function_call_ids
        self._ids = IdSource(seed)
        self._ledger = ReasoningLedger()
        self._cache = PromptCache()
        self._owner = LOG.owner()
        self._batches = BatchStore(self._ids, self._answer_item, batch_items_per_poll)
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
        self._state.set_script(script)

    def enqueue(self, *items: ScriptItem) -> None:
        """Append turns (or faults) to the queue; they are answered before the callable."""
        self._state.enqueue(items)

    def inject(self, fault: Fault, times: int = 1) -> None:
        """Apply `fault` to the next `times` requests (after any injected earlier)."""
        _check_fault("inject(fault=...)", fault)
        a_whole_number(times, "ProviderEmulator.inject(times=...)", "times", minimum=1)
        self._state.inject(fault, times)

    def schedule(self, plan: Mapping[int, Fault]) -> None:
        """Faults by request number, counted from now: `{1: ...}` is the next request."""
        where = "ProviderEmulator.schedule(plan=...)"
        for number, fault in a_mapping(plan, where, "plan").items():
            a_whole_number(number, f"{where} request numbers", "plan", minimum=1)
            _check_fault("schedule(plan=...)", fault)
        self._state.schedule(plan)

    def set_streaming(
        self, *, chunk_size: int | None = None, chunk_delay: float | None = None
    ) -> None:
        """Change how streams are cut: characters of text (or tool arguments) per event,
        and the pause between events."""
        size, delay = self._state.chunking
        self._state.set_chunking(
            stream_settings(
                size if chunk_size is None else chunk_size,
                delay if chunk_delay is None else chunk_delay,
            )
        )

    def set_rate_limit(self, limit: RateLimit | None) -> None:
        """Turn the token bucket on (starting full), change it, or turn it off with None."""
        if limit is not None:
            an_instance(limit, RateLimit, "rate_limit", "limit", "a RateLimit or None")
        self._state.set_rate_limit(limit)

    @property
    def pending(self) -> int:
        """Queued turns and faults not answered yet."""
        return self._state.pending

    # --- observation

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (since the last `clear()`), in order."""
        return self._state.requests

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
        return self._state.stats

    def clear(self) -> None:
        """Forget recorded requests and reset the counters (the script is kept)."""
        self._state.clear()

    def reset(self) -> None:
        """`clear()`, and also drop queued turns, pending faults, the schedule, what the
        emulated models remember of their thinking, the emulated prompt cache and the
        batches."""
        self._state.reset()
        self._ledger.clear()
        self._cache.clear()
        self._batches.clear()

    # --- request handling (runs on the server thread)

    def handle(self, raw: RawRequest) -> Reply:
        """Answer one request; the transport-independent core that both servers call."""
        taken = Taken()
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

    def _answer(self, raw: RawRequest, taken: Taken, batch: str | None = None) -> Reply:
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
        admitted = self._state.admit(raw, route, body, received, batch, taken, self._default_turn)
        number, pick = admitted.number, admitted.pick
        delay = admitted.delay + self._latency
        if route.provider is None or route.not_found:
            rendered = not_found(raw, route, WireContext(route.model, {}, received, self._ids))
            return self._finish(Reply(rendered.status, rendered.headers, rendered.body, delay))
        wire = WIRES[route.provider]
        ctx = self._context(route.model, body, received, admitted.rate, route.host)
        if denied is not None:  # before any fault or turn: nothing else is looked at
            self._state.put_back(taken)
            return self._finish(self._render(wire, denied, ctx, delay))
        fields = as_object(body)
        function = self._state.function
        if pick is None and function is not None:
            request = EmulatedRequest(
                number=number,
                provider=route.provider,
                path=raw.path,
                model=route.model,
                body=fields,
                headers=redact_headers(raw.headers),
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
            reply = render_stream(
                wire,
                pick,
                ctx,
                delay,
                under=admitted.under,
                chunking=admitted.chunking,
                rate_headers=self._state.rate_headers,
            )
            return self._finish(reply)
        if isinstance(pick, Fault) and pick.kind in STREAM_FAULTS:
            pick = without_stream(pick)
        return self._finish(self._render(wire, pick, ctx, delay))

    def _context(
        self,
        model: str,
        body: object,
        received: float,
        rate: RateSnapshot | None,
        host: EmulatedHost | None = None,
    ) -> WireContext:
        """What a wire renders one answer with (the ids, call-id style and thinking ledger
        are the emulator's)."""
        ids, google_ids, ledger = self._ids, self._google_ids, self._ledger
        return WireContext(model, as_object(body), received, ids, rate, google_ids, ledger, host)

    # --- batches (batches.py) and token counts (token_counts.py)

    def _batch_request(self, raw: RawRequest, endpoint: BatchEndpoint, taken: Taken) -> Reply:
        """A request to a batch API: its faults and rate limit first, then the batch's."""
        received = time.time()
        provider = endpoint.provider
        body = parse_body(raw.body)
        rate, fault, delay = self._state.admit_endpoint(raw, provider, body, received, taken)
        delay += self._latency
        wire = WIRES[provider]
        ctx = self._context("", {}, received, rate)
        if fault is not None:
            return self._finish(self._render(wire, fault, ctx, delay))
        rendered = self._batches.handle(endpoint, raw, ctx)
        headers = with_rate(wire, rendered, ctx, rate_headers=self._state.rate_headers)
        return self._finish(Reply(rendered.status, headers, rendered.body, delay))

    def _token_count(self, raw: RawRequest, wire: WireFormat, model: str, taken: Taken) -> Reply:
        """A request to a token-count endpoint: faults and the rate limit as for any
        request, then the count; the script's turns are not used."""
        received = time.time()
        body = parse_body(raw.body)
        rate, fault, delay = self._state.admit_endpoint(raw, wire.provider, body, received, taken)
        delay += self._latency
        answer = fault or answer_token_count(wire, model, body, self._ledger)
        ctx = self._context(model, {}, received, rate)
        if isinstance(answer, Fault):
            return self._finish(self._render(wire, answer, ctx, delay))
        rendered = Rendered(200, {"content-type": "application/json"}, json.dumps(answer).encode())
        headers = with_rate(wire, rendered, ctx, rate_headers=self._state.rate_headers)
        return self._finish(Reply(200, headers, rendered.body, delay))

    def _answer_item(self, batch: EmulatedBatch, item: BatchItemRequest) -> ItemResult | None:
        """One item of `batch`, answered as its route answers the same request (None:
        the script says the batch expires here)."""
        raw = RawRequest("POST", item.path, "", {"content-type": "application/json"}, item.body)
        taken = Taken()
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

    # --- replies

    def _render(self, wire: WireFormat, pick: ScriptItem, ctx: WireContext, delay: float) -> Reply:
        return render(wire, pick, ctx, delay, rate_headers=self._state.rate_headers)

    def _failed(self, raw: RawRequest, taken: Taken, exc: Exception) -> Reply:
        """Answer a request the emulator failed on, put back what it took, keep the error."""
        number = self._state.failed(taken)
        error = record_of(exc, number, taken.provider, raw.method, raw.path)
        LOG.add(self._owner, error)
        return self._finish(internal_error_reply(error))

    def _finish(self, reply: Reply) -> Reply:
        return self._state.finish(reply)


class BatchExpiry(Exception):
    """A script's `Fault.batch_expired()` met by a batch item: the batch expires there."""


def _check_fault(call: str, fault: object) -> None:
    an_instance(
        fault, Fault, f"ProviderEmulator.{call}", "fault", "a Fault (Fault.overloaded(), ...)"
    )
