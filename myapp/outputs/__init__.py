"""Task outputs: what a template declares (`declarations`, pure), where they are kept (`store`, `s3`), read off a
cluster's claim (`reader`, `fetch`), and referred to between tasks (`refs`). See docs/outputs.md.
"""
