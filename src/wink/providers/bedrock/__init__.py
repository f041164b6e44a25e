"""AWS Bedrock's Converse API, spoken by wink itself over httpx2 (no boto3 in threads).

The wire format (`wire.Converse`): `converse` translates, `stream` decodes ConverseStream's
event-stream frames, `errors` reads Bedrock's error types, `http` sends. The host
(`hosts.Bedrock`, `create_adapter("bedrock:<model id or inference profile>")`): the
region's endpoint, and `auth` (SigV4 over botocore's credential chain, or a Bedrock API
key as a bearer). Wire facts are in docs/hosts/bedrock.md.

Nothing is imported here: `options` is read by `create_adapter`'s signature without
httpx2 or botocore installed.
"""
