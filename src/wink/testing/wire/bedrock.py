"""Bedrock Runtime's Converse (`POST /model/{modelId}/converse`) and ConverseStream
(`/converse-stream`, AWS event-stream frames) on the wire, and the request
authentication Bedrock checks: a SigV4 signature (recomputed with botocore from the
test's credentials) or a Bedrock API key as a bearer."""

from __future__ import annotations

import base64
import datetime
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ...core.foundation.content import PartKind
from ...core.foundation.errors import ConfigurationError
from ..caching import CachePrefix, prefixes
from ..eventstream import event_frame
from ..faults import Fault
from ..formats import as_list, as_object, as_str, dump
from ..history import HistoryEntry, arguments_text, content_text
from ..hosts import HostRoute
from ..parts import FoundPart, looks_like
from ..ratelimit import RateSnapshot
from ..records import Provider, ToolResultView
from ..server import RawRequest
from ..thinking import ReasoningLedger, intact, opens, seal
from ..turns import Turn
from .base import Headers, Rendered, WireContext, fault_message
from .batch import EmulatedBatchApi
from .bedrock_citations import answer_block, block_text
from .bedrock_stream import bedrock_stream, corrupt_frame, stream_error

__all__ = ["AwsCredentials", "BedrockAuth", "BedrockWire"]

_ERROR_NAMESPACE = "http://internal.amazon.com/coral/com.amazon.bedrock/"
CONVERSE_ROUTE = re.compile(r"^/model/([^/]+)/(converse|converse-stream)$")
_STOP_REASONS = {
    "length": "max_tokens",
    "content_filter": "content_filtered",
    "refusal": "content_filtered",
}
_IMAGE_FORMATS = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}
_DOCUMENT_FORMATS = {"pdf": "application/pdf", "txt": "text/plain"}
_IMAGE_MAX = 3_932_160  # 3.75 MB of bytes
_DOCUMENT_MAX = 4_718_592  # 4.5 MB
_MAX_CACHE_POINTS = 4
_TOOL_CHOICE_MODELS = re.compile(r"anthropic\.claude|mistral\.mistral-large|amazon\.nova")
# Claude 4 and later answer on demand only through a cross-region inference profile.
_PROFILE_ONLY = re.compile(r"^anthropic\.claude-(sonnet|opus|haiku)-4")
_SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service "
    "documentation for details."
)
_INVALID_TOKEN = "The security token included in the request is invalid."
_CLOCK_SKEW = datetime.timedelta(minutes=5)


