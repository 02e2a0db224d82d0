"""Reserved for: run controller (issue 12). Empty until that work needs a schema change.

Revision ID: 0023
Revises: 0022
"""
revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
