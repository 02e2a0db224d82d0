"""Admission per resource group, the SQL side of the scheduler's one decision: the group's state read from the
rows (`group_state`), the attempt or notebook admitted or told why not (`gate`), what the status page shows
(`report`), and capacity against use (`usage`). The decision itself is myapp.scheduler's, pure: no database,
no Flask. See docs/scheduling.md.
"""
