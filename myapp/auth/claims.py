"""The platform's own JWT claims (a module of constants, so security, logins and run tokens share them
without importing one another)."""

# Claims of a run's platform API token (myapp.auth.run_tokens): the run and its project.
RUN_CLAIM = "myapp_run"
PROJECT_CLAIM = "myapp_project"
# When a JWT was issued, to the microsecond (`iat` is whole seconds): tokens issued before their user's
# password change or reset are refused (myapp.auth.logins.token_revoked), those issued after are not.
ISSUED_CLAIM = "myapp_iat"
