"""Every feature's tables on one metadata: importing this module registers them all."""

from kindling.accounts import models as _accounts  # noqa: F401
from kindling.accounts.scim import models as _directory  # noqa: F401
from kindling.branding import models as _branding  # noqa: F401
from kindling.consulting import models as _consulting  # noqa: F401
from kindling.donations import models as _donations  # noqa: F401
from kindling.evidence import models as _evidence  # noqa: F401
from kindling.idempotency import models as _idempotency  # noqa: F401
from kindling.kindness import models as _kindness  # noqa: F401
from kindling.kindness import verification_models as _verification  # noqa: F401
from kindling.outbox import models as _outbox  # noqa: F401
from kindling.platform import inbound_events as _inbound_events  # noqa: F401
from kindling.platform.base import Base
from kindling.privacy import models as _privacy  # noqa: F401
from kindling.rates import models as _rates  # noqa: F401
from kindling.slack import models as _slack  # noqa: F401
from kindling.volunteering import models as _volunteering  # noqa: F401
from kindling.wellbeing import models as _wellbeing  # noqa: F401

metadata = Base.metadata
