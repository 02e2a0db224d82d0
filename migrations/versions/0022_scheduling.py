"""Reserved for: scheduling (issue 13). Empty until that work needs a schema change.

Revision ID: 0022
Revises: 0021
"""
revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
