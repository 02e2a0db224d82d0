"""State shared by every process of the platform: the embedded broker, generations, limits kept in SQL or Redis,
and reconcile requests.
"""
