"""One streamed answer in a fresh process, for its peak RSS:
`python -m benchmarks._stream_child PROVIDER VARIANT BASE_URL`.

Prints `{"peak_mib": ..., "chars": ..., "baseline_mib": ...}`: the process's peak resident
set after the stream, the answer's length, and the peak before it (imports, clients) so
the stream's own share can be told apart. The peak is Linux's `VmHWM` (`ru_maxrss` would
carry the parent's peak over `fork` + `exec`).
"""

from __future__ import annotations

import asyncio
import json
import sys

from ._common import peak_mib


def main() -> None:
    provider, variant, base_url = sys.argv[1:4]
    from . import raw_stream

    if variant == "raw":
        client = raw_stream.sdk_client(provider, base_url, sync=True)
        baseline = peak_mib()
        _, text = raw_stream.RAW_SYNC[provider](client)
    elif variant == "wink":
        adapter = raw_stream.wink_adapter(provider, base_url)
        baseline = peak_mib()
        _, text = raw_stream.wink_sync(adapter)
    else:
        agent = raw_stream.pydantic_ai_agent(provider, base_url)
        if agent is None:
            print(json.dumps({"skipped": "pydantic-ai is not installed"}))
            return
        baseline = peak_mib()
        _, text = asyncio.run(raw_stream.pydantic_ai_async(agent))
    print(json.dumps({"peak_mib": peak_mib(), "chars": len(text), "baseline_mib": baseline}))


if __name__ == "__main__":
    main()
