"""MyApp ML platform. `myapp.app.create_app` builds the web app; `myapp.cli` is the command."""
