"""Google Vertex AI: Gemini (`vertex:`) and Claude (`vertex-anthropic:`) in a Google Cloud
project, at one location (docs/hosts/vertex.md).

A request goes to `https://<location>-aiplatform.googleapis.com` (`global`:
`aiplatform.googleapis.com`; the multi-regions `us` and `eu`:
`aiplatform.<region>.rep.googleapis.com`), on a path that names the project, the location,
the publisher and the model. Auth is a Google OAuth2 access token (`Authorization: Bearer`)
from google-auth credentials: the application default ones, a service-account file, or an
object the caller made; the token is refreshed on a worker thread before it expires.
Gemini's wire is wink's own Gemini translator; Claude's is the Anthropic one, its model in
the URL and `anthropic_version` in the body. `gemini` and `claude` hold the two hosts,
`auth` the credentials, `place` the URLs and the 404 that names a location.
"""
