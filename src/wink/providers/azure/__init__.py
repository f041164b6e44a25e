"""Azure OpenAI: OpenAI's two wire formats on a resource of one's own
(`https://<resource>.openai.azure.com`), by deployment name (docs/hosts/azure.md).

The v1 endpoint (`/openai/v1/`) takes OpenAI's paths and bodies with the deployment as
the model; a caller who passes `api_version=` gets the legacy URLs instead
(`/openai/deployments/<deployment>/chat/completions?api-version=...`). Auth is the
`api-key` header, or an Entra ID bearer token from a token provider (such as
`azure.identity.get_bearer_token_provider(...)`), asked again before it expires.
"""
