"""What a platform process loads when it starts: the IRI grammar jsonschema would build on import (1.8 CPU s)
waits until an IRI is checked, and IRIs are checked as before (myapp/__init__.py)."""
from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import myapp.cli
import jsonschema
assert "rfc3987_syntax.syntax_helpers" not in sys.modules, "the IRI grammar was built at start"
checker = jsonschema.FormatChecker()
answers = [checker.conforms("http://例え.jp/パス", "iri"), checker.conforms("not an iri", "iri"),
           checker.conforms("a b", "iri-reference"), checker.conforms("/relative", "iri-reference")]
assert answers == [True, False, False, True], answers
assert "rfc3987_syntax.syntax_helpers" in sys.modules
import rfc3987_syntax
assert rfc3987_syntax.is_valid_syntax("iri", "urn:isbn:0451450523")
print("ok")
"""


def test_the_iri_grammar_is_built_when_first_used_and_checks_as_before():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
