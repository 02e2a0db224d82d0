"""What arrives: reusable input fields and validators, and limits on parsed JSON and YAML."""
