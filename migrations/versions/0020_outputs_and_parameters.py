"""Reserved for: outputs and parameters (issue 16). Empty until that work needs a schema change.

Revision ID: 0020
Revises: 0019
"""
revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