class BedrockWire:
    """Converse's `output.message.content` blocks, `stopReason`, `usage`, and errors
    typed by `x-amzn-ErrorType` with a `{"message"}` body."""

    provider: Provider = "bedrock"

    def headers(self, ctx: WireContext) -> Headers:
        return {"content-type": "application/json", "x-amzn-requestid": str(uuid.uuid4())}

    base_path = ""
    batches: EmulatedBatchApi | None = None  # Bedrock's batch inference is not emulated

    def own_route(self, raw: RawRequest) -> HostRoute | None:
        match = CONVERSE_ROUTE.match(raw.path)
        if match is None:
            return None
        model, operation = match.groups()
        return HostRoute(self.provider, unquote(model), stream=operation == "converse-stream")

    def stray_not_found(self, raw: RawRequest, routed: bool, ctx: WireContext) -> Rendered | None:
        if routed or raw.path.startswith("/model/"):
            return self.render_not_found(f"Unknown operation: {raw.path}", ctx)
        return None

    def stream_headers(self) -> Headers:
        return {"content-type": "application/vnd.amazon.eventstream"}

    def render_stream(
        self, body: dict[str, Any], ctx: WireContext, size: int, turn: Turn
    ) -> list[bytes]:
        return bedrock_stream(body, ctx, size, turn)

    def stream_error(self, fault: Fault, ctx: WireContext) -> list[bytes]:
        return stream_error(fault)

    def stream_event(self, value: Any) -> bytes:
        return event_frame("messageStart", value)

    def malformed_event(self, event: bytes) -> bytes:
        return corrupt_frame(event)

    def render_turn(self, turn: Turn, ctx: WireContext) -> Rendered:
        content = self._reasoning(turn, ctx)
        thought = bool(content)
        if turn.content is not None and turn.finish != "refusal":  # Converse has no refusal:
            # the model's words are filtered out
            content.append(answer_block(ctx.body, turn.content))
        calls = [
            {
                "toolUse": {
                    "toolUseId": call.id or f"tooluse_{ctx.ids.alnum(22)}",
                    "name": call.name,
                    "input": call.arguments,
                }
            }
            for call in turn.calls
        ]
        content.extend(calls)
        if ctx.ledger is not None:
            for call in calls:  # with thinking, the next request must start the turn with it
                ctx.ledger.remember(f"bedrock:thought:{call['toolUse']['toolUseId']}", thought)
        usage = turn.usage
        fresh = max(0, usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens)
        counts = {
            "inputTokens": fresh,
            "outputTokens": usage.output_tokens,
            "totalTokens": fresh + usage.output_tokens,
            "cacheReadInputTokens": usage.cached_tokens,
            "cacheWriteInputTokens": usage.cache_write_tokens,
        }
        body = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": _STOP_REASONS.get(turn.finish, "tool_use" if turn.calls else "end_turn"),
            "usage": counts,
            "metrics": {"latencyMs": 120},
        }
        return Rendered(200, self.headers(ctx), dump(body))

    def _reasoning(self, turn: Turn, ctx: WireContext) -> list[dict[str, Any]]:
        """Signed reasoning blocks, first, when the request turns Claude's thinking on."""
        fields = as_object(ctx.body.get("additionalModelRequestFields"))
        if as_object(fields.get("thinking")).get("type") != "enabled":
            return []
        blocks: list[dict[str, Any]] = []
        for thought in turn.thinking:
            if thought.redacted:
                blocks.append({"reasoningContent": {"redactedContent": seal(thought.text)}})
            else:
                text = {"text": thought.text, "signature": seal(thought.text)}
                blocks.append({"reasoningContent": {"reasoningText": text}})
        return blocks

    def error(self, ctx: WireContext, status: int, kind: str, message: str) -> Rendered:
        headers = self.headers(ctx)
        headers["x-amzn-errortype"] = f"{kind}:{_ERROR_NAMESPACE}"
        return Rendered(status, headers, dump({"message": message}))

    def render_not_found(self, message: str, ctx: WireContext) -> Rendered:
        return self.error(ctx, 404, "UnknownOperationException", message)

    def render_fault(self, fault: Fault, ctx: WireContext) -> Rendered:
        kind = fault.kind
        if kind == "wrong_shape":
            body = fault.body if fault.body is not None else {"metrics": {"latencyMs": 1}}
            return Rendered(200, self.headers(ctx), dump(body))
        status, error_type, text = _FAULTS.get(kind, _FAULTS["bad_request"])
        if kind == "server_error" and fault.status is not None:
            status = fault.status
        if kind == "bad_request" and fault.status is not None:
            status = fault.status
        if kind == "not_found":
            text = text.format(model=ctx.model)
        return self.error(ctx, status, error_type, fault_message(fault, text))

    def rate_headers(self, rate: RateSnapshot, now: float) -> Headers:
        return {}  # Bedrock sends no rate-limit headers

    def validate(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("messages"), list):
            return (
                "1 validation error detected: Value null at 'messages' failed to satisfy "
                "constraint: Member must not be null"
            )
        if "toolConfig" not in body and any(
            "toolUse" in block or "toolResult" in block
            for message in as_list(body.get("messages"))
            for block in _blocks(as_object(message))
        ):
            return (
                "The toolConfig field must be defined when using toolUse and toolResult "
                "content blocks."
            )
        points = sum(1 for block in _prompt_blocks(body) if "cachePoint" in block)
        if points > _MAX_CACHE_POINTS:
            return (
                f"The number of cache points in the request exceeds the maximum of "
                f"{_MAX_CACHE_POINTS}. Reduce the number of cache points and try again."
            )
        return None

    def check_model(self, model: str, body: dict[str, Any]) -> str | None:
        """The 400 for a model asked the wrong way: on demand without its inference
        profile, or a `toolChoice` it does not take."""
        if _PROFILE_ONLY.match(model):
            return (
                f"Invocation of model ID {model} with on-demand throughput isn\u2019t "
                "supported. Retry your request with the ID or ARN of an inference profile "
                "that contains this model."
            )
        choice = as_object(as_object(body.get("toolConfig")).get("toolChoice"))
        for kind in ("any", "tool"):
            if kind in choice and not _TOOL_CHOICE_MODELS.search(model):
                return (
                    f"This model doesn't support the toolConfig.toolChoice.{kind} field. "
                    f"Remove toolConfig.toolChoice.{kind} and try again."
                )
        return None

    def found_parts(self, body: dict[str, Any]) -> list[FoundPart]:
        found: list[FoundPart] = []
        for index, message in enumerate(as_list(body.get("messages"))):
            for position, raw in enumerate(as_list(as_object(message).get("content"))):
                block = as_object(raw)
                where = f"messages.{index}.content.{position}"
                result = block.get("toolResult")
                if isinstance(result, dict):
                    for inner, item in enumerate(as_list(as_object(result).get("content"))):
                        spot = f"{where}.toolResult.content.{inner}"
                        found.extend(_part(as_object(item), spot, in_tool_result=True))
                else:
                    found.extend(_part(block, where, in_tool_result=False))
        return found

    def refuse_part(self, part: FoundPart, data: bytes | None) -> Fault | None:
        if part.media_type is None:
            allowed = "png, jpeg, gif, webp" if part.kind == "image" else "pdf, txt, ..."
            return Fault.bad_request(
                f"1 validation error detected: Value at '{part.path}.{part.kind}.format' "
                f"failed to satisfy constraint: Member must satisfy enum value set: [{allowed}]"
            )
        if data is None:
            return Fault.bad_request(f"{part.path}: invalid base64 bytes (wink emulator)")
        limit = _IMAGE_MAX if part.kind == "image" else _DOCUMENT_MAX
        if len(data) > limit:
            what = "image" if part.kind == "image" else "document"
            return Fault.bad_request(
                f"The {what} at {part.path} exceeds the maximum size of {limit} bytes."
            )
        if part.kind == "image" and not looks_like(data, part.media_type):
            return Fault.bad_request("Could not process image")
        return None

    def cache_prefixes(self, body: dict[str, Any]) -> tuple[CachePrefix, ...]:
        """A prefix ends at each `cachePoint` block (system, then the messages)."""
        items: list[tuple[dict[str, Any], bool]] = []
        for block in _prompt_blocks(body):
            if "cachePoint" in block:
                if items:
                    items[-1] = (items[-1][0], True)
            else:
                items.append((block, False))
        return prefixes(items)

    def check_history(
        self, body: dict[str, Any], model: str, ledger: ReasoningLedger
    ) -> Fault | None:
        messages = [as_object(message) for message in as_list(body.get("messages"))]
        problem = _conversation(messages)
        if problem is not None:
            return Fault.bad_request(problem)
        for index, message in enumerate(messages):
            if message.get("role") == "assistant":
                problem = _altered_reasoning(index, _blocks(message))
                if problem is not None:
                    return Fault.bad_request(problem)
        thinking = as_object(as_object(body.get("additionalModelRequestFields")).get("thinking"))
        last = max(
            (i for i, message in enumerate(messages) if message.get("role") == "assistant"),
            default=None,
        )
        if last is None or thinking.get("type") != "enabled":
            return None
        blocks = _blocks(messages[last])
        thought = any(
            "toolUse" in block
            and ledger.recall(f"bedrock:thought:{as_object(block['toolUse']).get('toolUseId')}")
            is not False
            for block in blocks
        )
        if thought and not (blocks and "reasoningContent" in blocks[0]):
            first = next(iter(blocks[0]), "nothing") if blocks else "nothing"
            return Fault.bad_request(
                f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{'tool_use' if first == 'toolUse' else first}`. When `thinking` "
                "is enabled, a final `assistant` message must start with a thinking block."
            )
        return None

    def instructions(self, body: dict[str, Any]) -> str | None:
        texts = [as_str(as_object(block).get("text")) for block in as_list(body.get("system"))]
        joined = "\n\n".join(text for text in texts if text)
        return joined or None

    def history(self, body: dict[str, Any]) -> tuple[HistoryEntry, ...]:
        names: dict[str, str] = {}
        entries: list[HistoryEntry] = []
        for raw in as_list(body.get("messages")):
            message = as_object(raw)
            blocks = _blocks(message)
            if message.get("role") == "assistant":
                texts = [text for text in map(block_text, blocks) if text is not None]
                if texts:
                    entries.append(HistoryEntry("assistant", "".join(texts)))
                for block in blocks:
                    used = as_object(block.get("toolUse"))
                    call_id, name = as_str(used.get("toolUseId")), as_str(used.get("name"))
                    if call_id is not None and name is not None:
                        names[call_id] = name
                        text = arguments_text(used.get("input"))
                        entries.append(HistoryEntry("call", text, name, call_id))
                continue
            for block in blocks:
                if "text" in block:
                    entries.append(HistoryEntry("user", as_str(block.get("text")) or ""))
                elif "toolResult" in block:
                    result = as_object(block["toolResult"])
                    call_id = as_str(result.get("toolUseId"))
                    name = names.get(call_id) if call_id is not None else None
                    text = content_text(result.get("content"))
                    failed = result.get("status") == "error"
                    entries.append(HistoryEntry("result", text, name, call_id, failed))
        return tuple(entries)

    def tool_results(self, body: dict[str, Any]) -> tuple[ToolResultView, ...]:
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        for raw in as_list(body.get("messages")):
            for block in _blocks(as_object(raw)):
                used = as_object(block.get("toolUse"))
                call_id, name = as_str(used.get("toolUseId")), as_str(used.get("name"))
                if call_id is not None and name is not None:
                    names[call_id] = name
                result = block.get("toolResult")
                if isinstance(result, dict):
                    fields = as_object(result)
                    call_id = as_str(fields.get("toolUseId"))
                    name = names.get(call_id) if call_id is not None else None
                    failed = fields.get("status") == "error"
                    results.append(ToolResultView(call_id, name, fields.get("content"), failed))
        return tuple(results)

    def tool_names(self, body: dict[str, Any]) -> tuple[str, ...]:
        tools = as_list(as_object(body.get("toolConfig")).get("tools"))
        names = (as_str(as_object(as_object(tool).get("toolSpec")).get("name")) for tool in tools)
        return tuple(name for name in names if name is not None)


# fault kind -> (status, x-amzn-ErrorType, Bedrock's words)
_FAULTS: dict[str, tuple[int, str, str]] = {
    "rate_limit": (
        429,
        "ThrottlingException",
        "Too many requests, please wait before trying again.",
    ),
    "quota_exhausted": (
        400,
        "ServiceQuotaExceededException",
        "Your request exceeds the service quota for your account. You can view your "
        "quotas at Viewing service quotas.",
    ),
    "overloaded": (
        503,
        "ServiceUnavailableException",
        "Bedrock is unable to process your request.",
    ),
    "server_error": (
        500,
        "InternalServerException",
        "The system encountered an unexpected error during processing. Try your request again.",
    ),
    "unauthorized": (403, "UnrecognizedClientException", _INVALID_TOKEN),
    "permission_denied": (
        403,
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    ),
    "not_found": (
        404,
        "ResourceNotFoundException",
        "Could not resolve the foundation model from the provided model identifier: {model}",
    ),
    "context_window_exceeded": (
        400,
        "ValidationException",
        "Input is too long for requested model.",
    ),
    "bad_request": (400, "ValidationException", "Malformed input request, please reformat."),
}


# --- authentication


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """The credentials the emulated account knows (what a test signs with)."""

    access_key: str
    secret_key: str
    token: str | None = None

    def __post_init__(self) -> None:
        for name in ("access_key", "secret_key"):
            value: object = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigurationError(
                    f"AwsCredentials({name}=...) takes a non-empty str", option=name
                )
        if self.token is not None and not isinstance(self.token, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                "AwsCredentials(token=...) takes a str or None", option="token"
            )

    def __repr__(self) -> str:
        return f"AwsCredentials(access_key={self.access_key[:4]}...)"


class BedrockAuth:
    """What Bedrock checks before anything else: a SigV4 signature made with the known
    credentials over this very request (recomputed with botocore), or a known Bedrock
    API key as a bearer. `credentials` None and `api_keys` empty: any signature or key
    passes, as long as there is one."""

    __slots__ = ("_api_keys", "_credentials")

    def __init__(self, credentials: AwsCredentials | None, api_keys: tuple[str, ...]) -> None:
        self._credentials = credentials
        self._api_keys = api_keys

    def guards(self, provider: Provider | None) -> bool:
        """Whether a request routed to `provider`'s wire must pass this check."""
        return provider == BedrockWire.provider

    def check(self, raw: RawRequest) -> Fault | None:
        header = raw.headers.get("authorization", "")
        if header.startswith("Bearer "):
            if self._api_keys and header[7:] not in self._api_keys:
                return _denied("UnrecognizedClientException", _INVALID_TOKEN)
            return None
        if not header.startswith("AWS4-HMAC-SHA256 "):
            return _denied("MissingAuthenticationTokenException", "Missing Authentication Token")
        if self._credentials is None:
            return None
        return _signature_problem(raw, header, self._credentials)


def _denied(error_type: str, message: str) -> Fault:
    return Fault.http(
        403,
        {"message": message},
        headers={"x-amzn-errortype": f"{error_type}:{_ERROR_NAMESPACE}"},
    )


def _signature_problem(raw: RawRequest, header: str, known: AwsCredentials) -> Fault | None:
    """Bedrock's 403 when the signature is not the one these credentials make."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    fields = dict(
        part.strip().split("=", 1) for part in header[len("AWS4-HMAC-SHA256 ") :].split(",")
    )
    scope = fields.get("Credential", "").split("/")
    if len(scope) != 5 or scope[0] != known.access_key:
        return _denied("UnrecognizedClientException", _INVALID_TOKEN)
    if known.token is not None and raw.headers.get("x-amz-security-token") != known.token:
        return _denied("UnrecognizedClientException", _INVALID_TOKEN)
    stamp = raw.headers.get("x-amz-date", "")
    try:
        signed_at = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return _denied("IncompleteSignatureException", "Date must be in ISO-8601 format")
    if abs(datetime.datetime.now(datetime.UTC) - signed_at) > _CLOCK_SKEW:
        return _denied("InvalidSignatureException", f"Signature expired: {stamp} is now earlier")
    names = fields.get("SignedHeaders", "").split(";")
    headers = {name: raw.headers.get(name, "") for name in names if name != "host"}
    query = f"?{raw.query}" if raw.query else ""
    url = f"http://{raw.headers.get('host', '')}{raw.path}{query}"
    request: Any = AWSRequest(method=raw.method, url=url, data=raw.body, headers=headers)
    request.context["timestamp"] = stamp
    signer: Any = SigV4Auth(
        Credentials(known.access_key, known.secret_key, known.token), scope[3], scope[2]
    )
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != fields.get("Signature"):
        return _denied("InvalidSignatureException", _SIGNATURE_MISMATCH)
    return None


# --- the request's parts


def _conversation(messages: list[dict[str, Any]]) -> str | None:
    """Converse's rules: it starts with a user turn, roles alternate, every toolUse is
    answered by a toolResult in the next message and every toolResult answers one."""
    if messages and messages[0].get("role") != "user":
        return (
            "A conversation must start with a user message. Try again with a conversation "
            "that starts with a user message."
        )
    previous: list[str] = []
    for index, message in enumerate(messages):
        if index and message.get("role") == messages[index - 1].get("role"):
            return (
                "A conversation must alternate between user and assistant roles. Make sure "
                "the conversation alternates between user and assistant roles and try again."
            )
        blocks = _blocks(message)
        answered = [
            as_str(as_object(block["toolResult"]).get("toolUseId"))
            for block in blocks
            if "toolResult" in block
        ]
        if len(answered) > len(previous) or any(call not in previous for call in answered):
            return (
                f"The number of toolResult blocks at messages.{index}.content exceeds the "
                "number of toolUse blocks of previous turn."
            )
        if previous and len(answered) < len(previous):
            return (
                f"Expected toolResult blocks at messages.{index}.content for the following "
                f"Ids: {', '.join(call for call in previous if call not in answered)}"
            )
        previous = [
            as_str(as_object(block["toolUse"]).get("toolUseId")) or ""
            for block in blocks
            if "toolUse" in block
        ]
    if previous:
        return (
            "Expected toolResult blocks after the last toolUse blocks for the following Ids: "
            + ", ".join(previous)
        )
    return None


def _altered_reasoning(index: int, blocks: list[dict[str, Any]]) -> str | None:
    for position, block in enumerate(blocks):
        reasoning = as_object(block.get("reasoningContent"))
        text = as_object(reasoning.get("reasoningText"))
        if text and opens(text.get("signature"), text.get("text")) is False:
            return f"messages.{index}.content.{position}: Invalid `signature` in `thinking` block"
        if "redactedContent" in reasoning and intact(reasoning["redactedContent"]) is False:
            return (
                f"messages.{index}.content.{position}: Invalid `data` in `redacted_thinking` block"
            )
    return None


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [as_object(block) for block in as_list(message.get("content"))]


def _prompt_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block of the prompt in cache order: tools, system, then the messages."""
    config = as_object(body.get("toolConfig"))
    blocks = [as_object(tool) for tool in as_list(config.get("tools"))]
    blocks += [as_object(block) for block in as_list(body.get("system"))]
    for message in as_list(body.get("messages")):
        role = str(as_object(message).get("role"))
        for block in as_list(as_object(message).get("content")):
            item = as_object(block)
            blocks.append(item if "cachePoint" in item else {**item, "role": role})
    return blocks


def _part(block: dict[str, Any], path: str, *, in_tool_result: bool) -> list[FoundPart]:
    """An `image` or `document` block as a found part (none for any other block)."""
    kinds: tuple[tuple[PartKind, dict[str, str]], ...] = (
        ("image", _IMAGE_FORMATS),
        ("document", _DOCUMENT_FORMATS),
    )
    for kind, formats in kinds:
        if kind in block:
            item = as_object(block[kind])
            media_type = formats.get(as_str(item.get("format")) or "")
            encoded = as_str(as_object(item.get("source")).get("bytes"))
            if encoded is None:  # an S3 location: not emulated
                encoded = base64.b64encode(b"").decode()
            return [FoundPart(kind, path, media_type, encoded, None, in_tool_result)]
    return []
