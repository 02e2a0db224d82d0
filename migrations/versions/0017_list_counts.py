"""Reserved for: list counts (issue 12). Empty until that work needs a schema change.

Revision ID: 0017
Revises: 0016
"""
revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
