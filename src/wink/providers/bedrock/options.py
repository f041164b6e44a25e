"""Bedrock's own options (no SDK imported: `create_adapter`'s signature names them)."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["BedrockOptions"]


class BedrockOptions(TypedDict, total=False):
    """Bedrock's own option: `region` (else `AWS_REGION`, `AWS_DEFAULT_REGION`, the AWS
    config's region; docs/hosts/bedrock.md)."""

    region: str | None
