"""Every exception wink raises, and `ThrottleDetails`: `from wink.errors import ...`.

The same classes as `from wink import ...`; the tree is documented in
`wink.core.foundation.errors` and docs/errors.md.
"""

from .core.foundation.errors import *  # noqa: F403
from .core.foundation.errors import __all__ as __all__
