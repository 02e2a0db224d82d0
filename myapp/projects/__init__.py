"""Projects: caps on what one holds."""
