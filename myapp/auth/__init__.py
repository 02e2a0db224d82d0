"""Who is asking and what they may do: sign-in and its limits, passwords, callers, permissions (FAB's security
manager), run tokens, the platform's JWT claims and sealed secrets.
"""
