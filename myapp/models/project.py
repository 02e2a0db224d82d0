"""Projects and their members: the unit of ownership and permission."""
from __future__ import annotations

import enum

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import IdMixin, TimestampMixin, enum_column


class ProjectRole(str, enum.Enum):
    """viewer reads; developer also edits and runs; owner also manages members."""

    VIEWER = "viewer"
    DEVELOPER = "developer"
    OWNER = "owner"

    @property
    def rank(self) -> int:
        return {"viewer": 1, "developer": 2, "owner": 3}[self.value]

    def allows(self, needed: ProjectRole) -> bool:
        return self.rank >= needed.rank


class Project(IdMixin, TimestampMixin, Model):
    __tablename__ = "project"

    name: Mapped[str] = mapped_column(sa.String(63), unique=True, nullable=False)
    description: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    # Kubernetes namespace jobs of this project run in; DNS-1123 label, never a reserved one
    # (myapp.rendering.context.reserved_namespace: the API refuses it, rendering again).
    namespace: Mapped[str] = mapped_column(sa.String(63), unique=True, nullable=False)
    # Admin-set (myapp/api/admin.py): at most this many runs of the project run at once, the rest
    # wait queued (myapp/pipelines/scheduling.py); None: no limit.
    max_running_runs: Mapped[int | None] = mapped_column(sa.Integer)
    # Seconds without kernel or terminal activity after which its notebooks are stopped (work folder kept;
    # myapp/notebooks/activity.py); None: the platform's MYAPP_NOTEBOOK_CULL_SECONDS, 0: never.
    notebook_idle_timeout: Mapped[int | None] = mapped_column(sa.Integer)

    members: Mapped[list[ProjectMember]] = relationship(
        back_populates="project", cascade="all, delete-orphan", passive_deletes=True
    )

    @property
    def service_account(self) -> str:
        """Jobs run under the project's own service account, never a cluster-wide one."""
        return f"myapp-{self.name}"[:63]


class ProjectMember(IdMixin, TimestampMixin, Model):
    __tablename__ = "project_member"
    __table_args__ = (sa.UniqueConstraint("project_id", "user_id"),)

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    user_id: Mapped[int] = mapped_column(
        sa.ForeignKey("ab_user.id", ondelete="CASCADE"), nullable=False, index=True
    )
    role: Mapped[ProjectRole] = mapped_column(
        enum_column(ProjectRole, "project_role"), nullable=False
    )

    project: Mapped[Project] = relationship(back_populates="members")
    user = relationship("User", lazy="joined")
