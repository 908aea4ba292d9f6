"""PostProject: production knowledge for media post-production.

A production (a SQLite ``.pproj`` file, or a schema in a PostgreSQL database) records
assets, their representations, the activities that produced them (provenance), typed
metadata and jobs, and numbers every change in a gap-free revision feed. See the README for a tour.
"""

from __future__ import annotations

from postproject._version import __version__
from postproject.areas.search import FailureGroup
from postproject.base.leases import ClaimedWork, InputChangedError, JobLease, LeaseState
from postproject.knowledge import ArtifactKnowledge, ArtifactState, StalePage
from postproject.knowledge.provenance import ProvenanceGraph
from postproject.knowledge.regeneration import (
    DownstreamRegeneration,
    RegenerationPlan,
    Reproducibility,
    SupersededInput,
    Unplannable,
)
from postproject.model.access import ApiRole, ApiToken, NewApiToken, RecordedReply
from postproject.model.activities import (
    Activity,
    ActivityEdge,
    ActivitySpec,
    EdgeSnapshot,
)
from postproject.model.assets import (
    Asset,
    Availability,
    Fingerprint,
    MediaRoot,
    Representation,
    RepresentationKind,
)
from postproject.model.clock import Clock, FakeClock, SystemClock
from postproject.model.errors import (
    AlreadyExistsError,
    ConflictError,
    ErrorCode,
    InternalError,
    InvalidArgumentError,
    IoError,
    MigrationError,
    NotFoundError,
    PostProjectError,
    Reason,
    StorageError,
    UnsupportedError,
)
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import (
    ActivityId,
    AssetId,
    JobId,
    MediaRootId,
    ProductionId,
    RepresentationId,
    RevisionId,
)
from postproject.model.jobs import BoundInput, Job, JobClaim, JobCompletion, JobFailure, JobOutput, JobRequest
from postproject.model.lifecycle import TRANSITIONS, Action, JobState, Transition
from postproject.model.metadata import EXECUTOR_VOCABULARY, Assertion, Property
from postproject.model.pages import Page
from postproject.model.pending import PendingExplanation
from postproject.model.progress import AttemptLog, JobProgress
from postproject.model.refs import (
    ActivityRef,
    AssetRef,
    JobRef,
    ObjectRef,
    RepresentationRef,
)
from postproject.model.revisions import (
    Changes,
    CommitReceipt,
    JobHistoryEntry,
    Revision,
    RevisionEvent,
    RevisionSummary,
)
from postproject.model.values import (
    BoolValue,
    BytesValue,
    DecimalValue,
    I64Value,
    LangStringValue,
    ListValue,
    MetadataValue,
    RationalValue,
    ReferenceValue,
    StringValue,
    StructValue,
    TimestampValue,
    U64Value,
    UriValue,
)
from postproject.production import Production
from postproject.transaction import Transaction

__all__ = [
    "EXECUTOR_VOCABULARY",
    "TRANSITIONS",
    "Action",
    "Activity",
    "ActivityEdge",
    "ActivityId",
    "ActivityRef",
    "ActivitySpec",
    "AgentIdentity",
    "AlreadyExistsError",
    "ApiRole",
    "ApiToken",
    "ArtifactKnowledge",
    "ArtifactState",
    "Assertion",
    "Asset",
    "AssetId",
    "AssetRef",
    "AttemptLog",
    "Availability",
    "BoolValue",
    "BoundInput",
    "BytesValue",
    "Changes",
    "ClaimedWork",
    "Clock",
    "CommitReceipt",
    "ConflictError",
    "DecimalValue",
    "DownstreamRegeneration",
    "EdgeSnapshot",
    "ErrorCode",
    "FailureGroup",
    "FakeClock",
    "Fingerprint",
    "I64Value",
    "InputChangedError",
    "InternalError",
    "InvalidArgumentError",
    "IoError",
    "Job",
    "JobClaim",
    "JobCompletion",
    "JobFailure",
    "JobHistoryEntry",
    "JobId",
    "JobLease",
    "JobOutput",
    "JobProgress",
    "JobRef",
    "JobRequest",
    "JobState",
    "LangStringValue",
    "LeaseState",
    "ListValue",
    "MediaRoot",
    "MediaRootId",
    "MetadataValue",
    "MigrationError",
    "NewApiToken",
    "NotFoundError",
    "ObjectRef",
    "Page",
    "PendingExplanation",
    "PostProjectError",
    "Production",
    "ProductionId",
    "Property",
    "ProvenanceGraph",
    "RationalValue",
    "Reason",
    "RecordedReply",
    "ReferenceValue",
    "RegenerationPlan",
    "Representation",
    "RepresentationId",
    "RepresentationKind",
    "RepresentationRef",
    "Reproducibility",
    "Revision",
    "RevisionEvent",
    "RevisionId",
    "RevisionSummary",
    "StalePage",
    "StorageError",
    "StringValue",
    "StructValue",
    "SupersededInput",
    "SystemClock",
    "TimestampValue",
    "ToolIdentity",
    "Transaction",
    "Transition",
    "U64Value",
    "Unplannable",
    "UnsupportedError",
    "UriValue",
    "__version__",
]
