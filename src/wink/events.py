"""What an evaluation's session records and what a stream yields:
`from wink.events import ...` (docs/sessions.md, docs/streaming.md).

The same classes as `from wink import ...`.
"""

from .core.foundation.events import *  # noqa: F403
from .core.foundation.events import __all__ as __all__
