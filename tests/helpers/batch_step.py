"""One step of a batch job in a process of its own (`test_batch_resumes_in_new_processes`):
`python -m tests.helpers.batch_step BASE_URL submit|advance|results JOB_FILE`.

The job lives in JOB_FILE as its JSON between steps; the items are rebuilt here, as a new
process of the user's would rebuild its prompts. Prints what the test checks, as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.helpers import batches
from tests.helpers.adapters import KEY, NO_RETRY
from wink import BatchJob, create_adapter


def main(base_url: str, action: str, saved: Path) -> None:
    adapter = create_adapter(
        "anthropic:claude-sonnet-4-6", api_key=KEY, base_url=base_url, retry_policy=NO_RETRY
    )
    if action == "submit":
        job = adapter.submit_batch(batches.items())
    else:
        job = BatchJob.from_json(saved.read_text(), items=batches.items())
    if action == "advance":
        job = adapter.advance_batch(job)
    if action == "results":
        found = [repr(batches.summary(result)) for result in adapter.batch_results(job)]
        print(json.dumps({"summaries": found}))
        return
    saved.write_text(job.to_json())
    print(json.dumps({"finished": job.finished}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
