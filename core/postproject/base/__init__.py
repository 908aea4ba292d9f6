"""What every area of the API shares: the production handle, one edit's state, leases, file facts."""

from __future__ import annotations
